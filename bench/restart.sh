#!/usr/bin/env bash
# Restart time: load N members (fsync everysec), stop gracefully, wait for the background
# snapshot, then time `photofinish serve` from spawn to a successful GET /healthz, three
# rounds; with several builds, each round restarts every build on the same data dir in turn.
# Usage: bench/restart.sh N [BIN...]      (default BIN: target/release/photofinish)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
shift || true
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=(target/release/photofinish)
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
PORT=7793
"${BINS[0]}" serve --listen 127.0.0.1:$PORT --resp-listen off --data-dir "$DIR" --fsync everysec >/dev/null 2>&1 &
PID=$!
sleep 1
python3 bench/load.py http://127.0.0.1:$PORT bench "$N"
# Let a snapshot being written finish (no temp file). Sealed segments may stay: a snapshot
# is due only once the log sealed since the last one reaches that snapshot's size
# (crates/photofinish-store/src/writer.rs, hand_over_snapshot); the graceful stop below
# writes the shutdown snapshot that covers them.
sleep 2
until [ "$(ls "$DIR" | grep -c '\.tmp$' || true)" = 0 ]; do sleep 1; done
kill -TERM $PID; wait $PID || true
echo "data dir: $(du -sh "$DIR" | cut -f1) ($(ls "$DIR" | tr '\n' ' '))"
for i in 1 2 3; do
  for BIN in "${BINS[@]}"; do
    START=$(date +%s.%N)
    "$BIN" serve --listen 127.0.0.1:$PORT --resp-listen off --data-dir "$DIR" >/dev/null 2>&1 &
    until curl -sf http://127.0.0.1:$PORT/healthz >/dev/null; do sleep 0.05; done
    END=$(date +%s.%N)
    P=$(pgrep -f "listen 127.0.0.1:$PORT" | head -1)
    echo "$BIN restart $i with $N members: $(echo "$END - $START" | bc) s, RSS $(awk '/VmRSS/{print $2}' "/proc/$P/status") kB"
    kill -TERM "$P"
    while kill -0 "$P" 2>/dev/null; do sleep 0.1; done
    sleep 1
  done
done
