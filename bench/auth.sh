#!/usr/bin/env bash
# What credentials cost: HTTP writes with no credential (an open server), with an API key,
# and with players' ES256 tokens (each request its own member's token), same build, same
# data, same run, in turn. Writes go to PLAYERS random members of a board of MEMBERS; each
# server first takes a 5-s warm-up of the same load (so every player's token has been
# verified once and sits in the cache), then the measured run. A fourth run sends the open
# server requests padded (an `X-Pad` header) to the size of the token-bearing ones, to
# tell the cost of verifying from the cost of the bytes.
#
# Usage: bench/auth.sh [ROUNDS] [DURATION] [MEMBERS] [PLAYERS]  (defaults 3 15s 100000 10000)
# Each round runs the four in a random order (so the machine's drift falls on each alike);
# the end prints, per credential, the median over rounds of its ops/s and server CPU per
# request relative to the same round's open server, with a 95% bootstrap interval of that
# median (bench/ratios.py).
# PIN=1: the server on CPU 0 and wrk (one thread) on CPU 1 (taskset), so neither takes the
# other's core: steadier per-request numbers on a 2-core machine.
# Needs: cargo build --release -p photofinish && cargo build --release -p photofinish-server
#        --example player_tokens; wrk; python3. fsync everysec, 50 connections. Prints
# ops/s, p99, and the server's and wrk's CPU µs per request (utime+stime from /proc).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3} DUR=${2:-15s} N=${3:-100000} PLAYERS=${4:-10000}
BIN=target/release/photofinish
TOKENS_BIN=target/release/examples/player_tokens
PORT=7792
SERVER_PIN="" WRK_PIN="" WRK_THREADS=2
if [ "${PIN:-0}" = 1 ]; then SERVER_PIN="taskset -c 0" WRK_PIN="taskset -c 1" WRK_THREADS=1; fi
WORK=$(mktemp -d)
PID=""
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$WORK"' EXIT
ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
per_req() { awk -v a="$1" -v b="$2" -v n="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (b - a) * 1000000 / hz / n }'; }
follow() { local t=0 n; while kill -0 "$1" 2>/dev/null; do n=$(ticks "$1"); [ "$n" -gt 0 ] && t=$n; sleep 0.2; done; echo "$t"; }

ADMIN=$($BIN key new --keys "$WORK/keys.json" --name admin --scope admin)
WRITE=$($BIN key new --keys "$WORK/keys.json" --name game --scope write)
$TOKENS_BIN "$PLAYERS" > "$WORK/tokens"
JWT=(--jwt-key crates/photofinish-server/tests/it/fixtures/es256-public.pem)

# One data dir, loaded once, copied for every run.
$BIN serve --listen 127.0.0.1:$PORT --data-dir "$WORK/template" --fsync everysec --keys "$WORK/keys.json" >/dev/null 2>&1 &
PID=$!
sleep 1
PF_TOKEN=$ADMIN python3 bench/load.py http://127.0.0.1:$PORT bench "$N" '{"player_writes":true}' 2>/dev/null
kill -TERM $PID; wait $PID || true; PID=""

run() { # label, env for wrk, serve flags...
  local label=$1 wrk_env=$2; shift 2
  rm -rf "$WORK/d"; cp -r "$WORK/template" "$WORK/d"
  $SERVER_PIN $BIN serve --listen 127.0.0.1:$PORT --data-dir "$WORK/d" --fsync everysec "$@" >/dev/null 2>&1 &
  PID=$!
  sleep 1.5
  env PF_N=$PLAYERS $wrk_env $WRK_PIN wrk -t$WRK_THREADS -c50 -d5s -s bench/wrk/submit.lua http://127.0.0.1:$PORT > /dev/null
  local c0 c1 w w0 w1 reqs
  c0=$(ticks $PID)
  env PF_N=$PLAYERS $wrk_env $WRK_PIN wrk -t$WRK_THREADS -c50 -d"$DUR" --latency -s bench/wrk/submit.lua http://127.0.0.1:$PORT > "$WORK/wrk.out" &
  w=$!
  sleep 0.3; w0=$(ticks $w); w1=$(follow $w)
  c1=$(ticks $PID)
  reqs=$(awk '/requests in/{print $1}' "$WORK/wrk.out")
  local non2xx; non2xx=$(awk '/Non-2xx/{print $NF}' "$WORK/wrk.out"); non2xx=${non2xx:-0}
  printf '%s\t%s\t%s\t%s\n' "$round" "$label" "$(awk '/Requests\/sec/{print $2}' "$WORK/wrk.out")" \
    "$(per_req "$c0" "$c1" "$reqs")" >> "$WORK/results.tsv"
  printf '%-22s %9s ops/s  p99 %-7s server %4s µs/req  wrk %4s µs/req  non-2xx %s\n' "$label" \
    "$(awk '/Requests\/sec/{print $2}' "$WORK/wrk.out")" "$(awk '$1=="99%"{print $2}' "$WORK/wrk.out")" \
    "$(per_req "$c0" "$c1" "$reqs")" "$(per_req "$w0" "$w1" "$reqs")" "$non2xx"
  kill -TERM $PID; wait $PID || true; PID=""
}

PAD=$(head -1 "$WORK/tokens" | wc -c)
for round in $(seq "$ROUNDS"); do
  for which in $(shuf -e open pad key player); do
    case $which in
      open) run "no credential (open)" "PF_X=1" ;;
      pad) run "open, token-size pad" "PF_PAD=$PAD" ;;
      key) run "API key" "PF_TOKEN=$WRITE" --keys "$WORK/keys.json" ;;
      player) run "player ES256 token" "PF_TOKENS=$WORK/tokens" --keys "$WORK/keys.json" "${JWT[@]}" ;;
    esac
  done
done
python3 bench/ratios.py "no credential (open)" < "$WORK/results.tsv"
