# Sourced by bench/auth.sh and bench/idempotency.sh: servers started once, and short paired
# runs of wrk against them, each recorded for bench/ratios.py.
#
# The sourcing script sets BIN, WORK (a temporary dir holding `template`, a loaded data
# dir), PLAYERS (members written) and, per round, `round` (empty: a warm-up, not recorded).
# SERVER_BIN (default $BIN) is the binary `start` runs; SCRIPT (default submit.lua) the
# bench/wrk script `run` loads. PIN=1: the servers on CPU 0 and wrk (one thread) on CPU 1
# (taskset). FSYNC (default everysec) is every server's fsync policy.

SERVER_PIN="" WRK_PIN="" WRK_THREADS=2
if [ "${PIN:-0}" = 1 ]; then SERVER_PIN="taskset -c 0" WRK_PIN="taskset -c 1" WRK_THREADS=1; fi
PIDS=()
declare -A PORT_OF PID_OF
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null; done; wait; rm -rf "$WORK"' EXIT

ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kib() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
per_req() { awk -v a="$1" -v b="$2" -v n="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (b - a) * 1000000 / hz / n }'; }

start() { # name, port, serve flags...: a server on a copy of $WORK/template
  local name=$1 port=$2; shift 2
  cp -r "$WORK/template" "$WORK/$name"
  $SERVER_PIN "${SERVER_BIN:-$BIN}" serve --listen 127.0.0.1:$port --resp-listen off --data-dir "$WORK/$name" \
    --fsync "${FSYNC:-everysec}" "$@" >/dev/null 2>&1 &
  PIDS+=($!); PID_OF[$name]=$!; PORT_OF[$name]=$port
}

run() { # label, server, env for wrk, duration: one wrk run, recorded unless $round is empty
  local label=$1 server=$2 wrk_env=$3 dur=$4
  local pid=${PID_OF[$server]} url=http://127.0.0.1:${PORT_OF[$server]}
  local c0 c1 w w0 w1 n reqs
  c0=$(ticks "$pid")
  env PF_N=$PLAYERS $wrk_env $WRK_PIN wrk -t$WRK_THREADS -c50 -d"$dur" --latency -s "bench/wrk/${SCRIPT:-submit.lua}" "$url" > "$WORK/wrk.out" &
  w=$!
  sleep 0.3; w0=$(ticks $w); w1=$w0
  while kill -0 $w 2>/dev/null; do n=$(ticks $w); [ "$n" -gt 0 ] && w1=$n; sleep 0.2; done
  c1=$(ticks "$pid")
  [ -z "$round" ] && return
  reqs=$(awk '/requests in/{print $1}' "$WORK/wrk.out")
  local non2xx; non2xx=$(awk '/Non-2xx/{print $NF}' "$WORK/wrk.out"); non2xx=${non2xx:-0}
  printf '%s\t%s\t%s\t%s\n' "$round" "$label" "$(awk '/Requests\/sec/{print $2}' "$WORK/wrk.out")" \
    "$(per_req "$c0" "$c1" "$reqs")" >> "$WORK/results.tsv"
  printf '%3s %-24s %9s ops/s  p99 %-7s server %5s µs/req  wrk %4s µs/req  non-2xx %s\n' "$round" "$label" \
    "$(awk '/Requests\/sec/{print $2}' "$WORK/wrk.out")" "$(awk '$1=="99%"{print $2}' "$WORK/wrk.out")" \
    "$(per_req "$c0" "$c1" "$reqs")" "$(per_req "$w0" "$w1" "$reqs")" "$non2xx"
}
