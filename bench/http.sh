#!/usr/bin/env bash
# Photofinish over HTTP beside Redis, same machine, same session (issue 3's measurements).
# Usage: bench/http.sh [N] [DURATION] [SUBMIT_DURATION]
#        (defaults 1000000 members, 20s per read run, 60s per submit run: a submit run must be
#        long enough to include the background compactions its writes cause — about one per
#        million writes at 1M members — or it measures only the time between them)
# Needs: a release build (cargo build --release -p photofinish), wrk, redis-server,
# redis-benchmark, python3. Prints each command before its output.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
DUR=${2:-20s}
SUBMIT_DUR=${3:-60s}
BIN=target/release/photofinish
PORT=7790
RPORT=6391
export PF_N=$N
run() { echo "\$ $*"; "$@"; echo; }

for FSYNC in always everysec; do
  DIR=$(mktemp -d)
  $BIN serve --listen 127.0.0.1:$PORT --data-dir "$DIR" --fsync $FSYNC 2>>"$DIR.log" &
  PID=$!
  sleep 1
  python3 bench/load.py http://127.0.0.1:$PORT bench "$N"
  # Measure the steady state: let the compaction the load triggered finish first.
  until [ "$(ls "$DIR" | grep -c '\.log$')" -le 1 ] && [ "$(ls "$DIR" | grep -c '\.tmp$' || true)" = 0 ]; do sleep 1; done
  : > "$DIR.log"
  echo "== photofinish fsync=$FSYNC, $N members"
  run wrk -t2 -c50 -d"$SUBMIT_DUR" --latency -s bench/wrk/submit.lua http://127.0.0.1:$PORT
  echo "compactions during the run: $(grep -ac "snapshot written" "$DIR.log" || true)"
  if [ $FSYNC = everysec ]; then
    for R in ordinal competition dense; do
      PF_RANKING=$R run wrk -t2 -c50 -d"$DUR" --latency -s bench/wrk/rank.lua http://127.0.0.1:$PORT
    done
    run wrk -t2 -c50 -d"$DUR" --latency "http://127.0.0.1:$PORT/v1/boards/bench/entries?limit=10"
  fi
  kill -TERM $PID; wait $PID || true
  rm -rf "$DIR" "$DIR.log"
done

echo "== redis-server $(redis-server --version | grep -o 'v=[0-9.]*'), $N members, no persistence"
redis-server --port $RPORT --save '' --appendonly no --daemonize yes --logfile /dev/null
sleep 0.5
python3 bench/redis_load.py zb "$N" | redis-cli -p $RPORT --pipe >/dev/null
redis-cli -p $RPORT zcard zb
INCR=$(redis-cli -p $RPORT script load "$(cat bench/seed000_incr.lua)")
RANK=$(redis-cli -p $RPORT script load "$(cat bench/seed000_rank.lua)")
REQS=$((N > 1000000 ? 2000000 : 1000000))
# The Lua increment is what the submit runs are compared with: give it as long a run.
LUA_REQS=$((REQS * 3))
run redis-benchmark -p $RPORT -c 50 -n $REQS -r "$N" -q ZINCRBY zb 1 pf00__rand_int__
run redis-benchmark -p $RPORT -c 50 -n $REQS -r "$N" -q ZREVRANK zb pf00__rand_int__
run redis-benchmark -p $RPORT -c 50 -n $LUA_REQS -r "$N" -q EVALSHA "$INCR" 2 zb pf00__rand_int__ 1 0.0000123
run redis-benchmark -p $RPORT -c 50 -n $REQS -r "$N" -q EVALSHA "$RANK" 2 zb pf00__rand_int__
redis-cli -p $RPORT shutdown nosave >/dev/null 2>&1 || true
