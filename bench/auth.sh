#!/usr/bin/env bash
# What credentials cost: HTTP writes with no credential (an open server), with an API key,
# and with players' ES256 tokens (each request its own member's token), same build, same
# data, same run. Writes go to PLAYERS random members of a board of MEMBERS. A fourth load
# sends the open server requests padded (an `X-Pad` header) to the size of the
# token-bearing ones, to tell the cost of verifying from the cost of the bytes.
#
# Usage: bench/auth.sh [ROUNDS] [DURATION] [MEMBERS] [PLAYERS]  (defaults 40 4s 100000 10000)
#
# The three servers (open, keys, keys + JWT key) start once, each from a copy of the same
# loaded data dir, and each takes a 5-s warm-up (so every player's token has been verified
# once and sits in the cache). Then each round runs the four loads back to back, in a
# random order, DURATION each, against servers already warm; only the one under load does
# any work. Short paired runs with no restart between them put the four loads of a round a
# few seconds apart, so the machine's drift (which moved a zero-cost control by 7% between
# 10-s runs that each restarted a server: docs/bench-history.md §7) falls on them alike.
# The end prints, per credential, the median over rounds of its ops/s and server CPU per
# request relative to the same round's open run, with a 95% bootstrap interval of that
# median (bench/ratios.py).
# PIN=1: the servers on CPU 0 and wrk (one thread) on CPU 1 (taskset), so neither takes
# the other's core: steadier per-request numbers on a 2-core machine.
# Needs: cargo build --release -p photofinish && cargo build --release -p photofinish-server
#        --example player_tokens; wrk; python3. fsync everysec, 50 connections. Prints
# ops/s, p99, and the server's and wrk's CPU µs per request (utime+stime from /proc).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-40} DUR=${2:-4s} N=${3:-100000} PLAYERS=${4:-10000}
BIN=target/release/photofinish
TOKENS_BIN=target/release/examples/player_tokens
PORT=7792
WORK=$(mktemp -d)
source bench/paired.sh

ADMIN=$($BIN key new --keys "$WORK/keys.json" --name admin --scope admin)
WRITE=$($BIN key new --keys "$WORK/keys.json" --name game --scope write)
$TOKENS_BIN "$PLAYERS" > "$WORK/tokens"
JWT=(--jwt-key crates/photofinish-server/tests/it/fixtures/es256-public.pem)

# One data dir, loaded once, copied for every server.
$BIN serve --listen 127.0.0.1:$PORT --resp-listen off --data-dir "$WORK/template" --fsync everysec \
  --keys "$WORK/keys.json" >/dev/null 2>&1 &
PIDS+=($!)
sleep 1
PF_TOKEN=$ADMIN python3 bench/load.py http://127.0.0.1:$PORT bench "$N" '{"player_writes":true}' 2>/dev/null
kill -TERM "${PIDS[0]}"; wait "${PIDS[0]}" || true; PIDS=()

start open $((PORT + 0))
start keys $((PORT + 1)) --keys "$WORK/keys.json"
start jwt $((PORT + 2)) --keys "$WORK/keys.json" "${JWT[@]}"
sleep 1.5

PAD=$(head -1 "$WORK/tokens" | wc -c)
load() { # which, duration
  case $1 in
    open) run "no credential (open)" open "PF_X=1" "$2" ;;
    pad) run "open, token-size pad" open "PF_PAD=$PAD" "$2" ;;
    key) run "API key" keys "PF_TOKEN=$WRITE" "$2" ;;
    player) run "player ES256 token" jwt "PF_TOKENS=$WORK/tokens" "$2" ;;
  esac
}
round=""
for which in open key player; do load $which 5s; done # warm-up: not recorded
for round in $(seq "$ROUNDS"); do
  for which in $(shuf -e open pad key player); do load "$which" "$DUR"; done
done
python3 bench/ratios.py "no credential (open)" < "$WORK/results.tsv"
