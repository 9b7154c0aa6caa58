#!/usr/bin/env bash
# LB.RANK over RESP on one server, three runs at -P 16 and unpipelined (docs/bench-history.md
# §23): run it with and without PF_STORAGE=redis, alternating, to set the Redis backend's
# fresh reads beside the embedded store's. One request thread (`--workers 1`; WORKERS=N
# for N), 50 clients, 1,000,000 members named as redis-benchmark names them
# (bench/resp-servers.sh). Each run's server CPU per read is in brackets (on the Redis
# backend, with its Redis's).
#
#   ./bench/rank-fresh.sh; PF_STORAGE=redis ./bench/rank-fresh.sh      # BIN=<build> to pick one
#   PF_STORAGE=redis PF_REDIS_READS=local ./bench/rank-fresh.sh        # reads from the copy
set -euo pipefail
cd "$(dirname "$0")/.."
MEMBERS=${MEMBERS:-1000000}
BIN=${BIN:-target/release/photofinish}
WORKERS_ARG=(--workers "${WORKERS:-1}")
SERVER_PIN=()
source bench/resp-servers.sh
# Server CPU per read: Photofinish's, and on the Redis backend its Redis's as well.
PF_PIDS="$PPID_PF"
[ "${PF_STORAGE:-}" = redis ] && PF_PIDS="$PPID_PF $RPID"
for i in 1 2 3; do
    read -r r16 c16 <<<"$(rate "$PPORT" 16 1000000 "$PF_PIDS" LB.RANK lb m:__rand_int__)"
    read -r r1 c1 <<<"$(rate "$PPORT" 1 200000 "$PF_PIDS" LB.RANK lb m:__rand_int__)"
    echo "storage=${PF_STORAGE:-embedded}${PF_REDIS_READS:+ reads=$PF_REDIS_READS} run $i: LB.RANK -P16 $r16 /s ($c16 µs); -P1 $r1 /s ($c1 µs)"
done
