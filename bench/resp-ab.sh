#!/usr/bin/env bash
# Two Photofinish builds side by side on the RESP door, in alternating rounds, to measure
# one change (docs/bench-history.md §13): both servers start once (--fsync everysec, the
# embedded store, --workers 1, pinned to CPU 0), each board is loaded with MEMBERS members
# named as redis-benchmark names them (m:000000123456), then every round runs N requests
# of COMMAND against A, then against B (redis-benchmark on CPU 1, 50 clients, -P P, members
# drawn from the first RANGE: `-r RANGE`). Prints per run: build, ops/s, server CPU µs per
# request (utime + stime; a snapshot the server writes meanwhile counts too).
#
#   MEMBERS=1000000 ROUNDS=5 P=16 N=2000000 ./bench/resp-ab.sh BUILD_A BUILD_B
#
# PF_STORAGE=redis serves both builds on one Redis (appendonly yes, appendfsync everysec),
# each in its own namespace (--redis-reads fresh), none of the three pinned; each run then
# prints the node's CPU µs and its Redis's apart (utime + stime, and the children Redis
# reaped: its AOF rewrites), and their sum — issue 64's unit.
#
# COMMAND defaults to an LB.INCR of a random member (`LB.INCR lb m:__rand_int__ 1`); RANGE
# defaults to MEMBERS, so every member can be drawn (§9's runs use -r 1000000 at 10M too).
set -euo pipefail
A=$(realpath "${1:?build A}")
B=$(realpath "${2:?build B}")
cd "$(dirname "$0")/.."
MEMBERS=${MEMBERS:-1000000}
RANGE=${RANGE:-$MEMBERS}
ROUNDS=${ROUNDS:-5}
N=${N:-2000000}
P=${P:-16}
read -r -a COMMAND <<<"${COMMAND:-LB.INCR lb m:__rand_int__ 1}"
WORK=$(mktemp -d)
cleanup() { kill "${PA:-}" "${PB:-}" "${RPID:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PIN=(taskset -c 0)
CLIENT=(taskset -c 1)
STORE=()
if [ "${PF_STORAGE:-}" = redis ]; then
    PIN=()
    CLIENT=()
    RPORT=$(free_port)
    mkdir -p "$WORK/redis"
    redis-server --port "$RPORT" --dir "$WORK/redis" --appendonly yes --appendfsync everysec \
        --save '' --daemonize no >"$WORK/redis.log" 2>&1 &
    RPID=$!
    for _ in $(seq 100); do redis-cli -p "$RPORT" PING >/dev/null 2>&1 && break; sleep 0.1; done
    STORE=(--storage "redis://127.0.0.1:$RPORT" --redis-reads fresh --redis-namespace)
fi
start() { # start BIN NAME PORT: a server, its log in $WORK/NAME.log; waits until it answers
    mkdir -p "$WORK/$2"
    local store=(--data-dir "$WORK/$2")
    [ ${#STORE[@]} -gt 0 ] && store=("${STORE[@]}" "$2")
    "${PIN[@]}" "$1" serve --listen 127.0.0.1:0 --resp-listen "127.0.0.1:$3" --fsync everysec \
        --workers 1 "${store[@]}" >"$WORK/$2.log" 2>&1 &
    local pid=$!
    for _ in $(seq 100); do
        redis-cli -p "$3" PING >/dev/null 2>&1 && { STARTED=$pid; return; }
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "server $2 ($1) did not start:" >&2
    tail -5 "$WORK/$2.log" >&2
    exit 1
}
PORT_A=$(free_port)
start "$A" a "$PORT_A"
PA=$STARTED
PORT_B=$(free_port) # chosen once A listens, so A cannot take it
start "$B" b "$PORT_B"
PB=$STARTED
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
# utime + stime (+ the reaped children's): fields 14–17 of /proc/PID/stat, counted after
# the ")" that ends the name.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13 + $14 + $15}'; }
run() { # run LABEL PORT PID
    local before after rps rb=0 ra=0
    before=$(cpu_ticks "$3")
    [ -n "${RPID:-}" ] && rb=$(cpu_ticks "$RPID")
    rps=$("${CLIENT[@]}" redis-benchmark -p "$2" -c 50 -n "$N" -r "$RANGE" -P "$P" --csv "${COMMAND[@]}" 2>/dev/null |
        awk -F'","' 'NR == 2 {print $2}')
    after=$(cpu_ticks "$3")
    [ -n "${RPID:-}" ] && ra=$(cpu_ticks "$RPID")
    awk -v l="$1" -v r="$rps" -v t=$((after - before)) -v n="$N" -v hz="$TICK" -v rt=$((ra - rb)) -v redis="${RPID:-}" \
        'BEGIN { printf "%s %10.0f ops/s %6.2f µs/op", l, r, t * 1e6 / hz / n
                 if (redis != "") printf " redis %6.2f µs/op sum %6.2f µs/op", rt * 1e6 / hz / n, (t + rt) * 1e6 / hz / n
                 printf "\n" }'
}
echo "members: $MEMBERS (drawn from the first $RANGE); -P $P; $ROUNDS rounds of $N: ${COMMAND[*]}"
for _ in $(seq "$ROUNDS"); do
    run A "$PORT_A" "$PA"
    run B "$PORT_B" "$PB"
done
