"""Where the root gap of the small-number set lives (issue 46, ``models/time-indexed.md`` §12).

For one instance of ``benchmarks/exact.py``'s set (``--n``, ``--seed``) and a schedule value
``--ub`` (the best known; the windows are ``start_windows(ub)``), it prints

* ``rows``: the time-indexed LP (memory rows, one column per job and start) with the rounded
  rows ``k ≤ K`` (``models/time-indexed.md`` §4.2) for ``K`` = 1, 2, 3, 6, 12;
* ``integral``: the same LP (``k = 1``) with the columns of some jobs kept integral (HiGHS's
  MIP, one thread, ``--mip-limit`` seconds): the jobs with ``s_i + 1 > share · M`` for each
  ``--shares`` (0.5: the jobs above ``M/2`` from their first round);
* ``lagrange``: the Lagrangian bound with the memory rows priced and every heavy tail
  (``s_i + u + 1 > M/2``) kept as a constraint — the tails pairwise disjoint, solved exactly by a
  dynamic program over the subsets of heavy jobs and the rounds — at the LP's duals (the
  "one above M/2" rows priced too) and after ``--iterations`` subgradient steps on the memory
  prices (those rows then not priced: the program keeps them);
* ``proof`` (``--proof``): ``solve(solver="bnb")`` — the compiled branch and bound alone, two
  threads — warm-started with the schedule ``auto`` finds in ``--find`` seconds (it must have
  value ``≤ --ub``; then it is the proof of Opt = ``--ub`` that is timed), for each ``--memo``
  limit in a fresh process: status, seconds, nodes and peak resident memory (``--ladder``: the
  ladder of proven thresholds instead, its rungs as ``[threshold, seconds, proved]``).

::

    python benchmarks/gap_anatomy.py --n 20 --seed 2 --ub 483
    python benchmarks/gap_anatomy.py --n 20 --seed 2 --ub 483 --proof --memo 1000000,8000000
    python benchmarks/gap_anatomy.py --n 20 --seed 2 --ub 483 --proof --ladder --limit 60
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import replace

import numpy as np
from exact import instance

from kvopt.exact.backends.highs_glue import to_highs
from kvopt.exact.backends.highs_matrix import build_matrix
from kvopt.exact.bounds.relax import solve_lp
from kvopt.exact.common import start_windows


def rows(inst, lo, hi) -> list[tuple[int, object, object, float]]:
    """(K, model, LP result, seconds) with the rounded rows k = 1 … K."""
    out = []
    for top in (1, 2, 3, 6, 12):
        t0 = time.monotonic()
        model = build_matrix(inst, "total", lo, hi, aggregate=False, cuts=tuple(range(1, top + 1)))
        out.append((top, model, solve_lp(model, 120.0), time.monotonic() - t0))
    return out


def integral(inst, lo, hi, share: float, limit: float) -> tuple[list[int], str, float, float]:
    """The LP with the columns of the jobs ``s + 1 > share · M`` integral: (those jobs, HiGHS's
    status, its dual bound, seconds)."""
    model = build_matrix(inst, "total", lo, hi, aggregate=False, cuts=(1,))
    jobs = [j for j in range(inst.n) if inst.prompts[j] + 1 > share * inst.memory]
    keep = np.zeros(model.n_cols, dtype=np.int64)
    for k, g in enumerate(model.col_group):
        if g >= 0 and model.groups[g][0] in jobs:
            keep[k] = 1
    h = to_highs(replace(model, integrality=keep))
    h.setOptionValue("time_limit", float(limit))
    h.setOptionValue("threads", 1)
    t0 = time.monotonic()
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    return jobs, status, float(h.getInfo().mip_dual_bound), time.monotonic() - t0


class HeavyKept:
    """``L(y) = M Σ_τ y_τ + Σ_{light} min_t r_{j,t} + min over disjoint heavy tails of Σ r`` with
    ``r_{j,t} = t + o_j − Σ_u y_{t+u} (s_j + u + 1) − Σ_u h_{t+u} [2 (s_j + u + 1) > M]`` (``y,
    h ≤ 0``): for every schedule ``Σ C ≥ L(y)`` (the priced rows hold, the kept ones are
    constraints of the minimum)."""

    def __init__(self, inst, lo, hi, horizon: int):
        self.inst, self.lo, self.hi, self.H = inst, lo, hi, horizon
        s, o, M = inst.prompts.astype(int), inst.responses.astype(int), inst.memory
        self.u0 = np.maximum(0, M // 2 - s)
        self.heavy = [j for j in range(inst.n) if self.u0[j] < o[j]]

    def costs(self, j: int, y: np.ndarray, h: np.ndarray) -> np.ndarray:
        s, o, M = int(self.inst.prompts[j]), int(self.inst.responses[j]), self.inst.memory
        u = np.arange(o)
        mem, hv = s + u + 1, (2 * (s + u + 1) > M)
        ts = np.arange(self.lo[j], self.hi[j] + 1)
        return np.array([t + o - y[t + u] @ mem - h[t + u] @ hv for t in ts])

    def value(self, y: np.ndarray, h: np.ndarray) -> tuple[float, dict[int, int]]:
        """``L(y)`` and the starts that attain it."""
        inst, M = self.inst, self.inst.memory
        total, starts = M * float(y.sum()) + float(h.sum()), {}
        for j in range(inst.n):
            if j not in self.heavy:
                c = self.costs(j, y, h)
                k = int(np.argmin(c))
                total += float(c[k])
                starts[j] = int(self.lo[j]) + k
        hv, T = self.heavy, self.H + 1
        tabs = [self.costs(j, y, h) for j in hv]
        V = np.full((1 << len(hv), T + 1), np.inf)
        V[0, :] = 0.0
        arg = {}
        for mask in range(1, 1 << len(hv)):
            for tau in range(T - 1, -1, -1):
                best, pick = V[mask, tau + 1], None
                for b, j in enumerate(hv):
                    t = tau - int(self.u0[j])  # j's tail starts in round tau
                    if mask >> b & 1 and self.lo[j] <= t <= self.hi[j]:
                        nxt = min(T, t + int(inst.responses[j]))
                        v = tabs[b][t - self.lo[j]] + V[mask ^ (1 << b), nxt]
                        if v < best:
                            best, pick = v, (b, t, nxt)
                V[mask, tau], arg[mask, tau] = best, pick
        mask, tau = (1 << len(hv)) - 1, 0
        total += float(V[mask, 0])
        if not np.isfinite(total):  # the heavy tails cannot be disjoint inside the windows
            return total, starts
        while mask:
            pick = arg.get((mask, tau))
            if pick is None:
                tau += 1
                continue
            b, t, tau = pick
            starts[hv[b]] = t
            mask ^= 1 << b
        return total, starts

    def climb(self, y: np.ndarray, ub: int, iterations: int) -> float:
        """The best ``L`` over ``iterations`` subgradient steps on ``y`` (``h = 0``), Polyak steps
        towards ``ub``."""
        best, step, h = -np.inf, 1.0, np.zeros_like(y)
        s, o = self.inst.prompts.astype(int), self.inst.responses.astype(int)
        for it in range(iterations):
            v, starts = self.value(y, h)
            best = max(best, v)
            use = np.zeros(len(y) + int(o.max()) + 1)
            for j, t in starts.items():
                use[t : t + o[j]] += s[j] + np.arange(o[j]) + 1
            g = self.inst.memory - use[: len(y)]
            norm = float(g @ g)
            if norm == 0:
                break
            y = np.minimum(0.0, y + step * (ub - v) / norm * g)
            if it % 25 == 24:
                step *= 0.6
        return best


def proof(n: int, seed: int, schedule: dict, memo: int, limit: float, ladder: bool) -> dict:
    """The compiled branch and bound alone, warm-started with ``schedule`` (its file form);
    ``ladder``: climbing its ladder of thresholds (``models/bnb.md`` §8)."""
    from kvopt.exact import solve
    from kvopt.exact.bnb import BranchAndBound
    from kvopt.exact.portfolio import Portfolio
    from kvopt.schedule import Schedule

    inst = instance(n, seed)
    portfolio = Portfolio(backends={"bnb": BranchAndBound(memo_limit=memo, ladder=ladder)})
    t0 = time.monotonic()
    r = solve(
        inst,
        solver="bnb",
        time_limit=limit,
        threads=2,
        warm_start=Schedule.from_dict(schedule),
        portfolio=portfolio,
    )
    return {
        "memo": memo,
        "status": r.status.value,
        "objective": r.objective,
        "bound": r.bound,
        "seconds": round(time.monotonic() - t0, 1),
        "nodes": r.stats.get("nodes"),
        "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        **({"ladder": r.stats.get("ladder")} if ladder else {}),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--ub", type=int, required=True, help="the best known schedule value")
    ap.add_argument("--shares", default="0.5,0.3")
    ap.add_argument("--mip-limit", type=float, default=120.0)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--proof", action="store_true")
    ap.add_argument("--find", type=float, default=60.0)
    ap.add_argument("--memo", default="1000000")
    ap.add_argument("--limit", type=float, default=600.0)
    ap.add_argument("--ladder", action="store_true", help="--proof: climb the ladder instead")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(proof(**json.loads(a.child))))
        return 0
    inst = instance(a.n, a.seed)
    lo, hi = start_windows(inst, "total", a.ub)
    print(f"n={a.n} seed={a.seed} M={inst.memory} ub={a.ub}", flush=True)
    if not a.proof:
        lps = rows(inst, lo, hi)
        for top, _, lp, sec in lps:
            print(f"rows k<={top:<3} LP {lp.value:9.2f}  ({sec:.1f} s)", flush=True)
        for share in (float(x) for x in a.shares.split(",")):
            jobs, status, bound, sec = integral(inst, lo, hi, share, a.mip_limit)
            print(
                f"integral s+1 > {share} M ({len(jobs)} jobs): {status}, bound {bound:.2f}"
                f" ({sec:.1f} s)",
                flush=True,
            )
        _, model, lp, _ = lps[0]  # k = 1: memory rows and the "one above M/2" rows
        H = model.horizon
        y = np.minimum(np.asarray(lp.row_dual[inst.n : inst.n + H]), 0.0)
        h = np.minimum(np.asarray(lp.row_dual[inst.n + H : inst.n + 2 * H]), 0.0)
        kept = HeavyKept(inst, lo, hi, H)
        pad = np.zeros(H + int(inst.responses.max()) + 1)
        yy, hh = pad.copy(), pad.copy()
        yy[:H], hh[:H] = y, h
        print(
            f"lagrange LP {lp.value:.2f}; {len(kept.heavy)} heavy jobs kept disjoint:", flush=True
        )
        print(f"  at the LP's duals {kept.value(yy, hh)[0]:.2f}", flush=True)
        t0 = time.monotonic()
        best = kept.climb(yy, a.ub, a.iterations)
        print(
            f"  best of {a.iterations} subgradient steps {best:.2f} ({time.monotonic() - t0:.1f} s)"
        )
        return 0
    from kvopt.exact import solve

    found = solve(inst, time_limit=a.find, threads=2)  # one warm start for every memo limit
    print(f"auto, {a.find:.0f} s: {found.objective} (bound {found.bound})", flush=True)
    if found.objective is None or found.objective > a.ub:
        print(f"not a schedule of value <= --ub {a.ub}: raise --find", file=sys.stderr)
        return 1
    schedule = found.schedule.to_dict(inst.n)
    for memo in (int(x) for x in a.memo.split(",")):
        spec = dict(
            n=a.n, seed=a.seed, schedule=schedule, memo=memo, limit=a.limit, ladder=a.ladder
        )
        out = subprocess.run(
            [
                sys.executable,
                os.path.abspath(__file__),
                "--ub",
                str(a.ub),
                "--child",
                json.dumps(spec),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        lines = out.stdout.strip().splitlines()
        print(lines[-1] if lines else out.stderr.strip()[-300:], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
