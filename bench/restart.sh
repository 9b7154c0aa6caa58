#!/usr/bin/env bash
# Restart time: each build loads its own data dir with N members (fsync everysec) and stops
# gracefully (a shutdown snapshot); then, five rounds, each build in turn is timed from
# spawn to a successful GET /readyz (/healthz answers before the store has recovered), with
# the `snapshot_ms` its "store recovered" log line gives. Each build has its own data dir:
# a newer build's snapshot format may be one an older build cannot read.
# Usage: bench/restart.sh N [BIN...]      (default BIN: target/release/photofinish)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
shift || true
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=(target/release/photofinish)
ROUNDS=${ROUNDS:-5}
PORT=7793
DIRS=()
trap 'kill "${PID:-}" 2>/dev/null || true; rm -rf "${DIRS[@]}"' EXIT
for BIN in "${BINS[@]}"; do
  DIR=$(mktemp -d)
  DIRS+=("$DIR")
  "$BIN" serve --listen 127.0.0.1:$PORT --resp-listen off --data-dir "$DIR" --fsync everysec >/dev/null 2>&1 &
  PID=$!
  sleep 1
  python3 bench/load.py http://127.0.0.1:$PORT bench "$N" >/dev/null
  # A snapshot being written finishes first (no temp file); the graceful stop then writes
  # the shutdown snapshot that covers every segment.
  sleep 2
  until [ "$(ls "$DIR" | grep -c '\.tmp$' || true)" = 0 ]; do sleep 1; done
  kill -TERM $PID; wait $PID || true
  echo "$BIN: data dir $(du -sh "$DIR" | cut -f1) ($(ls "$DIR" | tr '\n' ' '))"
done
LOG=$(mktemp)
for i in $(seq "$ROUNDS"); do
  for k in "${!BINS[@]}"; do
    BIN=${BINS[$k]}
    START=$(date +%s.%N)
    "$BIN" serve --listen 127.0.0.1:$PORT --resp-listen off --data-dir "${DIRS[$k]}" >"$LOG" 2>&1 &
    PID=$!
    until curl -sf http://127.0.0.1:$PORT/readyz >/dev/null; do sleep 0.02; done
    END=$(date +%s.%N)
    echo "$BIN restart $i with $N members: $(echo "$END - $START" | bc) s, $(grep -o 'snapshot_ms[=:" ]*[0-9]*' "$LOG" | head -1), RSS $(awk '/VmRSS/{print $2}' "/proc/$PID/status") kB"
    kill -TERM $PID; wait $PID || true
    sleep 1
  done
done
rm -f "$LOG"
