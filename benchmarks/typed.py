"""Typed instances at scale (issue 16): every policy on 500 jobs, and the typed campaign's rate.

    python benchmarks/typed.py [--instances 3] [--n 500] [--skip-policies]
                               [--policies fcfs,…] [--campaign-seconds 60] [--workers 2]

(a) For every registry policy: a few ``n``-job typed instances sampled with
:class:`kvopt.space.TypedSpace` from the policy's default class
(``TypedSpace.from_space(policy's default space, n_min=n, n_max=n)``, seeds
0, 1, …); prints the slowest and mean simulation seconds per policy, slowest
first, and the seconds of the cheap bounds of the search's evaluation (area /
processing LB, the typed cheap UB) on the same instances.

(b) For each policy of ``--policies`` (default fcfs and the slowest policy of
(a)): a typed campaign (``kvopt search --space kind=typed --n 200:500
--workers K --seconds S --seed 1``) in a temporary folder; prints the
evaluations per second of the whole run, the exact solves, and the screening
rate (evaluations without an exact solve, per second of their own time, times
the workers).  Target (issue 16): ≥ 20 evaluations per second for fcfs on 2
cores.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from kvopt.campaign import search
from kvopt.campaign.log import LOG_NAME, read_log
from kvopt.campaign.types import ExactStatus
from kvopt.certify import cheap_lb, cheap_ub
from kvopt.policy import POLICIES
from kvopt.simulation import simulate
from kvopt.space import TypedSpace


def policy_times(n: int, count: int) -> list[tuple[str, float, float, float, float]]:
    """``(policy, slowest, mean simulation seconds, mean LB seconds, mean UB seconds)``."""
    rows = []
    for name, spec in POLICIES.items():
        sp = TypedSpace.from_space(spec.default_space(), n_min=n, n_max=n)
        sims, lbs, ubs = [], [], []
        for seed in range(count):
            inst = sp.sample(np.random.default_rng(seed))
            t0 = time.perf_counter()
            simulate(inst, name, seed=seed if spec.seeded else None)
            t1 = time.perf_counter()
            cheap_lb(inst, "total")
            t2 = time.perf_counter()
            cheap_ub(inst, "total", typed=True)
            t3 = time.perf_counter()
            sims.append(t1 - t0)
            lbs.append(t2 - t1)
            ubs.append(t3 - t2)
        rows.append((name, max(sims), statistics.mean(sims), statistics.mean(lbs),
                     statistics.mean(ubs)))  # fmt: skip
    rows.sort(key=lambda r: -r[1])
    return rows


def campaign_rate(policy: str, seconds: float, workers: int, time_limit: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / policy
        t0 = time.perf_counter()
        res = search(policy, space={"kind": "typed", "n_min": 200, "n_max": 500},
                     seconds=seconds, seed=1, workers=workers, out=out, progress=False,
                     exact_time_limit=time_limit)  # fmt: skip
        wall = time.perf_counter() - t0
        log = read_log(out / LOG_NAME)
    screened = [r for r in log.values() if r.exact != ExactStatus.SOLVED]
    own = sum(float(r.seconds or 0.0) for r in screened)
    return {
        "policy": policy,
        "evaluations": res.evaluations,
        "exact_solves": res.exact_solves,
        "seconds": wall,
        "rate": res.evaluations / wall,
        "screen_rate": workers * len(screened) / own if own > 0 else float("nan"),
        "best": res.best.ratio_certified if res.best else None,
        "mean_n": statistics.mean(r.n for r in log.values()) if log else 0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--skip-policies", action="store_true", help="skip table (a)")
    ap.add_argument("--policies", default=None, help="campaigns of (b) (default fcfs,SLOWEST)")
    ap.add_argument("--campaign-seconds", type=float, default=60.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=5.0, help="seconds per exact solve")
    args = ap.parse_args(argv)
    slowest = None
    if not args.skip_policies:
        rows = policy_times(args.n, args.instances)
        print(f"(a) every policy on {args.instances} typed instances of n = {args.n} "
              "(slowest first; seconds)")  # fmt: skip
        print(f"{'policy':<20} {'slowest sim':>12} {'mean sim':>10} {'mean LB':>9} {'mean UB':>9}")
        for name, worst, mean, lb, ub in rows:
            print(f"{name:<20} {worst:>12.3f} {mean:>10.3f} {lb:>9.4f} {ub:>9.3f}")
        slowest = rows[0][0]
    names = args.policies.split(",") if args.policies else ["fcfs"] + ([slowest] if slowest else [])
    print(f"\n(b) typed campaigns, n 200..500, --workers {args.workers}, {args.campaign_seconds:g} s, "
          f"exact time limit {args.time_limit:g} s")  # fmt: skip
    print(f"{'policy':<20} {'evals':>6} {'solves':>6} {'mean n':>7} {'evals/s':>8} "
          f"{'screen/s':>9} {'best':>7}")  # fmt: skip
    for name in dict.fromkeys(names):
        r = campaign_rate(name, args.campaign_seconds, args.workers, args.time_limit)
        best = f"{r['best']:.3f}" if r["best"] is not None else "-"
        print(f"{name:<20} {r['evaluations']:>6} {r['exact_solves']:>6} {r['mean_n']:>7.0f} "
              f"{r['rate']:>8.1f} {r['screen_rate']:>9.1f} {best:>7}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
