#!/usr/bin/env bash
# The Redis backend's cost per operation where it does not depend on the host: CPU per
# command for the Photofinish node and for its Redis, each read from /proc, beside Redis's
# own CPU per ZINCRBY / ZREVRANK on the same Redis (issue #64). One Redis (appendonly yes,
# appendfsync everysec), one node on it (--workers 1, --redis-reads fresh), MEMBERS members
# in the ZSET `lb` and the board `lb`; redis-benchmark, 50 clients, members from -r
# 1000000. ROUNDS paired rounds, alternating which side goes first; each prints a markdown
# row: ops/s, node µs/op, Redis µs/op, their sum.
#
#   MEMBERS=1000000 ROUNDS=3 ./bench/redis-cpu-split.sh
#
# PIPELINES (default "1 16") picks the pipeline depths; COMMANDS=writes runs only the
# LB.INCR / ZINCRBY pair. A node's LB.INCR row also gives the writes an append carried
# (`INFO commandstats`: the run's writes over its EVALSHA calls).
#
# FLOOR=1 measures the parts of the floor under the unpipelined rows (docs/bench-history.md
# §45): a PING on each server in every round (a request that does nothing, through each
# door), the reads that shared one head read, and after the rounds, one connection's calls
# to Redis at the node's pattern (one at a time, redis-benchmark -c 1): an XADD of one
# group's entry at the size the node's appends carried and at 50 writes' worth (all 50
# clients in one append), the same entry as the argument of a script that returns at once
# and of the least script that numbers it (head read, XADD, head written), and the head
# read (HMGET); each as Redis's CPU a call, the least of three runs.
#
# PERF=1 also records the node (perf record -g at PERF_HZ, default 499) during one LB.INCR
# run (unpipelined; PERF_P=16 pipelined) and prints its flat profile's top lines; ROUNDS=0
# records only that.
set -euo pipefail
cd "$(dirname "$0")/.."
MEMBERS=${MEMBERS:-1000000}
ROUNDS=${ROUNDS:-3}
N1=${N1:-300000}    # requests per unpipelined run
N16=${N16:-2000000} # requests per -P 16 run
BIN=${BIN:-target/release/photofinish}
PF_STORAGE=redis
WORKERS_ARG=(--workers 1)
SERVER_PIN=()
source bench/resp-servers.sh

# Calls of COMMAND (lower case: evalsha, hmget) Redis has run so far.
calls_of() {
    redis-cli -p "$RPORT" INFO commandstats | awk -F'[:=,]' -v c="cmdstat_$1" '$1 == c {print $3; f = 1} END {if (!f) print 0}'
}

# split PORT P N COMMAND…: one redis-benchmark run; prints "<ops/s> <node µs/op> <redis µs/op>
# <requests a Redis call carried>": writes an append (EVALSHA) for LB.INCR, reads a head
# read (HMGET) for LB.RANK.
split() {
    local port=$1 p=$2 n=$3
    shift 3
    local nb rb na ra rps cb ca
    local counted=evalsha
    [ "$1" = LB.RANK ] && counted=hmget
    cb=$(calls_of $counted)
    nb=$(ticks_of "$PPID_PF")
    rb=$(ticks_of "$RPID")
    rps=$(redis-benchmark -p "$port" -c 50 -n "$n" -r 1000000 -P "$p" --csv "$@" 2>/dev/null |
        awk -F'","' 'NR == 2 {print $2}')
    na=$(ticks_of "$PPID_PF")
    ra=$(ticks_of "$RPID")
    ca=$(calls_of $counted)
    awk -v r="$rps" -v a=$((na - nb)) -v b=$((ra - rb)) -v n="$n" -v hz="$TICK" -v c=$((ca - cb)) \
        'BEGIN { printf "%s %.2f %.2f %s\n", r, a * 1e6 / hz / n, b * 1e6 / hz / n, (c > 0 ? sprintf("%.1f", n / c) : "-") }'
}
row() { # row ROUND LABEL P N PORT COMMAND…
    local round=$1 label=$2 p=$3 n=$4 port=$5
    shift 5
    local rps node redis per
    read -r rps node redis per <<<"$(split "$port" "$p" "$n" "$@")"
    [ "$label" = "node LB.INCR" ] && [ "$p" = 1 ] && last_per=$per
    case "$label" in node*INCR | node*RANK) ;; *) per=- ;; esac # only the node calls Redis
    awk -v k="$round" -v l="$label" -v p="$p" -v r="$rps" -v a="$node" -v b="$redis" -v c="$per" \
        'BEGIN { printf "| %s | %s | %s | %.0f | %.2f | %.2f | %.2f | %s |\n", k, l, p, r, a, b, a + b, c }'
}
echo "members: $MEMBERS; redis $(redis-server --version | awk '{print $3}'); $(nproc) cores; node --workers 1, --redis-reads fresh"
echo
echo "| round | command | pipeline | ops/s | node µs/op | redis µs/op | sum µs/op | requests a Redis call |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
for round in $(seq "$ROUNDS"); do
    for p in ${PIPELINES:-1 16}; do
        n=$N1
        [ "$p" = 16 ] && n=$N16
        pairs=("ZINCRBY lb 1 m:__rand_int__|LB.INCR lb m:__rand_int__ 1")
        [ "${FLOOR:-}" = 1 ] && pairs=("PING|PING" "${pairs[@]}")
        [ "${COMMANDS:-}" = writes ] || pairs+=("ZREVRANK lb m:__rand_int__|LB.RANK lb m:__rand_int__")
        for pair in "${pairs[@]}"; do
            redis_cmd=${pair%%|*}
            node_cmd=${pair##*|}
            # shellcheck disable=SC2086 # the commands split into words
            if [ $((round % 2)) = 1 ]; then
                row "$round" "redis ${redis_cmd%% *}" "$p" "$n" "$RPORT" $redis_cmd
                row "$round" "node ${node_cmd%% *}" "$p" "$n" "$PPORT" $node_cmd
            else
                row "$round" "node ${node_cmd%% *}" "$p" "$n" "$PPORT" $node_cmd
                row "$round" "redis ${redis_cmd%% *}" "$p" "$n" "$RPORT" $redis_cmd
            fi
        done
    done
done
if [ "${FLOOR:-}" = 1 ]; then
    # The mean payload of the node's last 200 entries (its group appends), read raw.
    entry_bytes=$(python3 - "$RPORT" "pf:{lb}:log" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
args = [b"XREVRANGE", sys.argv[2].encode(), b"+", b"-", b"COUNT", b"200"]
s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
f = s.makefile("rb")
def value():
    line = f.readline()
    kind, rest = line[:1], line[1:-2]
    if kind == b"*":
        return [value() for _ in range(int(rest))]
    if kind == b"$":
        data = f.read(int(rest) + 2)
        return data[:-2]
    return rest
entries = value()  # [[id, [b"p", payload, b"c", check]], ...]
sizes = [len(fields[1]) for _, fields in entries]
print(sum(sizes) // max(len(sizes), 1))
PY
)
    # Fifty writes' worth needs an unpipelined LB.INCR row's writes an append.
    per_write=$(awk -v b="$entry_bytes" -v w="${last_per:-0}" 'BEGIN { if (w > 0) printf "%d", b / w }')
    echo
    echo "one connection's calls to Redis, one at a time (redis-benchmark -c 1), Redis's CPU a call (least of 3 runs):"
    echo
    echo "| call | bytes | calls | redis µs/call |"
    echo "|---|---:|---:|---:|"
    sha=$(redis-cli -p "$RPORT" SCRIPT LOAD "return 1")
    # An AOF rewrite the runs above started would charge the calls its CPU.
    until redis-cli -p "$RPORT" INFO persistence | grep -q '^aof_rewrite_in_progress:0'; do sleep 1; done
    floor_call() { # floor_call LABEL BYTES COMMAND…: the least of three runs (a floor)
        local label=$1 bytes=$2 rb ra best=
        shift 2
        for _ in 1 2 3; do
            rb=$(ticks_of "$RPID")
            redis-benchmark -p "$RPORT" -c 1 -n "${FLOOR_N:-20000}" "$@" >/dev/null 2>&1
            ra=$(ticks_of "$RPID")
            redis-cli -p "$RPORT" DEL 'floor:{x}' 'least:{x}' 'least:{x}:h' >/dev/null
            if [ -z "$best" ] || [ $((ra - rb)) -lt "$best" ]; then best=$((ra - rb)); fi
        done
        awk -v l="$label" -v b="$bytes" -v n="${FLOOR_N:-20000}" -v t="$best" -v hz="$TICK" \
            'BEGIN { printf "| %s | %s | %d | %.1f |\n", l, b, n, t * 1e6 / hz / n }'
    }
    # The least a numbered append can do at once: read the head, add the entry after it,
    # write the head (append.lua also checks the caller's chain, a retry and the clock).
    least=$(redis-cli -p "$RPORT" SCRIPT LOAD "local n = (tonumber(redis.call('HGET', KEYS[2], 'n')) or 0) + 1
redis.call('XADD', KEYS[1], '0-' .. n, 'p', ARGV[1])
redis.call('HSET', KEYS[2], 'n', n) return n")
    for bytes in "$entry_bytes" ${per_write:+$((per_write * 50))}; do
        payload=$(head -c "$bytes" /dev/zero | tr '\0' x)
        floor_call "XADD of an entry" "$bytes" XADD 'floor:{x}' '*' p "$payload"
        floor_call "EVALSHA of 'return 1' with it" "$bytes" EVALSHA "$sha" 0 "$payload"
        floor_call "EVALSHA of the least append" "$bytes" EVALSHA "$least" 2 'least:{x}' 'least:{x}:h' "$payload"
    done
    floor_call "HMGET of the board's head" - HMGET 'pf:{lb}:head' n c v
    echo
    echo "mean entry: $entry_bytes bytes, ${last_per:-?} writes, so ${per_write:-?} bytes a write"
fi
if [ -n "${PERF:-}" ]; then
    # PERF_P: the pipeline depth; PERF_CG: perf's call-graph option (e.g. "--call-graph dwarf");
    # PERF_OUT: keep the recording there (to read it again with perf report).
    out=${PERF_OUT:-$WORK/node.perf}
    p=${PERF_P:-1}
    n=$N1
    [ "$p" != 1 ] && n=$N16
    # shellcheck disable=SC2086 # PERF_CG splits into perf's words
    perf record -F "${PERF_HZ:-499}" ${PERF_CG:--g} -p "$PPID_PF" -o "$out" -- sleep 8 >/dev/null 2>&1 &
    PERF_PID=$!
    sleep 0.5
    redis-benchmark -p "$PPORT" -c 50 -n "$n" -r 1000000 -P "$p" LB.INCR lb m:__rand_int__ 1 >/dev/null 2>&1
    wait "$PERF_PID" || true
    echo
    echo "node profile, LB.INCR at -P $p (perf report --no-children, self time):"
    perf report -i "$out" --no-children --sort symbol --stdio 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -"${PERF_TOP:-30}"
fi
