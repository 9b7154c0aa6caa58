#!/usr/bin/env bash
# What a partition costs a write through the RESP door (docs/SPEC.md §17, docs/partitions.md):
# one server (the embedded store, --fsync everysec, --workers 1, pinned to CPU 0) with two
# boards of MEMBERS members named as redis-benchmark names them (m:000000123456): `plain`,
# and `parted`, created with PARTITIONS 10000, each member put in partition p(i mod
# PARTS) by its first write. Then, in rounds alternating which goes first, N `LB.INCR` of
# random members on each board (redis-benchmark on CPU 1, 50 clients, -P P). A write on
# `parted` names no partition: its member stays in its own, and the write keeps that
# partition's index as well as the board's — the cost a partition adds. A third board,
# `grouped` (PARTITIONS 10000 TEAMSIZE 50), puts each member in the same partition and in
# team t(i / 50) too: its writes keep the board's, the partition's and the teams' indexes
# (SPEC §17's "a write that names a partition and a team"; redis-benchmark's random member
# cannot name its own, so the write names none and the member keeps both). Prints per
# run the board, ops/s and the server's CPU µs per write (utime + stime), then each
# board's median CPU a write over the plain board's, by round. DOOR=http sends the same
# increments through the HTTP door instead (wrk, bench/wrk/submit.lua, one thread, 50
# connections on CPU 1, DUR seconds a board; no pipelining there: each connection waits
# for its answer).
#
#   MEMBERS=1000000 PARTS=200 ROUNDS=6 P=16 N=2000000 ./bench/partition-resp.sh [BIN]
#   DOOR=http DUR=10 MEMBERS=1000000 PARTS=200 ROUNDS=6 ./bench/partition-resp.sh [BIN]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-target/release/photofinish}")
MEMBERS=${MEMBERS:-1000000}
PARTS=${PARTS:-200}
ROUNDS=${ROUNDS:-6}
N=${N:-2000000}
P=${P:-16}
DOOR=${DOOR:-resp}
DUR=${DUR:-10}
WORK=$(mktemp -d)
cleanup() { kill "${PID:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
HPORT=$(free_port)
taskset -c 0 "$BIN" serve --listen "127.0.0.1:$HPORT" --resp-listen "127.0.0.1:$PORT" --fsync everysec \
    --workers 1 --data-dir "$WORK/data" >"$WORK/server.log" 2>&1 &
PID=$!
for _ in $(seq 100); do redis-cli -p "$PORT" PING >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$PORT" LB.CREATE plain UPDATE incr >/dev/null
redis-cli -p "$PORT" LB.CREATE parted UPDATE incr PARTITIONS 10000 >/dev/null
redis-cli -p "$PORT" LB.CREATE grouped UPDATE incr PARTITIONS 10000 TEAMSIZE 50 >/dev/null
seq 0 $((MEMBERS - 1)) | awk -v parts="$PARTS" '{
    m = sprintf("m:%012d", $1); p = sprintf("p%d", $1 % parts); t = sprintf("t%d", int($1 / 50))
    printf "*4\r\n$6\r\nLB.SET\r\n$5\r\nplain\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(m), m, length($1), $1
    printf "*6\r\n$6\r\nLB.SET\r\n$6\r\nparted\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$9\r\nPARTITION\r\n$%d\r\n%s\r\n", length(m), m, length($1), $1, length(p), p
    printf "*8\r\n$6\r\nLB.SET\r\n$7\r\ngrouped\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$9\r\nPARTITION\r\n$%d\r\n%s\r\n$4\r\nTEAM\r\n$%d\r\n%s\r\n", length(m), m, length($1), $1, length(p), p, length(t), t
}' | redis-cli -p "$PORT" --pipe >/dev/null
echo "plain: $(redis-cli -p "$PORT" LB.CARD plain) members; parted: $(redis-cli -p "$PORT" LB.CARD parted) in $PARTS partitions (p7: $(redis-cli -p "$PORT" LB.CARD parted PARTITION p7)); grouped: $(redis-cli -p "$PORT" LB.CARD grouped) in those partitions and teams of 50"
TICK=$(getconf CLK_TCK)
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
run() { # run BOARD
    local before after rps
    local n=$N
    before=$(cpu_ticks "$PID")
    if [ "$DOOR" = http ]; then
        PF_N=$MEMBERS PF_BOARD=$1 PF_MEMBER_FMT='m:%012d' taskset -c 1 wrk -t1 -c50 -d"${DUR}s" \
            -s bench/wrk/submit.lua "http://127.0.0.1:$HPORT" > "$WORK/wrk.out"
        n=$(awk '/requests in/ {print $1}' "$WORK/wrk.out")
        rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk.out")
        if grep -q "Non-2xx" "$WORK/wrk.out"; then grep "Non-2xx" "$WORK/wrk.out" >&2; exit 1; fi
    else
        rps=$(taskset -c 1 redis-benchmark -p "$PORT" -c 50 -n "$N" -r "$MEMBERS" -P "$P" --csv \
            LB.INCR "$1" m:__rand_int__ 1 2>/dev/null | awk -F'","' 'NR == 2 {print $2}')
    fi
    after=$(cpu_ticks "$PID")
    awk -v l="$1" -v r="$rps" -v t=$((after - before)) -v n="$n" -v hz="$TICK" \
        'BEGIN { printf "%-7s %10.0f ops/s %6.2f µs/op\n", l, r, t * 1e6 / hz / n }' | tee -a "$WORK/runs"
}
if [ "$DOOR" = http ]; then
    echo "HTTP, 50 connections; $ROUNDS rounds of ${DUR}s of POST /scores (incr) each"
else
    echo "-P $P; $ROUNDS rounds of $N LB.INCR each"
fi
for r in $(seq "$ROUNDS"); do
    for b in $(shuf -e plain parted grouped); do run "$b"; done
done
# Each board's CPU a write over the plain board's in the same round; the median of those.
python3 - "$WORK/runs" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
rounds = [dict((r[0], float(r[3])) for r in rows[i:i + 3]) for i in range(0, len(rows), 3)]
for board in ("parted", "grouped"):
    v = [r[board] / r["plain"] for r in rounds]
    print(f"{board} / plain, server CPU a write: median {statistics.median(v):.2f}"
          f" (rounds {' '.join(f'{x:.2f}' for x in v)})")
PY
