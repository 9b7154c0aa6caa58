#!/usr/bin/env python3
"""Paired ratios of benchmark runs to a baseline, per round, with a bootstrap interval.

Reads lines `round<TAB>label<TAB>ops_per_s<TAB>server_us_per_req` on stdin (the bench
scripts write them) and, for every label but the baseline (argv[1]), prints the median over
rounds of ops/s ÷ the same round's baseline ops/s and of server CPU per request ÷ the
baseline's, each with a 95% bootstrap interval of the median (10,000 resamples of the
rounds, fixed seed) and the per-round ratios. Pairing within a round cancels the machine's
slow drift; the interval says how far the median can be trusted on this machine.
"""

import random
import statistics
import sys
from collections import defaultdict


def interval(values, resamples=10_000, seed=1):
    rng = random.Random(seed)
    medians = sorted(
        statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples)
    )
    return medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def main():
    base = sys.argv[1]
    runs = defaultdict(dict)
    order = []
    for line in sys.stdin:
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 4:
            continue
        rnd, label, ops, cpu = parts
        runs[rnd][label] = (float(ops), float(cpu))
        if label not in order:
            order.append(label)
    for label in order:
        if label == base:
            continue
        ops = [r[label][0] / r[base][0] for r in runs.values() if label in r and base in r]
        cpu = [r[label][1] / r[base][1] for r in runs.values() if label in r and base in r]
        if not ops:
            continue
        lo, hi = interval(ops)
        clo, chi = interval(cpu)
        print(
            f"{label:<22} ops/s {statistics.median(ops):.3f} [95% {lo:.3f}–{hi:.3f}]"
            f"  server CPU/req {statistics.median(cpu):.3f} [95% {clo:.3f}–{chi:.3f}]"
            f"  rounds {len(ops)}"
        )
        print("    per round ops/s: " + " ".join(f"{v:.2f}" for v in ops))


if __name__ == "__main__":
    main()
