"""Benchmark of the adversarial search: ``python benchmarks/search.py [--budget N] [--quick]``.

Two tables, every campaign in a fresh temporary folder with seed 0:

1. **Throughput per strategy** — evaluations per second, exact solves and the
   best certified ratio after ``--budget`` evaluations: ``random``,
   ``anneal``, ``cma`` and ``trace`` on ``fcfs`` (its default space: n ≤ 8,
   M ≤ 48, responses ≤ 16, arrivals), ``family`` on Proposition 1
   (``greedy-area``, L = 2…7, both cases) and ``exhaustive`` on a tiny grid
   (n ≤ 2, M ≤ 8).
2. **Best certified ratio per policy** — ``anneal`` with ``--budget``
   evaluations on every policy of the registry in its default space
   (:func:`kvopt.campaign.policy_space`): certified and optimistic ratio,
   n and M of the best find, evaluations/s.

The figures depend on the machine and its load (printed first); exact
solves dominate the time.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from kvopt.campaign import search
from kvopt.policy import POLICIES


def _run(out: Path, policy: str, **kw):
    t0 = time.monotonic()
    res = search(policy, out=out, progress=False, **kw)
    sec = time.monotonic() - t0
    return res, sec


def strategies(budget: int, workers: int, root: Path) -> None:
    print(f"\n1. throughput per strategy ({budget} evaluations, seed 0, {workers} worker(s))")
    head = f"{'strategy':<11} {'policy':<12} {'evals':>5} {'exact':>5} {'sec':>7} {'eval/s':>7} {'best cert.':>10} {'best opt.':>10}"
    print(head)
    print("-" * len(head))
    cases = [
        ("random", "fcfs", {}),
        ("anneal", "fcfs", {}),
        ("cma", "fcfs", {}),
        ("trace", "fcfs", {"space": {"memory_min": 16, "memory_max": 48}}),
        (
            "family",
            "greedy-area",
            {"family": "prop1", "family_params": {"L": [2, 3, 4, 5, 6, 7], "case": [1, 2]}},
        ),
        (
            "exhaustive",
            "fcfs",
            {
                "space": {
                    "n_min": 1,
                    "n_max": 2,
                    "memory_min": 4,
                    "memory_max": 8,
                    "max_response": 4,
                }
            },
        ),
    ]
    for strategy, policy, kw in cases:
        b = None if strategy == "family" else budget
        if strategy == "exhaustive":
            b = 10**6
        res, sec = _run(root / f"s-{strategy}", policy, strategy=strategy, budget=b, seed=0,
                        workers=workers, **kw)  # fmt: skip
        best = res.best
        print(
            f"{strategy:<11} {policy:<12} {res.evaluations:>5} {res.exact_solves:>5} {sec:>7.1f} "
            f"{res.evaluations / max(sec, 1e-9):>7.2f} "
            f"{best.ratio_certified if best else float('nan'):>10.4f} "
            f"{best.ratio_optimistic if best else float('nan'):>10.4f}",
            flush=True,
        )


def policies(budget: int, workers: int, root: Path, names: list[str]) -> None:
    print(f"\n2. best certified ratio per policy (anneal, {budget} evaluations, seed 0)")
    head = f"{'policy':<18} {'certified':>9} {'optimistic':>10} {'status':>8} {'n':>3} {'M':>3} {'exact':>5} {'sec':>6} {'eval/s':>6}"
    print(head)
    print("-" * len(head))
    for name in names:
        res, sec = _run(
            root / f"p-{name}", name, strategy="anneal", budget=budget, seed=0, workers=workers
        )
        b = res.best
        print(
            f"{name:<18} {b.ratio_certified:>9.4f} {b.ratio_optimistic:>10.4f} {b.opt_status:>8} "
            f"{b.n:>3} {b.memory:>3} {res.exact_solves:>5} {sec:>6.1f} "
            f"{res.evaluations / max(sec, 1e-9):>6.2f}",
            flush=True,
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=96, help="evaluations per campaign (default 96)")
    ap.add_argument("--quick", action="store_true", help="budget 24 and a few policies")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--only", choices=("strategies", "policies"), default=None)
    args = ap.parse_args(argv)
    budget = 24 if args.quick else args.budget
    names = ["fcfs", "sjf", "route", "greedy-area"] if args.quick else list(POLICIES)
    print(f"machine load at start {open('/proc/loadavg').read().split()[0]}")
    with tempfile.TemporaryDirectory(prefix="kvopt-bench-search-") as tmp:
        root = Path(tmp)
        if args.only in (None, "strategies"):
            strategies(budget, args.workers, root)
        if args.only in (None, "policies"):
            policies(budget, args.workers, root, names)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
