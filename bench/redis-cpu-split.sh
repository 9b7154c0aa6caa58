#!/usr/bin/env bash
# The Redis backend's cost per operation where it does not depend on the host: CPU per
# command for the Photofinish node and for its Redis, each read from /proc, beside Redis's
# own CPU per ZINCRBY / ZREVRANK on the same Redis (issue #64). One Redis (appendonly yes,
# appendfsync everysec), one node on it (--workers 1, --redis-reads fresh), MEMBERS members
# in the ZSET `lb` and the board `lb`; redis-benchmark, 50 clients, members from -r
# 1000000. ROUNDS paired rounds, alternating which side goes first; each prints a markdown
# row: ops/s, node µs/op, Redis µs/op, their sum.
#
#   MEMBERS=1000000 ROUNDS=3 ./bench/redis-cpu-split.sh
#
# PIPELINES (default "1 16") picks the pipeline depths; COMMANDS=writes runs only the
# LB.INCR / ZINCRBY pair. A node's LB.INCR row also gives the writes an append carried
# (`INFO commandstats`: the run's writes over its EVALSHA calls).
#
# PERF=1 also records the node (perf record -g at PERF_HZ, default 499) during one LB.INCR
# run (unpipelined; PERF_P=16 pipelined) and prints its flat profile's top lines; ROUNDS=0
# records only that.
set -euo pipefail
cd "$(dirname "$0")/.."
MEMBERS=${MEMBERS:-1000000}
ROUNDS=${ROUNDS:-3}
N1=${N1:-300000}    # requests per unpipelined run
N16=${N16:-2000000} # requests per -P 16 run
BIN=${BIN:-target/release/photofinish}
PF_STORAGE=redis
WORKERS_ARG=(--workers 1)
SERVER_PIN=()
source bench/resp-servers.sh

# Calls of scripts (EVALSHA) Redis has run so far.
script_calls() {
    redis-cli -p "$RPORT" INFO commandstats | awk -F'[:=,]' '$1 == "cmdstat_evalsha" {print $3; f = 1} END {if (!f) print 0}'
}

# split PORT P N COMMAND…: one redis-benchmark run; prints "<ops/s> <node µs/op> <redis µs/op>
# <writes an append carried>".
split() {
    local port=$1 p=$2 n=$3
    shift 3
    local nb rb na ra rps cb ca
    cb=$(script_calls)
    nb=$(ticks_of "$PPID_PF")
    rb=$(ticks_of "$RPID")
    rps=$(redis-benchmark -p "$port" -c 50 -n "$n" -r 1000000 -P "$p" --csv "$@" 2>/dev/null |
        awk -F'","' 'NR == 2 {print $2}')
    na=$(ticks_of "$PPID_PF")
    ra=$(ticks_of "$RPID")
    ca=$(script_calls)
    awk -v r="$rps" -v a=$((na - nb)) -v b=$((ra - rb)) -v n="$n" -v hz="$TICK" -v c=$((ca - cb)) \
        'BEGIN { printf "%s %.2f %.2f %s\n", r, a * 1e6 / hz / n, b * 1e6 / hz / n, (c > 0 ? sprintf("%.1f", n / c) : "-") }'
}
row() { # row ROUND LABEL P N PORT COMMAND…
    local round=$1 label=$2 p=$3 n=$4 port=$5
    shift 5
    local rps node redis per
    read -r rps node redis per <<<"$(split "$port" "$p" "$n" "$@")"
    case "$label" in node*INCR) ;; *) per=- ;; esac # only the node's writes append
    awk -v k="$round" -v l="$label" -v p="$p" -v r="$rps" -v a="$node" -v b="$redis" -v c="$per" \
        'BEGIN { printf "| %s | %s | %s | %.0f | %.2f | %.2f | %.2f | %s |\n", k, l, p, r, a, b, a + b, c }'
}
echo "members: $MEMBERS; redis $(redis-server --version | awk '{print $3}'); $(nproc) cores; node --workers 1, --redis-reads fresh"
echo
echo "| round | command | pipeline | ops/s | node µs/op | redis µs/op | sum µs/op | writes an append |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
for round in $(seq "$ROUNDS"); do
    for p in ${PIPELINES:-1 16}; do
        n=$N1
        [ "$p" = 16 ] && n=$N16
        pairs=("ZINCRBY lb 1 m:__rand_int__|LB.INCR lb m:__rand_int__ 1")
        [ "${COMMANDS:-}" = writes ] || pairs+=("ZREVRANK lb m:__rand_int__|LB.RANK lb m:__rand_int__")
        for pair in "${pairs[@]}"; do
            redis_cmd=${pair%%|*}
            node_cmd=${pair##*|}
            # shellcheck disable=SC2086 # the commands split into words
            if [ $((round % 2)) = 1 ]; then
                row "$round" "redis ${redis_cmd%% *}" "$p" "$n" "$RPORT" $redis_cmd
                row "$round" "node ${node_cmd%% *}" "$p" "$n" "$PPORT" $node_cmd
            else
                row "$round" "node ${node_cmd%% *}" "$p" "$n" "$PPORT" $node_cmd
                row "$round" "redis ${redis_cmd%% *}" "$p" "$n" "$RPORT" $redis_cmd
            fi
        done
    done
done
if [ -n "${PERF:-}" ]; then
    # PERF_P: the pipeline depth; PERF_CG: perf's call-graph option (e.g. "--call-graph dwarf");
    # PERF_OUT: keep the recording there (to read it again with perf report).
    out=${PERF_OUT:-$WORK/node.perf}
    p=${PERF_P:-1}
    n=$N1
    [ "$p" != 1 ] && n=$N16
    # shellcheck disable=SC2086 # PERF_CG splits into perf's words
    perf record -F "${PERF_HZ:-499}" ${PERF_CG:--g} -p "$PPID_PF" -o "$out" -- sleep 8 >/dev/null 2>&1 &
    PERF_PID=$!
    sleep 0.5
    redis-benchmark -p "$PPORT" -c 50 -n "$n" -r 1000000 -P "$p" LB.INCR lb m:__rand_int__ 1 >/dev/null 2>&1
    wait "$PERF_PID" || true
    echo
    echo "node profile, LB.INCR at -P $p (perf report --no-children, self time):"
    perf report -i "$out" --no-children --sort symbol --stdio 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -"${PERF_TOP:-30}"
fi
