#!/usr/bin/env bash
# The RESP door beside Redis on this machine, in one run (docs/bench-history.md §9): Debian's
# redis-benchmark drives both, 50 clients, members drawn from 1,000,000 (`-r 1000000`),
# unpipelined and at -P 16. Redis runs with appendonly yes / appendfsync everysec,
# Photofinish with --fsync everysec on the embedded store. Each board is preloaded with
# MEMBERS members named as redis-benchmark names them (m:000000123456), so every timed
# command finds its member. Prints one markdown row per run: ops/s, server CPU µs per
# operation (utime + stime of the server process and its reaped children over the run,
# from /proc: Redis rewrites its AOF in a forked child, Photofinish snapshots in a thread).
#
#   MEMBERS=1000000 ./bench/resp-vs-redis.sh        # and MEMBERS=10000000
#
# PF_STORAGE=redis: Photofinish on its Redis backend, on the same Redis (its CPU column then
# adds that Redis's CPU over the run).
# WORKERS=N: Photofinish's request threads (`serve --workers`; default one per core).
# WORKERS=1 gives it Redis's budget — one thread for commands — and leaves the other
# core to redis-benchmark, as Redis does (docs/bench-history.md §9).
set -euo pipefail
cd "$(dirname "$0")/.."
MEMBERS=${MEMBERS:-1000000}
N1=${N1:-400000}    # requests per unpipelined run
N16=${N16:-3000000} # requests per -P 16 run
BIN=${BIN:-target/release/photofinish}
WORKERS_ARG=()
[ -n "${WORKERS:-}" ] && WORKERS_ARG=(--workers "$WORKERS")
SERVER_PIN=()
source bench/resp-servers.sh
load "$RPORT" ZADD seed
SHA=$(redis-cli -p "$RPORT" SCRIPT LOAD "$(cat bench/seed000_incr.lua)")
echo "members: $MEMBERS; redis: $(redis-server --version | awk '{print $3}'); $(nproc) cores; photofinish workers: ${WORKERS:-one per core}"
echo
echo "| run | server | pipeline | ops/s | server CPU µs/op |"
echo "|---|---|---|---:|---:|"
run() { # run LABEL SERVER PORT "PID…" P N COMMAND...
    local label=$1 server=$2 port=$3 pids=$4 p=$5 n=$6
    shift 6
    local rps cpu
    read -r rps cpu <<<"$(rate "$port" "$p" "$n" "$pids" "$@")"
    awk -v l="$label" -v s="$server" -v p="$p" -v r="$rps" -v c="$cpu" \
        'BEGIN { printf "| %s | %s | %s | %.0f | %s |\n", l, s, p, r, c }'
}
# On the Redis backend (PF_STORAGE=redis) Photofinish's CPU is its own and its Redis's.
PF_PIDS="$PPID_PF"
[ "${PF_STORAGE:-}" = redis ] && PF_PIDS="$PPID_PF $RPID"
for p in 1 16; do
    n=$N1
    [ "$p" = 16 ] && n=$N16
    run increment "redis ZINCRBY" "$RPORT" "$RPID" "$p" "$n" ZINCRBY lb 1 m:__rand_int__
    run increment "photofinish LB.INCR" "$PPORT" "$PF_PIDS" "$p" "$n" LB.INCR lb m:__rand_int__ 1
    run increment "redis + seed 000 Lua" "$RPORT" "$RPID" "$p" "$n" \
        EVALSHA "$SHA" 2 seed m:__rand_int__ 1 0.0001
    run rank "redis ZREVRANK" "$RPORT" "$RPID" "$p" "$n" ZREVRANK lb m:__rand_int__
    run rank "photofinish LB.RANK" "$PPORT" "$PF_PIDS" "$p" "$n" LB.RANK lb m:__rand_int__
done
