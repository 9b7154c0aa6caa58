#!/usr/bin/env bash
# Issue 18's batch-load figure alone (docs/bench-history.md §10): N members loaded through
# `scores:batch` (bench/load.py, 1,000 a request) into a board on a fresh redis-server;
# prints the wall time, then what the functions cost inside Redis (INFO commandstats: the
# `fcall` line is every call, the other lines the commands the calls made).
# Usage: BIN=target/release/photofinish bench/redis-batch-load.sh [N]
#   (default 1000000 members; scores uniform in [0, 10^12): no ties)
# Needs: a release build, redis-server, redis-cli, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
export PF_N=${1:-1000000} PF_SCORE_MAX=${PF_SCORE_MAX:-1000000000000}
BIN=${BIN:-target/release/photofinish}
RPORT=6395 PORT=7795
. bench/redis-serve.sh
serve_on_fresh_redis
redis-cli -p $RPORT config resetstat >/dev/null
T0=$(date +%s.%N)
python3 bench/load.py http://127.0.0.1:$PORT bench "$PF_N" 2>/dev/null
T1=$(date +%s.%N)
echo "$(basename "$BIN"): batch load of $PF_N members $(python3 -c "print(f'{$T1-$T0:.2f}')") s"
redis-cli -p $RPORT info commandstats | grep cmdstat | sed 's/cmdstat_//; s/,rejected.*//' |
    sort -t= -k3 -n -r | column -t -s:, | head -14
