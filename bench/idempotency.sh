#!/usr/bin/env bash
# What an Idempotency-Key costs a write: HTTP increments without a key, with a fresh key
# per request, and without a key but padded to the same request size (an `X-Pad` header),
# same build, same data, same run. Writes go to PLAYERS random members of a board of
# MEMBERS (all exist: no run adds members, so the only memory a keyed run adds is its
# remembered keys).
#
# Usage: bench/idempotency.sh [ROUNDS] [DURATION] [MEMBERS] [PLAYERS]  (defaults 40 3s 100000 10000)
#
# Two servers start once, each from a copy of the same loaded data dir: one only ever
# takes key-less writes (the bare and the padded loads), the other only keyed ones. The
# keyed one first takes WARM (default 30s) of keyed writes, so its table of remembered
# keys is at its bound (1,000,000) before anything is measured — the steady state of a
# server under this load, where each new key pushes the oldest out; the other takes 5 s.
# Then each round runs the three loads back to back, in a random order, DURATION each
# (the servers already warm; only the one under load does any work), so the machine's
# drift falls on a round's three alike. At the end, each server's resident memory
# (VmRSS). The end prints the median over rounds of each load's ops/s and server CPU per
# request relative to the same round's key-less run, with a 95% bootstrap interval
# (bench/ratios.py).
# BIN=path: the server binary (default target/release/photofinish), to compare builds.
# PIN=1: the servers on CPU 0 and wrk (one thread) on CPU 1. FSYNC=always|everysec
# (default everysec). Needs: cargo build --release -p photofinish; wrk; python3. 50
# connections.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-40} DUR=${2:-3s} N=${3:-100000} PLAYERS=${4:-10000}
FSYNC=${FSYNC:-everysec}
BIN=${BIN:-target/release/photofinish}
PORT=7793
WORK=$(mktemp -d)
source bench/paired.sh

$BIN serve --listen 127.0.0.1:$PORT --resp-listen off --data-dir "$WORK/template" --fsync everysec >/dev/null 2>&1 &
PIDS+=($!)
sleep 1
python3 bench/load.py http://127.0.0.1:$PORT bench "$N" 2>/dev/null
kill -TERM "${PIDS[0]}"; wait "${PIDS[0]}" || true; PIDS=()

start plain $((PORT + 0))
start keyed $((PORT + 1))
sleep 1.5

load() { # which, duration
  case $1 in
    bare) run "no key" plain "PF_X=1" "$2" ;;
    pad) run "no key, key-size pad" plain "PF_PAD=34" "$2" ;;
    idem) run "Idempotency-Key each" keyed "PF_IDEM=1" "$2" ;;
  esac
}
round=""
load bare 5s; load idem "${WARM:-30s}" # warm-up: not recorded
for round in $(seq "$ROUNDS"); do
  for which in $(shuf -e bare pad idem); do load "$which" "$DUR"; done
done
echo "VmRSS after the rounds: key-less server $(rss_kib "${PID_OF[plain]}") KiB, keyed server $(rss_kib "${PID_OF[keyed]}") KiB"
python3 bench/ratios.py "no key" < "$WORK/results.tsv"
