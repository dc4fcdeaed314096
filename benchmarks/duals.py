"""Does the branch and bound prune more with other duals? (``models/bnb.md`` §10)

For one benchmark instance (``benchmarks/exact.py``'s), the windows ``auto`` gives it for a
schedule value ``--ub``, and a threshold ``--threshold`` (a rung of the ladder), it prints

* ``ipm``: the rung searched to its end (compiled, one thread) with the root LP's simplex
  duals and with interior-point duals (HiGHS ``ipm``, no crossover);
* ``tasks``: each task of the split search (the nodes with ``Split.compiled_depth`` jobs placed that
  the root duals do not prune) searched to its end, over windows that fix those jobs and
  start the others no earlier, with the root LP's duals and with the task's own LP's duals
  (whose Lagrangian value at the task is that LP's value)::

    python benchmarks/duals.py --n 20 --seed 2 --ub 483 --threshold 472
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from exact import instance

from kvopt.exact.bnb import _CHECK_EVERY, MEMO_LIMIT, SPLIT, _Search
from kvopt.exact.bnb import compiled as bnbfast
from kvopt.exact.bnb import split as bnbsplit
from kvopt.exact.bounds.relax import lp_duals
from kvopt.exact.common import start_windows
from kvopt.exact.solve import tightened


def _search(inst, lo, hi, v: int, duals) -> _Search:
    s = _Search(inst, "total", lo, hi, v, None, time.monotonic() + 3600, None, None, None)
    s.set_duals(*duals)
    return s


def _rung(inst, lo, hi, v: int, duals) -> tuple[int, float]:
    """Nodes and seconds of a search with threshold ``v``, to its end, on one thread."""
    s = _search(inst, lo, hi, v, duals)
    t = time.monotonic()
    if not bnbfast.run_compiled(s, MEMO_LIMIT, _CHECK_EVERY, threads=1):
        raise RuntimeError("the search did not end")
    return s.nodes, time.monotonic() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--ub", type=int, default=483, help="the schedule value of the windows")
    ap.add_argument("--threshold", type=int, default=472)
    ap.add_argument("--parts", default="ipm,tasks")
    args = ap.parse_args(argv)
    inst, v = instance(args.n, args.seed), args.threshold
    lo, hi = start_windows(inst, "total", args.ub)
    lo, hi = tightened(inst, lo, hi, args.ub, 10.0)
    root = lp_duals(inst, lo, hi, 30.0)
    print(f"n = {args.n} seed {args.seed}, windows of {args.ub}, threshold {v}")
    if "ipm" in args.parts:
        for name, duals in (
            ("simplex", root),
            ("ipm", lp_duals(inst, lo, hi, 30.0, interior=True)),
        ):
            nodes, sec = _rung(inst, lo, hi, v, duals)
            print(f"  {name:>7} duals: {nodes:,} nodes, {sec:.1f} s")
    if "tasks" in args.parts:
        tasks = bnbsplit._collect(_search(inst, lo, hi, v, root), SPLIT.compiled_depth)
        totals = {"root": [0, 0.0], "own": [0, 0.0, 0.0]}
        big = []  # (nodes with the root duals, the task's bound with its own LP's duals)
        for placements, _ in tasks:
            tlo, thi = lo.copy(), hi.copy()
            latest = max(t for _, t in placements)
            tlo = np.maximum(tlo, latest)
            for j, t in placements:
                tlo[j] = thi[j] = t
            for key in ("root", "own"):
                t0 = time.monotonic()
                duals = root if key == "root" else lp_duals(inst, tlo, thi, 30.0)
                lp_sec = time.monotonic() - t0
                nodes, sec = _rung(inst, tlo, thi, v, duals)
                totals[key][0] += nodes
                if key == "root":
                    root_nodes = nodes
                else:
                    big.append((root_nodes, _search(inst, tlo, thi, v, duals).root_bound()))
                totals[key][1] += sec
                if key == "own":
                    totals[key][2] += lp_sec
        print(f"  {len(tasks)} tasks of {SPLIT.compiled_depth} jobs")
        print(f"  root duals: {totals['root'][0]:,} nodes, {totals['root'][1]:.1f} s")
        print(
            f"  own duals:  {totals['own'][0]:,} nodes, {totals['own'][1]:.1f} s "
            f"(+ {totals['own'][2]:.1f} s of LPs)"
        )
        big.sort(reverse=True)
        print(
            f"  the 5 largest tasks (root duals): {', '.join(f'{k:,}' for k, _ in big[:5])} nodes;"
            f" their own LP's bounds {', '.join(str(b) for _, b in big[:5])}"
            f" (root: {_search(inst, lo, hi, v, root).root_bound()})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
