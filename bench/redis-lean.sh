#!/usr/bin/env bash
# Issue 18's targets in one run on one redis-server (docs/bench-history.md §10): bytes per
# member of a Photofinish board against a plain ZSET of the same 16-byte names and scores,
# the time of a batch load through the HTTP API, the write script's µs inside Redis
# (INFO commandstats), and HTTP writes beside raw ZINCRBY and seed 000's Lua script.
# Usage: bench/redis-lean.sh [N] [DURATION] [SCORE_MAX]
#   defaults 1000000 members, 15s per run, scores uniform in [0, 1000000) (ties: ~37% of
#   members share their score with an earlier one); SCORE_MAX=1000000000000 for almost none.
# Needs: a release build (cargo build --release -p photofinish), wrk, redis-server,
# redis-cli, redis-benchmark, python3. Prints each command before its output.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
DUR=${2:-15s}
export PF_SCORE_MAX=${3:-1000000}
export PF_N=$N
BIN=${BIN:-target/release/photofinish}
PORT=7792
RPORT=6393
run() { echo "\$ $*"; "$@"; echo; }
# redis-benchmark -q redraws its progress with \r: keep its last line.
bench() { echo "\$ redis-benchmark $*"; redis-benchmark "$@" | tr '\r' '\n' | tail -n 2; echo; }
rc() { redis-cli -p $RPORT "$@"; }
used() { rc info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p'; }
stat() { rc info commandstats | grep "^cmdstat_$1:" || true; }

echo "== redis-server $(redis-server --version | grep -o 'v=[0-9.]*'), no persistence; $N members, scores in [0, $PF_SCORE_MAX)"
redis-server --port $RPORT --save '' --appendonly no --daemonize yes --logfile /dev/null
sleep 0.5
trap 'rc shutdown nosave >/dev/null 2>&1 || true' EXIT

echo "== a plain ZSET, the same names' length and scores"
BASE=$(used)
python3 bench/redis_load.py zb "$N" | rc --pipe >/dev/null
PLAIN=$(( $(used) - BASE ))
echo "plain ZSET: $PLAIN bytes, $(python3 -c "print(f'{$PLAIN/$N:.1f}')") bytes/member"
bench -p $RPORT -c 50 -n 1000000 -r "$N" -q ZINCRBY zb 1 pf00__rand_int__
INCR=$(rc script load "$(cat bench/seed000_incr.lua)")
bench -p $RPORT -c 50 -n 1000000 -r "$N" -q EVALSHA "$INCR" 2 zb pf00__rand_int__ 1 0.0000123
rc flushall >/dev/null

echo "== Photofinish on the same redis-server"
BASE=$(used)
$BIN serve --listen 127.0.0.1:$PORT --resp-listen off --storage redis://127.0.0.1:$RPORT 2>/dev/null &
PID=$!
trap 'kill $PID 2>/dev/null; rc shutdown nosave >/dev/null 2>&1 || true' EXIT
sleep 1
rc config resetstat >/dev/null
T0=$(date +%s.%N)
python3 bench/load.py http://127.0.0.1:$PORT bench "$N" 2>/dev/null
T1=$(date +%s.%N)
echo "batch load of $N members (load.py, 1000 a request): $(python3 -c "print(f'{$T1-$T0:.2f}')") s"
stat fcall; stat evalsha
PF=$(( $(used) - BASE ))
echo "photofinish board: $PF bytes, $(python3 -c "print(f'{$PF/$N:.1f} bytes/member, {$PF/$PLAIN:.2f}x the plain ZSET')")"
rc memory usage "pf:{bench}:p:all:r" SAMPLES 0
rc memory usage "pf:{bench}:p:all:t" SAMPLES 0 || true
rc zcard "pf:{bench}:p:all:t"
rc config resetstat >/dev/null
run wrk -t2 -c50 -d"$DUR" --latency -s bench/wrk/submit.lua http://127.0.0.1:$PORT
stat fcall; stat evalsha
kill -TERM $PID; wait $PID || true
