#!/usr/bin/env bash
# Submit throughput and CPU per request of builds side by side, beside the seed-000 Lua
# increment on Redis: what a change to the write path buys, measured in a way that the
# machine's drifting speed disturbs less than ops/s alone.
#
# Usage: bench/submit_cpu.sh ROUNDS DURATION BIN [BIN...]
#   e.g. bench/submit_cpu.sh 3 12s /tmp/before target/release/photofinish
# Loads 1M members once (with the first BIN) into a template data dir, shuts down cleanly
# (snapshot), then per round and BIN: copies the template, starts `BIN serve --fsync
# everysec` (env FSYNC overrides), runs wrk at 50 connections with bench/wrk/submit.lua and
# prints ops/s, p99, the server's CPU µs per request (utime+stime from /proc) and wrk's.
# Each run starts right after a snapshot, so it measures between compactions (a run of
# ~20 s at 50K/s ends before the next one); bench/http.sh measures with them.
# With REDIS=1 each round also runs redis-benchmark with the seed-000 Lua increment on a
# 1M-member ZSET and prints the same columns for redis-server and redis-benchmark
# (REDIS_REQS requests, default 700,000 — about 15 s; 3,000,000 matches a 60-s DURATION).
# A DURATION of 60s or more includes the compactions the writes cause (~1 per 1.3M writes).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=$1 DUR=$2
shift 2
PORT=7790 RPORT=6391
export PF_N=1000000
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
per_req() { awk -v a="$1" -v b="$2" -v n="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (b - a) * 1000000 / hz / n }'; }
# CPU ticks of a process, sampled until it exits.
follow() { local t=0 n; while kill -0 "$1" 2>/dev/null; do n=$(ticks "$1"); [ "$n" -gt 0 ] && t=$n; sleep 0.2; done; echo "$t"; }

"$1" serve --listen 127.0.0.1:$PORT --data-dir "$WORK/template" --fsync everysec >/dev/null 2>&1 &
PID=$!
sleep 1
python3 bench/load.py http://127.0.0.1:$PORT bench 1000000 2>/dev/null
kill -TERM $PID; wait $PID || true

for round in $(seq "$ROUNDS"); do
  for BIN in "$@"; do
    rm -rf "$WORK/d"; cp -r "$WORK/template" "$WORK/d"
    "$BIN" serve --listen 127.0.0.1:$PORT --data-dir "$WORK/d" --fsync "${FSYNC:-everysec}" >/dev/null 2>&1 &
    PID=$!
    sleep 2
    C0=$(ticks $PID)
    wrk -t2 -c50 -d"$DUR" --latency -s bench/wrk/submit.lua http://127.0.0.1:$PORT > "$WORK/wrk.out" &
    W=$!
    sleep 0.3; W0=$(ticks $W); W1=$(follow $W)
    C1=$(ticks $PID)
    REQS=$(awk '/requests in/{print $1}' "$WORK/wrk.out")
    printf '%-40s %9s ops/s  p99 %-7s server %4s µs/req  wrk %4s µs/req\n' "$BIN" \
      "$(awk '/Requests\/sec/{print $2}' "$WORK/wrk.out")" "$(awk '$1=="99%"{print $2}' "$WORK/wrk.out")" \
      "$(per_req "$C0" "$C1" "$REQS")" "$(per_req "$W0" "$W1" "$REQS")"
    kill -TERM $PID; wait $PID || true
  done
  if [ "${REDIS:-0}" = 1 ]; then
    redis-server --port $RPORT --save '' --appendonly no --daemonize yes --logfile /dev/null --pidfile "$WORK/redis.pid"
    sleep 0.5
    python3 bench/redis_load.py zb 1000000 | redis-cli -p $RPORT --pipe >/dev/null
    INCR=$(redis-cli -p $RPORT script load "$(cat bench/seed000_incr.lua)")
    RPID=$(cat "$WORK/redis.pid")
    REQS=${REDIS_REQS:-700000}
    C0=$(ticks "$RPID")
    redis-benchmark -p $RPORT -c 50 -n $REQS -r 1000000 -q EVALSHA "$INCR" 2 zb pf00__rand_int__ 1 0.0000123 > "$WORK/rb.out" &
    B=$!
    sleep 0.3; B0=$(ticks $B); B1=$(follow $B)
    C1=$(ticks "$RPID")
    printf '%-40s %9s ops/s  p50 %-7s server %4s µs/req  bench %4s µs/req\n' "redis seed-000 Lua increment" \
      "$(tr '\r' '\n' < "$WORK/rb.out" | grep -o '[0-9.]* requests per second' | cut -d' ' -f1)" \
      "$(tr '\r' '\n' < "$WORK/rb.out" | grep -o 'p50=[0-9.]* msec' | cut -d= -f2)" \
      "$(per_req "$C0" "$C1" "$REQS")" "$(per_req "$B0" "$B1" "$REQS")"
    redis-cli -p $RPORT shutdown nosave >/dev/null 2>&1 || true
  fi
done
