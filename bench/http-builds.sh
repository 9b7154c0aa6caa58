#!/usr/bin/env bash
# Two builds of the server side by side over HTTP on the embedded store, in paired rounds
# (issue 64's regression rows in docs/BENCHMARKS.md): each build loads its own copy of the
# same MEMBERS members (bench/load.py: the data format may differ between builds), both
# servers then run at once, idle but for the one under load, and each round runs wrk's
# writes (bench/wrk/submit.lua) and rank reads (bench/wrk/rank.lua) against each, the
# order of the four loads shuffled per round so the machine's drift falls on both alike.
# The end prints, per load, the median over rounds of B's ops/s and server CPU per request
# relative to A's in the same round, with a 95% bootstrap interval (bench/ratios.py).
#
# Usage: bench/http-builds.sh A_BINARY B_BINARY [ROUNDS] [DURATION] [MEMBERS]
#        (defaults 8 rounds, 10s, 1,000,000 members; wrk -t2 -c50; FSYNC=everysec)
# PIN=1: the servers on CPU 0 and wrk (one thread) on CPU 1.
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2 ROUNDS=${3:-8} DUR=${4:-10s} N=${5:-1000000}
PLAYERS=$N BIN=$A PORT=7795
WORK=$(mktemp -d)
source bench/paired.sh

template() { # binary, dir: a data dir holding the board `bench` of N members, written by binary
  "$1" serve --listen 127.0.0.1:$PORT --resp-listen off --data-dir "$2" --fsync everysec >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
  python3 bench/load.py "http://127.0.0.1:$PORT" bench "$N" 2>/dev/null
  kill -TERM $pid; wait $pid || true
}
template "$A" "$WORK/template-a"
template "$B" "$WORK/template-b"
mv "$WORK/template-a" "$WORK/template"; SERVER_BIN=$A start a $((PORT + 1))
rm -rf "$WORK/template"; mv "$WORK/template-b" "$WORK/template"; SERVER_BIN=$B start b $((PORT + 2))
for port in $((PORT + 1)) $((PORT + 2)); do
  for _ in $(seq 300); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
done

load() { # build write|rank, duration
  case $2 in
    write) SCRIPT=submit.lua run "$1 write" "$1" "PF_X=1" "$3" ;;
    rank) SCRIPT=rank.lua run "$1 rank" "$1" "PF_X=1" "$3" ;;
  esac
}
round=""
for s in a b; do load $s write 5s; load $s rank 5s; done # warm-up: not recorded
for round in $(seq "$ROUNDS"); do
  for which in $(shuf -e a:write b:write a:rank b:rank); do
    load "${which%:*}" "${which#*:}" "$DUR"
  done
done
echo "VmRSS after the rounds: A $(rss_kib "${PID_OF[a]}") KiB, B $(rss_kib "${PID_OF[b]}") KiB"
echo "== writes (B relative to A)"
grep -P '\t(a|b) write\t' "$WORK/results.tsv" | python3 bench/ratios.py "a write"
echo "== rank reads (B relative to A)"
grep -P '\t(a|b) rank\t' "$WORK/results.tsv" | python3 bench/ratios.py "a rank"
