#!/usr/bin/env bash
# The unpipelined RESP targets of docs/BENCHMARKS.md §9 as paired rounds: Redis and
# Photofinish start once, each loaded with MEMBERS members (named as redis-benchmark names
# them, m:000000123456); then each round runs, in a random order, N unpipelined requests of
# ZREVRANK, LB.RANK, ZINCRBY and LB.INCR (redis-benchmark, 50 clients, -r 1000000), so the
# machine's drift falls on a round's four alike. The end prints, per pair, the median over
# rounds of Photofinish's ops/s and server CPU per request relative to the same round's
# Redis run, with a 95% bootstrap interval (bench/ratios.py).
#
# Why rounds: one long run of each, as bench/resp-vs-redis.sh does, moves by ±15% from one
# run to the next on this 2-core machine (the load generator and the server share it), more
# than the gap being measured.
#
#   ROUNDS=20 N=200000 MEMBERS=1000000 WORKERS=1 PIN=1 ./bench/resp-paired.sh
#
# Redis: appendonly yes / appendfsync everysec; Photofinish: --fsync everysec, the embedded
# store, `serve --workers WORKERS` (default 1: Redis's one command thread). PIN=1 puts both
# servers on CPU 0 and redis-benchmark on CPU 1 (taskset). BIN= the server binary.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-20}
N=${N:-200000}
MEMBERS=${MEMBERS:-1000000}
WORKERS=${WORKERS:-1}
BIN=${BIN:-target/release/photofinish}
SERVER_PIN=() CLIENT_PIN=()
if [ "${PIN:-0}" = 1 ]; then SERVER_PIN=(taskset -c 0) CLIENT_PIN=(taskset -c 1); fi
[ -x "$BIN" ] || cargo build --release -p photofinish
WORK=$(mktemp -d)
cleanup() { kill "${RPID:-}" "${PPID_PF:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
RPORT=$(free_port)
PPORT=$(free_port)
mkdir -p "$WORK/redis" "$WORK/pf"
"${SERVER_PIN[@]}" redis-server --port "$RPORT" --dir "$WORK/redis" --appendonly yes \
    --appendfsync everysec --save '' --daemonize no >"$WORK/redis.log" 2>&1 &
RPID=$!
"${SERVER_PIN[@]}" "$BIN" serve --listen 127.0.0.1:0 --resp-listen "127.0.0.1:$PPORT" \
    --fsync everysec --workers "$WORKERS" --data-dir "$WORK/pf" >"$WORK/pf.out" 2>"$WORK/pf.log" &
PPID_PF=$!
for _ in $(seq 100); do
    redis-cli -p "$RPORT" PING >/dev/null 2>&1 && redis-cli -p "$PPORT" PING >/dev/null 2>&1 && break
    sleep 0.1
done

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

ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)
run() { # run LABEL PORT PID COMMAND...: one redis-benchmark run, recorded unless $round is empty
    local label=$1 port=$2 pid=$3
    shift 3
    local before after rps
    before=$(ticks "$pid")
    rps=$("${CLIENT_PIN[@]}" redis-benchmark -p "$port" -c 50 -n "$N" -r 1000000 -P 1 --csv "$@" 2>/dev/null |
        awk -F'","' 'NR == 2 {print $2}')
    after=$(ticks "$pid")
    [ -z "$round" ] && return
    local cpu
    cpu=$(awk -v t=$((after - before)) -v n="$N" -v hz="$TICK" 'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
    printf '%s\t%s\t%s\t%s\n' "$round" "$label" "$rps" "$cpu" >>"$WORK/results.tsv"
    printf '%3s %-22s %10s ops/s %6s µs/op\n' "$round" "$label" "$rps" "$cpu"
}
one() {
    case $1 in
    zrevrank) run "redis ZREVRANK" "$RPORT" "$RPID" ZREVRANK lb m:__rand_int__ ;;
    rank) run "photofinish LB.RANK" "$PPORT" "$PPID_PF" LB.RANK lb m:__rand_int__ ;;
    zincrby) run "redis ZINCRBY" "$RPORT" "$RPID" ZINCRBY lb 1 m:__rand_int__ ;;
    incr) run "photofinish LB.INCR" "$PPORT" "$PPID_PF" LB.INCR lb m:__rand_int__ 1 ;;
    esac
}
echo "members: $MEMBERS; redis: $(redis-server --version | awk '{print $3}'); $(nproc) cores;" \
    "photofinish workers: $WORKERS; pinned: ${PIN:-0}; $ROUNDS rounds of $N requests each"
round=""
for which in zrevrank rank zincrby incr; do one "$which"; done # warm-up: not recorded
for round in $(seq "$ROUNDS"); do
    for which in $(shuf -e zrevrank rank zincrby incr); do one "$which"; done
done
echo
grep -E "ZREVRANK|LB.RANK" "$WORK/results.tsv" | python3 bench/ratios.py "redis ZREVRANK"
grep -E "ZINCRBY|LB.INCR" "$WORK/results.tsv" | python3 bench/ratios.py "redis ZINCRBY"
