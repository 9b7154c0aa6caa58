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
"${BINS[0]}" serve --listen 127.0.0.1:$PORT --data-dir "$DIR" --fsync everysec 2>/dev/null &
PID=$!
sleep 1
python3 bench/load.py http://127.0.0.1:$PORT bench "$N"
# Let the snapshotter finish: it deletes every sealed segment when its snapshot is durable,
# so at most one log segment (the active one) remains and no temp file.
until [ "$(ls "$DIR" | grep -c '\.log$')" -le 1 ] && [ "$(ls "$DIR" | grep -c '\.tmp$' || true)" = 0 ]; do sleep 1; done
kill -TERM $PID; wait $PID || true
echo "data dir: $(du -sh "$DIR" | cut -f1) ($(ls "$DIR" | tr '\n' ' '))"
for i in 1 2 3; do
  for BIN in "${BINS[@]}"; do
    START=$(date +%s.%N)
    "$BIN" serve --listen 127.0.0.1:$PORT --data-dir "$DIR" 2>/dev/null | head -1 >/dev/null &
    until curl -sf http://127.0.0.1:$PORT/healthz >/dev/null; do sleep 0.05; done
    END=$(date +%s.%N)
    P=$(pgrep -f "listen 127.0.0.1:$PORT" | head -1)
    echo "$BIN restart $i with $N members: $(echo "$END - $START" | bc) s, RSS $(awk '/VmRSS/{print $2}' "/proc/$P/status") kB"
    kill -TERM "$P"
    while kill -0 "$P" 2>/dev/null; do sleep 0.1; done
    sleep 1
  done
done
