#!/usr/bin/env bash
# LB.RANK over RESP on one server, three runs at -P 16 and unpipelined (docs/bench-history.md
# §23): run it with and without PF_STORAGE=redis, alternating, to set the Redis backend's
# fresh reads beside the embedded store's. One request thread (`--workers 1`), 50 clients,
# 1,000,000 members named as redis-benchmark names them (bench/resp-servers.sh).
#
#   ./bench/rank-fresh.sh; PF_STORAGE=redis ./bench/rank-fresh.sh      # BIN=<build> to pick one
#   PF_STORAGE=redis PF_REDIS_READS=local ./bench/rank-fresh.sh        # reads from the copy
set -euo pipefail
cd "$(dirname "$0")/.."
MEMBERS=${MEMBERS:-1000000}
BIN=${BIN:-target/release/photofinish}
WORKERS_ARG=(--workers 1)
SERVER_PIN=()
source bench/resp-servers.sh
for i in 1 2 3; do
    r16=$(redis-benchmark -p "$PPORT" -c 50 -n 1000000 -r 1000000 -P 16 --csv LB.RANK lb m:__rand_int__ 2>/dev/null |
        awk -F'","' 'NR == 2 {print $2}')
    r1=$(redis-benchmark -p "$PPORT" -c 50 -n 200000 -r 1000000 -P 1 --csv LB.RANK lb m:__rand_int__ 2>/dev/null |
        awk -F'","' 'NR == 2 {print $2}')
    echo "storage=${PF_STORAGE:-embedded}${PF_REDIS_READS:+ reads=$PF_REDIS_READS} run $i: LB.RANK -P16 $r16 /s; -P1 $r1 /s"
done
