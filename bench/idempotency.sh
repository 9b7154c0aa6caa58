#!/usr/bin/env bash
# What an Idempotency-Key costs a write: HTTP increments without a key, with a fresh key
# per request, and without a key but padded to the same request size (an `X-Pad` header),
# same build, same data, same run, in turn. Writes go to PLAYERS random members of a board
# of MEMBERS (all exist: no run adds members, so the only memory a keyed run adds is its
# remembered keys). Each server first takes a 5-s warm-up, then the measured run; after it,
# the server's resident memory (VmRSS) — the keyed run's growth over the padded run's,
# divided by the keys it remembered, is the memory per remembered key.
#
# Usage: bench/idempotency.sh [ROUNDS] [DURATION] [MEMBERS] [PLAYERS]  (defaults 3 15s 100000 10000)
# WARM=30s: a longer warm-up (default 5s), so a keyed run starts with its table of
# remembered keys at the bound (1,000,000) — the steady state of a server under this load.
# PIN=1: the server on CPU 0 and wrk (one thread) on CPU 1. FSYNC=always|everysec (default
# everysec). Needs: cargo build --release -p photofinish; wrk; python3. 50 connections.
# Each round runs the three in a random order; the end prints the median over rounds of
# each one's ops/s and server CPU per request relative to the same round's key-less run,
# with a 95% bootstrap interval (bench/ratios.py).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3} DUR=${2:-15s} N=${3:-100000} PLAYERS=${4:-10000}
FSYNC=${FSYNC:-everysec}
BIN=target/release/photofinish
PORT=7793
SERVER_PIN="" WRK_PIN="" WRK_THREADS=2
if [ "${PIN:-0}" = 1 ]; then SERVER_PIN="taskset -c 0" WRK_PIN="taskset -c 1" WRK_THREADS=1; fi
WORK=$(mktemp -d)
PID=""
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$WORK"' EXIT
ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kib() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
per_req() { awk -v a="$1" -v b="$2" -v n="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (b - a) * 1000000 / hz / n }'; }

$BIN serve --listen 127.0.0.1:$PORT --data-dir "$WORK/template" --fsync everysec >/dev/null 2>&1 &
PID=$!
sleep 1
python3 bench/load.py http://127.0.0.1:$PORT bench "$N" 2>/dev/null
kill -TERM $PID; wait $PID || true; PID=""

run() { # label, env for wrk
  local label=$1 wrk_env=$2
  rm -rf "$WORK/d"; cp -r "$WORK/template" "$WORK/d"
  $SERVER_PIN $BIN serve --listen 127.0.0.1:$PORT --data-dir "$WORK/d" --fsync "$FSYNC" >/dev/null 2>&1 &
  PID=$!
  sleep 1.5
  env PF_N=$PLAYERS $wrk_env $WRK_PIN wrk -t$WRK_THREADS -c50 -d"${WARM:-5s}" -s bench/wrk/submit.lua http://127.0.0.1:$PORT > "$WORK/warm.out"
  local warm; warm=$(awk '/requests in/{print $1}' "$WORK/warm.out")
  local c0 c1 reqs rss
  c0=$(ticks $PID)
  env PF_N=$PLAYERS $wrk_env $WRK_PIN wrk -t$WRK_THREADS -c50 -d"$DUR" --latency -s bench/wrk/submit.lua http://127.0.0.1:$PORT > "$WORK/wrk.out"
  c1=$(ticks $PID)
  rss=$(rss_kib $PID)
  reqs=$(awk '/requests in/{print $1}' "$WORK/wrk.out")
  local non2xx; non2xx=$(awk '/Non-2xx/{print $NF}' "$WORK/wrk.out"); non2xx=${non2xx:-0}
  printf '%s\t%s\t%s\t%s\n' "$round" "$label" "$(awk '/Requests\/sec/{print $2}' "$WORK/wrk.out")" \
    "$(per_req "$c0" "$c1" "$reqs")" >> "$WORK/results.tsv"
  printf '%-24s %9s ops/s  p99 %-7s server %5s µs/req  requests %8s  VmRSS %7s KiB  non-2xx %s\n' "$label" \
    "$(awk '/Requests\/sec/{print $2}' "$WORK/wrk.out")" "$(awk '$1=="99%"{print $2}' "$WORK/wrk.out")" \
    "$(per_req "$c0" "$c1" "$reqs")" "$((reqs + warm))" "$rss" "$non2xx"
  kill -TERM $PID; wait $PID || true; PID=""
}

for round in $(seq "$ROUNDS"); do
  for which in $(shuf -e bare pad idem); do
    case $which in
      bare) run "no key" "PF_X=1" ;;
      pad) run "no key, key-size pad" "PF_PAD=34" ;;
      idem) run "Idempotency-Key each" "PF_IDEM=1" ;;
    esac
  done
done
python3 bench/ratios.py "no key" < "$WORK/results.tsv"
