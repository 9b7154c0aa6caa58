#!/usr/bin/env bash
# What credentials cost the server, in instructions per request: deterministic where the
# wall-clock runs of bench/auth.sh drift by more than the difference. Each mode runs the
# release server under `valgrind --tool=callgrind` uninstrumented, loads a board and
# warms up (every player token verified once), then counts instructions only while wrk
# sends writes (callgrind_control -i on/off), and prints instructions per request.
#
# Usage: bench/auth_instructions.sh [DURATION] [MEMBERS] [PLAYERS]   (defaults 20s 2000 1000)
# SET=idempotency: instead, writes without a key (padded to the same size) against writes
# each carrying a fresh Idempotency-Key (docs/bench-history.md §8).
# Needs the release builds bench/auth.sh needs, valgrind, wrk, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-20s} N=${2:-2000} PLAYERS=${3:-1000}
BIN=target/release/photofinish
PORT=7794
WORK=$(mktemp -d)
VG=""
trap '[ -n "$VG" ] && kill $VG 2>/dev/null; rm -rf "$WORK"' EXIT
ADMIN=$($BIN key new --keys "$WORK/keys.json" --name admin --scope admin)
WRITE=$($BIN key new --keys "$WORK/keys.json" --name game --scope write)
if [ "${SET:-credentials}" = credentials ]; then
  target/release/examples/player_tokens "$PLAYERS" > "$WORK/tokens"
fi
JWT=(--jwt-key crates/photofinish-server/tests/it/fixtures/es256-public.pem)

measure() { # label, env for wrk, serve flags (an open server ignores the admin token)
  local label=$1 wrk_env=$2; shift 2
  rm -rf "$WORK/d" "$WORK"/callgrind.*
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/callgrind.%p" \
    $BIN serve --listen 127.0.0.1:$PORT --data-dir "$WORK/d" --fsync everysec "$@" >/dev/null 2>&1 &
  VG=$!
  for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:$PORT/healthz && break; sleep 0.5; done
  PF_TOKEN=$ADMIN python3 bench/load.py http://127.0.0.1:$PORT bench "$N" '{"player_writes":true}' 2>/dev/null
  env PF_N=$PLAYERS $wrk_env wrk -t1 -c8 -d10s -s bench/wrk/submit.lua http://127.0.0.1:$PORT > /dev/null
  callgrind_control -i on $VG > /dev/null
  env PF_N=$PLAYERS $wrk_env wrk -t1 -c8 -d"$DUR" -s bench/wrk/submit.lua http://127.0.0.1:$PORT > "$WORK/wrk.out"
  callgrind_control -i off $VG > /dev/null
  callgrind_control -d $VG > /dev/null
  sleep 1
  local reqs ir sha
  reqs=$(awk '/requests in/{print $1}' "$WORK/wrk.out")
  ir=$(cat "$WORK"/callgrind.* | awk '/^summary:/{s+=$2} /^totals:/{t+=$2} END{print (s>0?s:t)}')
  # SHA-256 runs portable code under valgrind (no SHA extensions): counted apart.
  sha=$(callgrind_annotate --inclusive=no --threshold=100 "$WORK"/callgrind.*.1 2>/dev/null \
    | { grep -E 'sha2::' || true; } | awk '{gsub(",","",$1); s+=$1} END{print s+0}')
  printf '%-22s %8s requests  %8.0f instructions/request  %8.0f without SHA-256\n' "$label" "$reqs" \
    "$(awk -v i="$ir" -v r="$reqs" 'BEGIN{print i/r}')" "$(awk -v i="$ir" -v s="$sha" -v r="$reqs" 'BEGIN{print (i-s)/r}')"
  kill -TERM $VG; wait $VG 2>/dev/null || true; VG=""
}

KEYS=(--keys "$WORK/keys.json")
if [ "${SET:-credentials}" = idempotency ]; then
  measure "no key, key-size pad" "PF_PAD=34"
  measure "Idempotency-Key each" "PF_IDEM=1"
  exit 0
fi
measure "no credential (open)" "PF_X=1"
measure "API key" "PF_TOKEN=$WRITE" "${KEYS[@]}"
measure "player ES256 token" "PF_TOKENS=$WORK/tokens" "${KEYS[@]}" "${JWT[@]}"
