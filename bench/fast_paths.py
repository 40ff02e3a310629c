#!/usr/bin/env python3
"""Summarizes bench/alternate's output for bench/fast_paths.sh.

usage: fast_paths.py TASKS STATE_BYTES NOW_RAW [PAIR_RAW...]

NOW_RAW is the loop of devgraph ("dg"), the reference and the floors: one
line each (runs, wall-clock p50, p25 and min, CPU p50, in ms) and the
reference's median over devgraph's. Each PAIR_RAW is a loop of "dg" and
one other command: both medians and the median of the per-round
differences (the other command's run minus dg's run of the same round)
with a 95% bootstrap interval. When the other command is devgraph without
a fast path, that difference is what the fast path gains.
"""
import random
import statistics
import sys
from collections import defaultdict


def pct(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def load(path):
    wall = defaultdict(dict)  # label -> round -> ms
    cpu = defaultdict(list)
    order = []
    for line in open(path):
        r, label, w, c = line.split()
        if label not in wall:
            order.append(label)
        wall[label][int(r)] = int(w) / 1e6
        cpu[label].append(int(c) / 1e6)
    return order, wall, cpu


def main():
    tasks, size = sys.argv[1], int(sys.argv[2])
    order, wall, cpu = load(sys.argv[3])
    print(f"tasks={tasks} state={size / 1024:.1f} KiB")
    print(f"  {'command':<18} {'runs':>5} {'p50':>8} {'p25':>8} {'min':>8} {'cpu p50':>8}  [ms]")
    for label in order:
        xs = list(wall[label].values())
        print(f"  {label:<18} {len(xs):>5} {statistics.median(xs):>8.3f} {pct(xs, 0.25):>8.3f} "
              f"{min(xs):>8.3f} {statistics.median(cpu[label]):>8.3f}")
    dg = statistics.median(wall["dg"].values())
    py = statistics.median(wall["reference"].values())
    print(f"  ratio: reference / devgraph = {py / dg:.0f}x")
    rng = random.Random(1)
    print(f"  {'without':<18} {'runs':>5} {'dg p50':>8} {'p50':>8}  paired difference, 95% interval [ms]")
    for path in sys.argv[4:]:
        order, wall, _ = load(path)
        other = next(label for label in order if label != "dg")
        diffs = [wall[other][r] - wall["dg"][r] for r in wall[other] if r in wall["dg"]]
        boots = sorted(statistics.median(rng.choices(diffs, k=len(diffs))) for _ in range(1000))
        print(f"  {other:<18} {len(diffs):>5} {statistics.median(wall['dg'].values()):>8.3f} "
              f"{statistics.median(wall[other].values()):>8.3f}  {statistics.median(diffs):+.3f} "
              f"[{boots[25]:+.3f}, {boots[974]:+.3f}]")


if __name__ == "__main__":
    main()
