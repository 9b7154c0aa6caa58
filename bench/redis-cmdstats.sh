#!/usr/bin/env bash
# Where a Redis-backend write's time goes inside Redis (docs/bench-history.md §10): a board of
# N members loaded through `scores:batch` (bench/load.py), then DURATION of HTTP increments
# (wrk, 50 connections, bench/wrk/submit.lua), then every line of `INFO commandstats` —
# the `fcall` line is the whole write, the others the commands the functions called.
# Usage: BIN=target/release/photofinish bench/redis-cmdstats.sh [N] [DURATION]
#   (defaults 1000000 members, 10s; scores uniform in [0, 10^12): no ties)
# Needs: a release build, redis-server, redis-cli, wrk, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
export PF_N=${1:-1000000} PF_SCORE_MAX=${PF_SCORE_MAX:-1000000000000}
DUR=${2:-10s}
BIN=${BIN:-target/release/photofinish}
RPORT=6394 PORT=7794
. bench/redis-serve.sh
serve_on_fresh_redis
python3 bench/load.py http://127.0.0.1:$PORT bench "$PF_N" 2>/dev/null
redis-cli -p $RPORT config resetstat >/dev/null
wrk -t2 -c50 -d"$DUR" -s bench/wrk/submit.lua http://127.0.0.1:$PORT | grep Requests/sec
redis-cli -p $RPORT info commandstats | grep cmdstat | sed 's/cmdstat_//; s/,rejected.*//' |
    sort -t= -k3 -n -r | column -t -s:,
