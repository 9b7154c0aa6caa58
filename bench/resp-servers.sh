# Sourced by bench/resp-vs-redis.sh, bench/resp-paired.sh and bench/rank-fresh.sh: starts
# Redis (appendonly yes, appendfsync everysec) and Photofinish (--fsync everysec, the
# embedded store, the RESP door) on free ports under a temporary WORK dir, and loads MEMBERS
# members, named as redis-benchmark names them (m:000000123456), into the ZSET `lb` and the
# board `lb` (UPDATE incr). The sourcing script sets BIN, MEMBERS, WORKERS_ARG (serve flags,
# an array, may be empty), SERVER_PIN (a command prefix, an array, may be empty) and, if it
# pins redis-benchmark, CLIENT_PIN (the same); PF_STORAGE=redis serves Photofinish on that
# same Redis (its Redis backend, docs/redis-layout.md) instead of the embedded store, with
# PF_REDIS_READS (default fresh) as its --redis-reads. This sets WORK, RPORT/RPID,
# PPORT/PPID_PF, the EXIT trap, waits until both servers are quiet after the load (settle),
# and defines serve_photofinish, load, settle, cpu_ticks and ticks_of (the sum over pids),
# TICK, and rate (one timed redis-benchmark run).
[ -x "$BIN" ] || cargo build --release -p photofinish
WORK=$(mktemp -d)
cleanup() { kill "${RPID:-}" "${PPID_PF:-}" "${PPID_B:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
RPORT=$(free_port)
PPORT=$(free_port)
mkdir -p "$WORK/redis"
"${SERVER_PIN[@]}" redis-server --port "$RPORT" --dir "$WORK/redis" --appendonly yes \
    --appendfsync everysec --save '' --daemonize no >"$WORK/redis.log" 2>&1 &
RPID=$!
until_answers() { # until_answers PORT: waits (up to 10 s) until a server answers PING there
    for _ in $(seq 100); do
        redis-cli -p "$1" PING >/dev/null 2>&1 && return
        sleep 0.1
    done
}
serve_photofinish() { # serve_photofinish NAME PORT [VAR=VALUE…]: $BIN in the environment given,
    # data and logs under $WORK/NAME, until it answers; sets STARTED to its pid
    local name=$1 port=$2
    shift 2
    mkdir -p "$WORK/$name"
    local store=(--data-dir "$WORK/$name")
    if [ "${PF_STORAGE:-}" = redis ]; then
        store=(--storage "redis://127.0.0.1:$RPORT" --redis-namespace "$name" --redis-reads "${PF_REDIS_READS:-fresh}")
    fi
    env "$@" "${SERVER_PIN[@]}" "$BIN" serve --listen 127.0.0.1:0 --resp-listen "127.0.0.1:$port" \
        --fsync everysec "${WORKERS_ARG[@]}" "${store[@]}" >"$WORK/$name.out" 2>"$WORK/$name.log" &
    STARTED=$!
    until_answers "$port"
}
until_answers "$RPORT"
serve_photofinish pf "$PPORT"
PPID_PF=$STARTED

# One command per member, as RESP, piped in with redis-cli --pipe.
load() { # load PORT COMMAND KEY (ZADD: score first; LB.SET: member first)
    seq 0 $((MEMBERS - 1)) | awk -v cmd="$2" -v key="$3" '{
        m = sprintf("m:%012d", $1)
        if (cmd == "ZADD") { a = $1; b = m } else { a = m; b = $1 }
        printf "*4\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n",
            length(cmd), cmd, length(key), key, length(a), a, length(b), b
    }' | redis-cli -p "$1" --pipe >/dev/null
}
redis-cli -p "$PPORT" LB.CREATE lb UPDATE incr >/dev/null
load "$RPORT" ZADD lb
load "$PPORT" LB.SET lb

# utime + stime, and the reaped children's (Redis's AOF rewrite runs in a forked child).
cpu_ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"; }
ticks_of() { local t=0 p; for p in "$@"; do t=$((t + $(cpu_ticks "$p"))); done; echo "$t"; }
TICK=$(getconf CLK_TCK)
[ -n "${CLIENT_PIN+set}" ] || CLIENT_PIN=()

# rate PORT P N "PID…" COMMAND…: one redis-benchmark run of COMMAND against PORT (50
# clients, members from -r 1000000, N requests, -P P); prints "<ops/s> <µs an op>", the
# CPU being that of the processes PID… (a space-separated list) over the run.
rate() {
    local port=$1 p=$2 n=$3 pids=$4
    shift 4
    local before after rps
    # shellcheck disable=SC2086 # the pids split into words
    before=$(ticks_of $pids)
    rps=$("${CLIENT_PIN[@]}" redis-benchmark -p "$port" -c 50 -n "$n" -r 1000000 -P "$p" --csv "$@" 2>/dev/null |
        awk -F'","' 'NR == 2 {print $2}')
    # shellcheck disable=SC2086
    after=$(ticks_of $pids)
    awk -v r="$rps" -v t=$((after - before)) -v n="$n" -v hz="$TICK" 'BEGIN { printf "%s %.2f\n", r, t * 1e6 / hz / n }'
}

# Until the servers are quiet after the load (up to 180 s): a snapshot of a large board, or
# Redis's AOF rewrite, would otherwise run during the first measurements and charge them
# its CPU (docs/bench-history.md §24).
settle() {
    local before after
    for _ in $(seq 180); do
        before=$(ticks_of "$PPID_PF" "$RPID")
        sleep 1
        after=$(ticks_of "$PPID_PF" "$RPID")
        [ $((after - before)) -le $((TICK / 20)) ] && return
    done
}
settle
