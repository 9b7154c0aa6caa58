#!/usr/bin/env bash
# Restart time: load N members (fsync everysec), stop gracefully, wait for the background
# snapshot, then time `photofinish serve` from spawn to its "listening" line.
# Usage: bench/restart.sh N
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
BIN=target/release/photofinish
DIR=$(mktemp -d)
PORT=7793
$BIN serve --listen 127.0.0.1:$PORT --data-dir "$DIR" --fsync everysec 2>/dev/null &
PID=$!
sleep 1
python3 bench/load.py http://127.0.0.1:$PORT bench "$N"
# Let the snapshotter finish: it deletes every sealed segment when its snapshot is durable,
# so at most one log segment (the active one) remains and no temp file.
until [ "$(ls "$DIR" | grep -c '\.log$')" -le 1 ] && [ "$(ls "$DIR" | grep -c '\.tmp$' || true)" = 0 ]; do sleep 1; done
kill -TERM $PID; wait $PID || true
echo "data dir: $(du -sh "$DIR" | cut -f1) ($(ls "$DIR" | tr '\n' ' '))"
for i in 1 2 3; do
  START=$(date +%s.%N)
  $BIN serve --listen 127.0.0.1:$PORT --data-dir "$DIR" 2>/dev/null | head -1 >/dev/null &
  until curl -sf http://127.0.0.1:$PORT/healthz >/dev/null; do sleep 0.05; done
  END=$(date +%s.%N)
  echo "restart $i with $N members: $(echo "$END - $START" | bc) s"
  pkill -TERM -f "listen 127.0.0.1:$PORT" || true
  sleep 1
done
rm -rf "$DIR"
