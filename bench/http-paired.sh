#!/usr/bin/env bash
# The Redis backend's HTTP rate beside the embedded store's, in paired rounds (docs/
# bench-history.md §24): each round runs `photofinish-bench --targets http,http-redis` (every
# other round in the other order) and records both rates and the server's CPU an
# operation; bench/ratios.py prints the median of the per-round ratios with a 95% interval.
# Single runs on the 2-core VM move by ±15%; pairing within a round cancels the drift.
#
#   ROUNDS=8 ./bench/http-paired.sh --mix 100,0,0,0                       # writes
#   ROUNDS=8 ./bench/http-paired.sh --mix 0,100,0,0 --server-workers 1    # reads, one thread
#
# Extra arguments go to photofinish-bench (defaults: 1,000,000 members, 10 s, 50 clients).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${BENCH:-target/release/photofinish-bench}
ROUNDS=${ROUNDS:-8}
for round in $(seq 1 "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then order=http,http-redis; else order=http-redis,http; fi
    "$BENCH" --targets "$order" --members "${MEMBERS:-1000000}" --duration "${DURATION:-10}" \
        --clients "${CLIENTS:-50}" --json "$@" 2>/dev/null | tail -n 1 |
        python3 -c '
import json, sys
for r in json.load(sys.stdin):
    label = "embedded" if "embedded" in r["target"] else "redis"
    print("%s\t%s\t%.0f\t%.1f" % (sys.argv[1], label, r["ops_per_sec"], r["cpu_us_per_op"]))
' "$round"
done | while IFS= read -r line; do echo "$line" >&2; echo "$line"; done |
    python3 bench/ratios.py embedded
