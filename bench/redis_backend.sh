#!/usr/bin/env bash
# Photofinish on the Redis backend beside redis-benchmark running seed 000's Lua scripts on
# the same redis-server, same machine, same session (issue 5's measurements).
# Usage: bench/redis_backend.sh [N] [DURATION]   (defaults 1000000 members, 15s per run)
# Needs: a release build (cargo build --release -p photofinish), wrk, redis-server,
# redis-benchmark, python3. Prints each command before its output.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
DUR=${2:-15s}
BIN=target/release/photofinish
PORT=7791
RPORT=6392
export PF_N=$N
run() { echo "\$ $*"; "$@"; echo; }

echo "== redis-server $(redis-server --version | grep -o 'v=[0-9.]*'), no persistence"
redis-server --port $RPORT --save '' --appendonly no --daemonize yes --logfile /dev/null
sleep 0.5
trap 'redis-cli -p $RPORT shutdown nosave >/dev/null 2>&1 || true' EXIT

$BIN serve --listen 127.0.0.1:$PORT --storage redis://127.0.0.1:$RPORT 2>/dev/null &
PID=$!
sleep 1
python3 bench/load.py http://127.0.0.1:$PORT bench "$N"
echo "== photofinish on redis, $N members"
run wrk -t2 -c50 -d"$DUR" --latency -s bench/wrk/submit.lua http://127.0.0.1:$PORT
for R in ordinal competition dense; do
  PF_RANKING=$R run wrk -t2 -c50 -d"$DUR" --latency -s bench/wrk/rank.lua http://127.0.0.1:$PORT
done
run wrk -t2 -c50 -d"$DUR" --latency "http://127.0.0.1:$PORT/v1/boards/bench/entries?limit=10"
kill -TERM $PID; wait $PID || true
redis-cli -p $RPORT info memory | grep '^used_memory:'

echo "== redis-benchmark, seed 000's scripts on the same server, $N members"
python3 bench/redis_load.py zb "$N" | redis-cli -p $RPORT --pipe >/dev/null
redis-cli -p $RPORT zcard zb
INCR=$(redis-cli -p $RPORT script load "$(cat bench/seed000_incr.lua)")
RANK=$(redis-cli -p $RPORT script load "$(cat bench/seed000_rank.lua)")
REQS=$((N > 1000000 ? 2000000 : 1000000))
run redis-benchmark -p $RPORT -c 50 -n $REQS -r "$N" -q EVALSHA "$INCR" 2 zb pf00__rand_int__ 1 0.0000123
run redis-benchmark -p $RPORT -c 50 -n $REQS -r "$N" -q EVALSHA "$RANK" 2 zb pf00__rand_int__
run redis-benchmark -p $RPORT -c 50 -n $REQS -r "$N" -q ZREVRANGE zb 0 9 WITHSCORES
