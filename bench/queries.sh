#!/usr/bin/env bash
# The questions of SPEC §10 over HTTP at N members (issue 19's measurements): a friends query
# of 100 members, the rank of a score, thresholds for 10 tiers, on the embedded store.
# Usage: bench/queries.sh [N] [DURATION]   (defaults 1000000 members, 10s per run)
# Needs: a release build (cargo build --release -p photofinish), wrk, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
DUR=${2:-10s}
BIN=target/release/photofinish
PORT=7792
export PF_N=$N
run() { echo "\$ $*"; "$@"; echo; }
DIR=$(mktemp -d)
$BIN serve --listen 127.0.0.1:$PORT --resp-listen off --data-dir "$DIR" --fsync everysec 2>>"$DIR.log" &
PID=$!
sleep 1
python3 bench/load.py http://127.0.0.1:$PORT bench "$N"
until [ "$(ls "$DIR" | grep -c '\.log$')" -le 1 ] && [ "$(ls "$DIR" | grep -c '\.tmp$' || true)" = 0 ]; do sleep 1; done
echo "== photofinish embedded, $N members"
for R in ordinal dense; do
  PF_RANKING=$R run wrk -t2 -c50 -d"$DUR" --latency -s bench/wrk/friends.lua http://127.0.0.1:$PORT
  PF_RANKING=$R run wrk -t2 -c50 -d"$DUR" --latency -s bench/wrk/rankof.lua http://127.0.0.1:$PORT
done
run wrk -t2 -c50 -d"$DUR" --latency "http://127.0.0.1:$PORT/v1/boards/bench/thresholds?ranks=1,10,100,1000,10000&top_percent=0.1,1,5,10,50"
kill -TERM $PID; wait $PID || true
rm -rf "$DIR" "$DIR.log"
