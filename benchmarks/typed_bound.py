"""The screening bound on typed instances: ``python benchmarks/typed_bound.py [--seconds 10,30]``.

Compares :func:`kvopt.exact.typed_bound` (clique LP, then the time-block
column generation; ``models/time-indexed.md`` §9.8) with the version of
issue 17's first round (clique LP within 40 % of the time, then HiGHS's root
node), on the typed instances of ``benchmarks/relaxations.py --typed K``.
The gap is ``(UB − bound) / UB`` against the 0.1 s heuristic's ``UB``.
"""

from __future__ import annotations

import argparse
import math
import time

from relaxations import typed_instances

from kvopt.errors import SolverError
from kvopt.exact import typed_bound
from kvopt.exact.bounds.relax import clique_lp, highs_root
from kvopt.exact.common import lower_bound, start_windows, value_of
from kvopt.exact.heuristic import heuristic_starts


def root_bound(instance, time_limit: float) -> tuple[int, int]:
    """The earlier ``typed_bound``: cliques (40 % of the time), then HiGHS's root node; and UB."""
    t0 = time.monotonic()
    cheap = lower_bound(instance, "total")
    st = heuristic_starts(instance, "total", seconds=min(0.1, 0.1 * time_limit))
    ub = value_of(instance, st, "total")
    lo, hi = start_windows(instance, "total", ub)
    best = float(cheap)
    try:
        lp, _ = clique_lp(instance, lo, hi, time_limit=0.4 * time_limit)
        best = max(best, lp.value)
    except SolverError:
        pass
    left = time_limit - (time.monotonic() - t0)
    if left > 0.05:
        try:
            best = max(best, highs_root(instance, lo, hi, time_limit=left))
        except SolverError:
            pass
    return int(min(ub, math.ceil(best - 1e-6))), ub


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--typed", type=int, default=4, metavar="K")
    ap.add_argument("--seconds", default="10,30", help="comma-separated time limits")
    args = ap.parse_args()
    try:
        limits = [float(x) for x in args.seconds.split(",")]
    except ValueError:
        ap.error(f"--seconds: comma-separated numbers, got {args.seconds!r}")
    if args.typed < 1 or not all(x > 0 for x in limits):
        ap.error("--typed must be >= 1 and every --seconds value > 0")
    print(f"machine load at start {open('/proc/loadavg').read().split()[0]}")
    for tl in limits:
        for k, inst in enumerate(typed_instances(args.typed)):
            t = time.monotonic()
            old, ub = root_bound(inst, tl)
            a = time.monotonic() - t
            t = time.monotonic()
            new = typed_bound(inst, tl)
            b = time.monotonic() - t
            print(
                f"limit {tl:4.0f} s  typed{k} n={inst.n:4d}  UB {ub:8d} | cliques+root {old:8d} "
                f"gap {100 * (ub - old) / ub:5.1f} % ({a:4.1f} s) | typed_bound {new:8d} "
                f"gap {100 * (ub - new) / ub:5.1f} % ({b:4.1f} s)",
                flush=True,
            )
    print(f"machine load at end {open('/proc/loadavg').read().split()[0]}")


if __name__ == "__main__":
    main()
