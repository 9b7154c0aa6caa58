#!/usr/bin/env bash
# RESP `LB.RANK` on the Redis backend beside the embedded store's, in paired rounds
# (docs/bench-history.md §25): each round runs bench/rank-fresh.sh on the embedded store and
# on the Redis backend (every other round in the other order), takes each one's median of
# its three runs at -P 16 and unpipelined, and bench/ratios.py prints the median of the
# per-round ratios with a 95% interval. One request thread (WORKERS=N for N), 50 clients,
# 1,000,000 members.
#
#   ROUNDS=5 ./bench/rank-paired.sh                       # fresh reads (the default)
#   ROUNDS=5 PF_REDIS_READS=local ./bench/rank-paired.sh  # --redis-reads local
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
one() { # one ROUND LABEL [VAR=VALUE…]: rank-fresh.sh's medians as ratios.py lines
    local round=$1 label=$2
    shift 2
    env "$@" ./bench/rank-fresh.sh | while IFS= read -r line; do echo "$line" >&2; echo "$line"; done |
        python3 -c '
import re, statistics, sys
pat = r"-P16 ([\d.]+) /s \(([\d.]+) µs\); -P1 ([\d.]+) /s \(([\d.]+) µs\)"
rows = [r for r in (re.search(pat, l) for l in sys.stdin) if r]
for k, p in ((1, "P16"), (3, "P1")):
    ops = statistics.median(float(r.group(k)) for r in rows)
    cpu = statistics.median(float(r.group(k + 1)) for r in rows)
    print("%s\t%s %s\t%.0f\t%.2f" % (sys.argv[1], sys.argv[2], p, ops, cpu))
' "$round" "$label"
}
for round in $(seq 1 "$ROUNDS"); do
    redis=(PF_STORAGE=redis PF_REDIS_READS="${PF_REDIS_READS:-fresh}")
    if [ $((round % 2)) = 1 ]; then
        one "$round" embedded -u PF_REDIS_READS
        one "$round" redis "${redis[@]}"
    else
        one "$round" redis "${redis[@]}"
        one "$round" embedded -u PF_REDIS_READS
    fi
done | python3 -c '
import subprocess, sys
lines = sys.stdin.read().splitlines()
for p in ("P16", "P1"):
    rows = [l.replace(" " + p, "") for l in lines if l.split("\t")[1].endswith(p)]
    print("LB.RANK -" + p.replace("P", "P "))
    subprocess.run([sys.executable, "bench/ratios.py", "embedded"], input="\n".join(rows) + "\n", text=True, check=True)
'
