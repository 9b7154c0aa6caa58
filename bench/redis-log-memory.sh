#!/usr/bin/env bash
# Redis memory of a board on the Redis backend (docs/redis-layout.md) beside a plain ZSET of
# the same names and scores, in one Redis (docs/bench-history.md §16): MEMBERS members with
# 16-byte names (m:0000000000123), uniform random scores, loaded with LB.SET through the RESP
# door and with ZADD; then the board's keys are summed with MEMORY USAGE once its snapshot is
# published (the log trimmed below it), against MEMORY USAGE of the ZSET. Also prints how
# long a new node takes to answer its first read of the board (it loads the snapshot and the
# log after it).
#
#   MEMBERS=1000000 ./bench/redis-log-memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
MEMBERS=${MEMBERS:-1000000}
BIN=${BIN:-target/release/photofinish}
[ -x "$BIN" ] || cargo build --release -p photofinish
WORK=$(mktemp -d)
cleanup() { kill "${RPID:-}" "${P1:-}" "${P2:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
until_answers() { for _ in $(seq 300); do redis-cli -p "$1" PING >/dev/null 2>&1 && return; sleep 0.1; done; }
RPORT=$(free_port) PORT1=$(free_port) PORT2=$(free_port)
redis-server --port "$RPORT" --dir "$WORK" --appendonly yes --appendfsync everysec --save '' \
    >"$WORK/redis.log" 2>&1 &
RPID=$!
until_answers "$RPORT"
"$BIN" serve --listen 127.0.0.1:0 --resp-listen "127.0.0.1:$PORT1" --storage "redis://127.0.0.1:$RPORT" \
    >"$WORK/p1.out" 2>"$WORK/p1.log" &
P1=$!
until_answers "$PORT1"
redis-cli -p "$PORT1" LB.CREATE lb UPDATE set >/dev/null
# One command per member (RESP, through redis-cli --pipe): the same names and scores twice.
gen() { # gen COMMAND KEY
    awk -v n="$MEMBERS" -v cmd="$1" -v key="$2" 'BEGIN {
        srand(42)
        for (i = 0; i < n; i++) {
            m = sprintf("m:%014d", i); s = int(rand() * 1000000000)
            if (cmd == "ZADD") { a = s; b = m } else { a = m; b = s }
            printf "*4\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n",
                length(cmd), cmd, length(key), key, length(a), a, length(b), b
        }
    }'
}
t0=$(date +%s.%N)
gen LB.SET lb | redis-cli -p "$PORT1" --pipe >/dev/null
t1=$(date +%s.%N)
gen ZADD zlb | redis-cli -p "$RPORT" --pipe >/dev/null
t2=$(date +%s.%N)
head=$(redis-cli -p "$RPORT" HGET 'pf:{lb}:head' n)
# Steady state: the board is quiet, so the node publishes a snapshot at the head (looked at
# every 5 s; docs/redis-layout.md, "Snapshots, lease, trim").
t_quiet=$(date +%s.%N)
for _ in $(seq 600); do
    snap=$(redis-cli -p "$RPORT" HGET 'pf:{lb}:snap' n)
    [ -n "$snap" ] && [ "$snap" -ge "$head" ] && break
    sleep 1
done
t_snap=$(date +%s.%N)
sum_board=0 snap_bytes=0 log_bytes=0
while read -r key; do
    b=$(redis-cli -p "$RPORT" MEMORY USAGE "$key" SAMPLES 0)
    sum_board=$((sum_board + b))
    case "$key" in *':snap:'*) snap_bytes=$((snap_bytes + b)) ;; *':log') log_bytes=$((log_bytes + b)) ;; esac
done < <(redis-cli -p "$RPORT" --scan --pattern 'pf:{lb}:*')
zset=$(redis-cli -p "$RPORT" MEMORY USAGE zlb SAMPLES 0)
entries=$(redis-cli -p "$RPORT" XLEN 'pf:{lb}:log')
# A new node's first read of the board: it loads the snapshot and the log after it.
"$BIN" serve --listen 127.0.0.1:0 --resp-listen "127.0.0.1:$PORT2" --storage "redis://127.0.0.1:$RPORT" \
    >"$WORK/p2.out" 2>"$WORK/p2.log" &
P2=$!
until_answers "$PORT2"
t3=$(date +%s.%N)
redis-cli -p "$PORT2" LB.RANK lb m:00000000000007 >/dev/null
t4=$(date +%s.%N)
awk -v n="$MEMBERS" -v b="$sum_board" -v s="$snap_bytes" -v l="$log_bytes" -v z="$zset" -v e="$entries" \
    -v h="$head" -v sn="$snap" -v tl="$(echo "$t1 - $t0" | bc)" -v tz="$(echo "$t2 - $t1" | bc)" \
    -v tf="$(echo "$t4 - $t3" | bc)" -v ts="$(echo "$t_snap - $t_quiet" | bc)" 'BEGIN {
    printf "members %d; head %d, snapshot at %d, %d entries left in the log\n", n, h, sn, e
    printf "| what | bytes | per member | vs ZSET |\n|---|---:|---:|---:|\n"
    printf "| board, all keys | %d | %.1f | %.2f× |\n", b, b / n, b / z
    printf "| of which snapshot chunks | %d | %.1f | |\n", s, s / n
    printf "| of which log stream | %d | %.1f | |\n", l, l / n
    printf "| plain ZSET | %d | %.1f | 1.00× |\n", z, z / n
    printf "load: LB.SET pipe %.1f s, ZADD pipe %.1f s; snapshot at the head %.1f s after; a new node'"'"'s first read: %.2f s\n", tl, tz, ts, tf
}'
