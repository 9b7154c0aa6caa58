#!/usr/bin/env bash
# Two builds of the bench harness in alternating rounds of one of its engine benchmarks,
# and the median ratio of each figure (B ÷ A) with a 95% bootstrap interval: what a
# change to the engine costs or saves, with the machine's drift cancelled in each pair.
#
#   bench/engine-paired.sh OLD_BENCH NEW_BENCH engine-ops|board-ops [harness flags…]
#   ROUNDS=5 bench/engine-paired.sh /tmp/old/photofinish-bench \
#       target/release/photofinish-bench engine-ops --members 1000000 --ops 200000
#
# Each round runs A then B (the order alternates every round), each printing its one JSON
# line (`--json`); every numeric field of it is paired. Times are ns (lower is better): a
# ratio below 1 is B faster.
set -euo pipefail
A="$1" B="$2"; shift 2
ROUNDS="${ROUNDS:-5}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for side in $order; do
    bin=$A; [ "$side" = B ] && bin=$B
    "$bin" "$@" --json | tail -n 1 > "$WORK/$round.$side.json"
  done
  echo "round $round done" >&2
done

python3 - "$WORK" "$ROUNDS" <<'PY'
import json, random, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])

def flat(v, prefix=""):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from flat(x, f"{prefix}{k}.")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from flat(x, f"{prefix}{i}.")
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        yield prefix.rstrip("."), float(v)

def interval(values, resamples=10_000, seed=1):
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples))
    return meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]

pairs = {}
for r in range(1, rounds + 1):
    a = dict(flat(json.load(open(f"{work}/{r}.A.json"))))
    b = dict(flat(json.load(open(f"{work}/{r}.B.json"))))
    for k, va in a.items():
        if k in b and va:
            pairs.setdefault(k, []).append((va, b[k], b[k] / va))
print(f"{'figure':<32} {'A median':>12} {'B median':>12} {'B/A median':>10}  95% interval")
for k, ps in pairs.items():
    ratios = [p[2] for p in ps]
    lo, hi = interval(ratios)
    print(f"{k:<32} {statistics.median(p[0] for p in ps):>12.2f} "
          f"{statistics.median(p[1] for p in ps):>12.2f} {statistics.median(ratios):>10.3f}  [{lo:.3f}, {hi:.3f}]")
PY
