#!/usr/bin/env bash
# HTTP single writes on the Redis backend beside raw ZINCRBY on the same redis-server
# (issue 18's "HTTP writes ≥ 0.6× ZINCRBY", docs/bench-history.md §10): a board of N members
# loaded through `scores:batch`, 10 s of wrk increments of random members (50
# connections, bench/wrk/submit.lua), then redis-benchmark's ZINCRBY (50 clients) on a
# plain ZSET of as many members. One line: both rates, their ratio, and the `fcall` line of
# INFO commandstats during wrk (the writes' time inside Redis).
# Usage: bench/redis-http-writes.sh BIN [N]   (default 1000000 members)
# Needs: a release build, redis-server, redis-cli, redis-benchmark, wrk, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$1
export PF_N=${2:-1000000} PF_SCORE_MAX=${PF_SCORE_MAX:-1000000000000}
RPORT=6396 PORT=7796
. bench/redis-serve.sh
serve_on_fresh_redis
python3 bench/load.py http://127.0.0.1:$PORT bench "$PF_N" 2>/dev/null
redis-cli -p $RPORT config resetstat >/dev/null
RPS=$(wrk -t2 -c50 -d10s -s bench/wrk/submit.lua http://127.0.0.1:$PORT | awk '/Requests\/sec/ {print $2}')
FC=$(redis-cli -p $RPORT info commandstats | grep -E '^cmdstat_fcall:' | sed 's/,rejected.*//')
python3 bench/redis_load.py zb "$PF_N" | redis-cli -p $RPORT --pipe >/dev/null
Z=$(redis-benchmark -p $RPORT -c 50 -n 500000 -r "$PF_N" -q ZINCRBY zb 1 pf00__rand_int__ |
    tr '\r' '\n' | grep -o '[0-9.]* requests' | tail -n 1 | awk '{print $1}')
echo "$(basename "$BIN") http_writes/s=$RPS zincrby/s=$Z ratio=$(python3 -c "print(f'{$RPS/$Z:.3f}')") $FC"
