#!/usr/bin/env bash
# The unpipelined RESP targets of docs/bench-history.md §9 as paired rounds: Redis and
# Photofinish start once, each loaded with MEMBERS members (named as redis-benchmark names
# them, m:000000123456); then each round runs, in a random order, N unpipelined requests of
# ZREVRANK, LB.RANK, ZINCRBY and LB.INCR (redis-benchmark, 50 clients, -r 1000000), so the
# machine's drift falls on a round's four alike. The end prints, per pair, the median over
# rounds of Photofinish's ops/s and server CPU per request relative to the same round's
# Redis run, with a 95% bootstrap interval (bench/ratios.py).
#
# Why rounds: one long run of each, as bench/resp-vs-redis.sh does, moves by ±15% from one
# run to the next on this 2-core machine (the load generator and the server share it), more
# than the gap being measured.
#
#   ROUNDS=20 N=200000 MEMBERS=1000000 WORKERS=1 PIN=1 ./bench/resp-paired.sh
#
# P=16 pipelines every run (redis-benchmark -P 16; default 1), for the -P 16 targets
# (issue 64); give it a larger N (e.g. 2000000) so a run lasts seconds.
#
# Redis: appendonly yes / appendfsync everysec; Photofinish: --fsync everysec, the embedded
# store, `serve --workers WORKERS` (default 1: Redis's one command thread). PIN=1 puts both
# servers on CPU 0 and redis-benchmark on CPU 1 (taskset). BIN= the server binary.
#
# FLOOR=1 adds a PING run on each server to every round, and prints each server's PING over
# Redis's ZINCRBY and ZREVRANK: the cost of a request that does nothing, the floor under
# any command's rate and CPU on this machine (docs/bench-history.md §43).
#
# B_ENV="VAR=VALUE …" adds a second Photofinish server, started with those variables in
# its environment (an experiment's knob, bench/experiments/), whose LB.RANK and LB.INCR
# runs join every round; its ratios print beside the first's, and then its LB.RANK over
# the first one's.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-20}
N=${N:-200000}
MEMBERS=${MEMBERS:-1000000}
WORKERS=${WORKERS:-1}
BIN=${BIN:-target/release/photofinish}
P=${P:-1}
SERVER_PIN=() CLIENT_PIN=()
if [ "${PIN:-0}" = 1 ]; then SERVER_PIN=(taskset -c 0) CLIENT_PIN=(taskset -c 1); fi
WORKERS_ARG=(--workers "$WORKERS")
source bench/resp-servers.sh
KINDS=(zrevrank rank zincrby incr)
if [ "${FLOOR:-0}" = 1 ]; then KINDS+=(ping-redis ping-pf); fi
if [ -n "${B_ENV:-}" ]; then
    BPORT=$(free_port)
    read -r -a b_env <<<"$B_ENV"
    serve_photofinish pf-b "$BPORT" "${b_env[@]}"
    PPID_B=$STARTED
    redis-cli -p "$BPORT" LB.CREATE lb UPDATE incr >/dev/null
    load "$BPORT" LB.SET lb
    KINDS+=(rank-b incr-b)
fi

run() { # run LABEL PORT PID COMMAND...: one redis-benchmark run, recorded unless $round is empty
    local label=$1 port=$2 pid=$3
    shift 3
    local rps cpu
    read -r rps cpu <<<"$(rate "$port" "$P" "$N" "$pid" "$@")"
    [ -z "$round" ] && return
    printf '%s\t%s\t%s\t%s\n' "$round" "$label" "$rps" "$cpu" >>"$WORK/results.tsv"
    printf '%3s %-22s %10s ops/s %6s µs/op\n' "$round" "$label" "$rps" "$cpu"
}
one() {
    case $1 in
    zrevrank) run "redis ZREVRANK" "$RPORT" "$RPID" ZREVRANK lb m:__rand_int__ ;;
    rank) run "photofinish LB.RANK" "$PPORT" "$PPID_PF" LB.RANK lb m:__rand_int__ ;;
    zincrby) run "redis ZINCRBY" "$RPORT" "$RPID" ZINCRBY lb 1 m:__rand_int__ ;;
    incr) run "photofinish LB.INCR" "$PPORT" "$PPID_PF" LB.INCR lb m:__rand_int__ 1 ;;
    ping-redis) run "redis PING" "$RPORT" "$RPID" PING ;;
    ping-pf) run "photofinish PING" "$PPORT" "$PPID_PF" PING ;;
    rank-b) run "photofinish-b LB.RANK" "$BPORT" "$PPID_B" LB.RANK lb m:__rand_int__ ;;
    incr-b) run "photofinish-b LB.INCR" "$BPORT" "$PPID_B" LB.INCR lb m:__rand_int__ 1 ;;
    esac
}
echo "members: $MEMBERS; redis: $(redis-server --version | awk '{print $3}'); $(nproc) cores;" \
    "photofinish workers: $WORKERS; pinned: ${PIN:-0}; $ROUNDS rounds of $N requests each, -P $P"
round=""
for which in "${KINDS[@]}"; do one "$which"; done # warm-up: not recorded
for round in $(seq "$ROUNDS"); do
    for which in $(shuf -e "${KINDS[@]}"); do one "$which"; done
done
echo
grep -E "ZREVRANK|LB.RANK|PING" "$WORK/results.tsv" | python3 bench/ratios.py "redis ZREVRANK"
grep -E "ZINCRBY|LB.INCR|PING" "$WORK/results.tsv" | python3 bench/ratios.py "redis ZINCRBY"
if [ "${FLOOR:-0}" = 1 ]; then
    echo "photofinish over Redis, PING:"
    grep -E "PING" "$WORK/results.tsv" | python3 bench/ratios.py "redis PING"
fi
if [ -n "${B_ENV:-}" ]; then
    echo "photofinish-b ($B_ENV) over photofinish:"
    grep -E "LB.RANK" "$WORK/results.tsv" | python3 bench/ratios.py "photofinish LB.RANK"
fi
