#!/usr/bin/env bash
# A profile of the embedded store's RESP door under load (docs/bench-history.md §37): one
# server as bench/resp-servers.sh starts it (--workers 1, --fsync everysec, MEMBERS members
# in the board `lb`), recorded with `perf record --call-graph dwarf` while redis-benchmark
# (50 clients, members from -r 1000000, -P P) sends N of COMMAND. Keeps the recording in
# OUT and prints redis-benchmark's CSV line; read it with `perf report -i OUT` or
# `perf script -i OUT`.
#
#   MEMBERS=1000000 P=16 N=2000000 OUT=/tmp/rank.perf ./bench/resp-profile.sh
#
# COMMAND defaults to `LB.RANK lb m:__rand_int__`; SECONDS_ (default 4) is how long perf
# records, from a third of a second after the load starts.
set -euo pipefail
cd "$(dirname "$0")/.."
MEMBERS=${MEMBERS:-1000000}
P=${P:-16}
N=${N:-2000000}
OUT=${OUT:-/tmp/photofinish-resp.perf}
BIN=${BIN:-target/release/photofinish}
read -r -a COMMAND <<<"${COMMAND:-LB.RANK lb m:__rand_int__}"
WORKERS_ARG=(--workers 1)
SERVER_PIN=()
source bench/resp-servers.sh
perf record -F 1999 --call-graph dwarf,8192 -p "$PPID_PF" -o "$OUT" -- sleep "${SECONDS_:-4}" \
    >/dev/null 2>&1 &
PERF_PID=$!
sleep 0.3
redis-benchmark -p "$PPORT" -c 50 -n "$N" -r 1000000 -P "$P" --csv "${COMMAND[@]}" 2>/dev/null | tail -1
wait "$PERF_PID" || true
echo "profile: $OUT"
