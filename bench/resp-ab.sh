#!/usr/bin/env bash
# Two Photofinish builds side by side on the RESP door, in alternating rounds, to measure
# one change (docs/BENCHMARKS.md §13): both servers start once (--fsync everysec, the
# embedded store, --workers 1, pinned to CPU 0), each board is loaded with MEMBERS members
# named as redis-benchmark names them (m:000000123456), then every round runs N requests
# of COMMAND against A, then against B (redis-benchmark on CPU 1, 50 clients, -P P,
# -r 1000000). Prints per run: build, ops/s, server CPU µs per request (utime + stime).
#
#   MEMBERS=1000000 ROUNDS=5 P=16 N=2000000 ./bench/resp-ab.sh BUILD_A BUILD_B
#
# COMMAND defaults to an LB.INCR of a random member (`LB.INCR lb m:__rand_int__ 1`).
set -euo pipefail
cd "$(dirname "$0")/.."
A=${1:?build A}
B=${2:?build B}
MEMBERS=${MEMBERS:-1000000}
ROUNDS=${ROUNDS:-5}
N=${N:-2000000}
P=${P:-16}
read -r -a COMMAND <<<"${COMMAND:-LB.INCR lb m:__rand_int__ 1}"
WORK=$(mktemp -d)
cleanup() { kill "${PA:-}" "${PB:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() { # start BIN DIR PORT
    mkdir -p "$WORK/$2"
    taskset -c 0 "$1" serve --listen 127.0.0.1:0 --resp-listen "127.0.0.1:$3" --fsync everysec \
        --workers 1 --data-dir "$WORK/$2" >/dev/null 2>&1 &
}
PORT_A=$(free_port)
start "$A" a "$PORT_A"
PA=$!
PORT_B=$(free_port)
start "$B" b "$PORT_B"
PB=$!
for _ in $(seq 100); do
    redis-cli -p "$PORT_A" PING >/dev/null 2>&1 && redis-cli -p "$PORT_B" PING >/dev/null 2>&1 && break
    sleep 0.1
done
load() { # load PORT: one LB.SET per member, piped in with redis-cli --pipe
    redis-cli -p "$1" LB.CREATE lb UPDATE incr >/dev/null
    seq 0 $((MEMBERS - 1)) | awk '{
        m = sprintf("m:%012d", $1)
        printf "*4\r\n$6\r\nLB.SET\r\n$2\r\nlb\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(m), m, length($1), $1
    }' | redis-cli -p "$1" --pipe >/dev/null
}
load "$PORT_A"
load "$PORT_B"
TICK=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() { # run LABEL PORT PID
    local before after rps
    before=$(cpu_ticks "$3")
    rps=$(taskset -c 1 redis-benchmark -p "$2" -c 50 -n "$N" -r 1000000 -P "$P" --csv "${COMMAND[@]}" 2>/dev/null |
        awk -F'","' 'NR == 2 {print $2}')
    after=$(cpu_ticks "$3")
    awk -v l="$1" -v r="$rps" -v t=$((after - before)) -v n="$N" -v hz="$TICK" \
        'BEGIN { printf "%s %10.0f ops/s %6.2f µs/op\n", l, r, t * 1e6 / hz / n }'
}
echo "members: $MEMBERS; -P $P; $ROUNDS rounds of $N: ${COMMAND[*]}"
for _ in $(seq "$ROUNDS"); do
    run A "$PORT_A" "$PA"
    run B "$PORT_B" "$PB"
done
