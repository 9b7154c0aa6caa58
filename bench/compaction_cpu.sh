#!/usr/bin/env bash
# CPU the snapshotter spends per compaction under a steady write load, for builds side by
# side. Loads 1M members once (first BIN) into a template data dir; then per BIN: copies
# it, starts `BIN serve --fsync everysec`, runs wrk submits for DURATION, and reads the
# `pf-snapshot` thread's CPU time from /proc/<pid>/task/*/stat before stopping the server.
# Usage: bench/compaction_cpu.sh DURATION BIN [BIN...]   (45s holds one compaction at ~45K/s)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=$1
shift
PORT=7790
export PF_N=1000000
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$1" serve --listen 127.0.0.1:$PORT --data-dir "$WORK/template" --fsync everysec >/dev/null 2>&1 &
PID=$!
sleep 1
python3 bench/load.py http://127.0.0.1:$PORT bench 1000000 2>/dev/null
kill -TERM $PID; wait $PID || true
for BIN in "$@"; do
  rm -rf "$WORK/d"; cp -r "$WORK/template" "$WORK/d"
  "$BIN" serve --listen 127.0.0.1:$PORT --data-dir "$WORK/d" --fsync everysec 2>"$WORK/log" >/dev/null &
  PID=$!
  sleep 2
  wrk -t2 -c50 -d"$DUR" -s bench/wrk/submit.lua http://127.0.0.1:$PORT > "$WORK/wrk.out"
  sleep 0.5
  T=0
  for t in /proc/$PID/task/*; do
    [ "$(cat "$t/comm")" = pf-snapshot ] && T=$(awk '{print $14+$15}' "$t/stat")
  done
  printf '%-40s %9s ops/s  compactions %s  snapshotter CPU %s s  (%s)\n' "$BIN" \
    "$(awk '/Requests\/sec/{print $2}' "$WORK/wrk.out")" "$(grep -ac 'snapshot written' "$WORK/log" || true)" \
    "$(awk -v t="$T" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }')" \
    "$(grep -a 'snapshot written' "$WORK/log" | grep -o 'took_ms=[0-9]*' | tr '\n' ' ')"
  kill -TERM $PID; wait $PID || true
done
