"""Benchmark of the exact solvers: ``python benchmarks/exact.py`` (issue 3, ``models/``).

A fixed set — ``kvopt.generators.generate("random", seed, n=n, memory=6n,
max_response=n)`` (mixed regimes, shares 1:1:1) for n = 12, 15, 18, 20, 22,
25, 30 and seeds 1, 2 — solved with a time limit (default 60 s) on 2 threads
twice: with kvopt's default (``solve(..., solver="auto")``) and with the
textbook model (the time-indexed IP of SPEC §5 over the horizon
``max a + Σ o``, one binary per job and start, no rounded rows, no warm
start, HiGHS with default options).  Prints a table (status, seconds,
objective, bound) and the count proven optimal.  ``--quick`` runs n ≤ 18 with
a 20 s limit; ``--modes`` selects other configurations for the measurements
quoted in ``models/``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from kvopt.exact import solve
from kvopt.exact.common import finish, start_windows
from kvopt.exact.highs_matrix import solve_highs
from kvopt.generators import generate

SIZES = (12, 15, 18, 20, 22, 25, 30)
SEEDS = (1, 2)


def instance(n: int, seed: int):
    return generate("random", seed, n=n, memory=6 * n, max_response=n)


def textbook(inst, time_limit: float, threads: int):
    """SPEC §5 as written: horizon max a + Σ o, no tightening, no warm start, HiGHS defaults."""
    t0 = time.monotonic()
    lo, hi = start_windows(inst, "total")
    raw = solve_highs(
        inst,
        "total",
        lo,
        hi,
        time_limit=time_limit,
        threads=threads,
        aggregate=False,
        cuts=(),
        defaults=True,
    )
    return finish(
        inst,
        "total",
        raw.starts,
        raw.bound,
        seconds=time.monotonic() - t0,
        solver="highs-textbook",
        solver_version=raw.solver_version,
        native_status=raw.native_status,
    )


MODES = {
    "default": lambda inst, tl, th: solve(inst, solver="auto", time_limit=tl, threads=th),
    "textbook": textbook,
    "highs": lambda inst, tl, th: solve(inst, solver="highs", time_limit=tl, threads=th),
    "highs1": lambda inst, tl, th: solve(inst, solver="highs", time_limit=tl, threads=1),
    "cpsat": lambda inst, tl, th: solve(inst, solver="cpsat", time_limit=tl, threads=th),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n <= 18, 20 s limit")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--modes", default="default,textbook", help=f"comma-separated, from {', '.join(MODES)}"
    )
    ap.add_argument("--sizes", default=None, help="comma-separated n values")
    args = ap.parse_args(argv)
    sizes = (
        [int(x) for x in args.sizes.split(",")]
        if args.sizes
        else ([n for n in SIZES if n <= 18] if args.quick else list(SIZES))
    )
    tl = args.time_limit or (20.0 if args.quick else 60.0)
    modes = args.modes.split(",")
    proven = dict.fromkeys(modes, 0)
    total_s = dict.fromkeys(modes, 0.0)
    head = f"{'n':>3} {'seed':>4} {'M':>4} " + " ".join(
        f"| {m[:10]:<10} {'status':<8} {'sec':>6} {'obj':>6} {'bound':>6}" for m in modes
    )
    print(
        f"time limit {tl:g} s, {args.threads} threads; machine load at start "
        f"{open('/proc/loadavg').read().split()[0]}"
    )
    print(head)
    print("-" * len(head))
    for n in sizes:
        for seed in SEEDS:
            inst = instance(n, seed)
            cells = []
            for m in modes:
                res = MODES[m](inst, tl, args.threads)
                proven[m] += res.optimal
                total_s[m] += res.seconds
                cells.append(
                    f"| {'':<10} {res.status.value:<8} {res.seconds:6.1f} "
                    f"{str(res.objective):>6} {str(res.bound):>6}"
                )
            print(f"{n:>3} {seed:>4} {inst.memory:>4} " + " ".join(cells), flush=True)
    count = len(sizes) * len(SEEDS)
    for m in modes:
        print(f"{m}: {proven[m]}/{count} proven optimal, {total_s[m]:.0f} s in total")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    np.set_printoptions(linewidth=120)
    raise SystemExit(main())
