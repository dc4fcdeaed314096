"""Root bounds of the time-indexed model and what each candidate closes: ``python benchmarks/relaxations.py``.

Issue 17.  Per instance of ``benchmarks/exact.py`` (``--sizes``, ``--seeds``)
or typed instances (``--typed K``: ``K`` instances of
``TypedSpace(types_max=4, n_min=50, n_max=300, memory_min=16,
memory_max=64, max_response=16)`` from ``default_rng(seed)``), prints

* ``rootLP`` — the LP of ``kvopt bound --lp`` (heuristic windows, ``k = 1`` rows);
* ``best`` — the best schedule known (the tables of ``models/time-indexed.md``
  for the benchmark set, else the heuristic and ``--best-seconds`` of ``solve``);
* per candidate the bound, the share of the root gap ``(best − rootLP)`` it
  closes and its seconds:
  ``cliques`` (LP + cross-round conflict cliques, :func:`kvopt.exact.bounds.relax.clique_lp`),
  ``hroot`` (HiGHS's root node with its own cuts, one thread), ``area`` (the
  area/processing bound); and ``fix%``, the share of start columns that
  reduced-cost fixing (:func:`kvopt.exact.bounds.relax.lagrange_fix`) removes with
  ``best`` as the upper bound (it moves no bound; it shrinks the model);
  ``blocks`` (time-block column generation, :func:`kvopt.exact.bounds.blocks.block_bound`,
  one column per block length of ``--block-len``; ``L`` = block length, ``it``
  pricing rounds, ``c`` = ``y`` if it converged) — ``--candidates blocks`` runs it alone.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kvopt.exact import solve
from kvopt.exact.backends.highs_matrix import build_matrix
from kvopt.exact.bounds.blocks import block_bound
from kvopt.exact.bounds.relax import clique_lp, highs_root, lagrange_fix, solve_lp
from kvopt.exact.common import lower_bound, start_windows, value_of
from kvopt.exact.heuristic import heuristic_starts
from kvopt.generators import generate

SIZES = (12, 15, 18, 20, 22, 25, 30)
SEEDS = (1, 2)
#: best schedules known for the benchmark set (min over the tables of models/time-indexed.md)
BEST = {
    (12, 1): 171, (12, 2): 100, (15, 1): 305, (15, 2): 229, (18, 1): 464, (18, 2): 369,
    (20, 1): 613, (20, 2): 484, (22, 1): 779, (22, 2): 632, (25, 1): 1202, (25, 2): 786,
    (30, 1): 2070, (30, 2): 1277,
}  # fmt: skip


def typed_instances(k: int, seed: int = 0):
    from kvopt.space import TypedSpace

    space = TypedSpace(
        types_max=4, n_min=50, n_max=300, memory_min=16, memory_max=64, max_response=16
    )
    rng = np.random.default_rng(seed)
    return [space.sample(rng) for _ in range(k)]


def share(value: float, root: float, best: float) -> str:
    return "-" if best <= root + 1e-9 else f"{100 * (value - root) / (best - root):5.1f}"


def block_lengths(spec: str, inst) -> list[int]:
    """``--block-len``: integers, or multiples of the largest response (``0.5x,1x``)."""
    omax = int(inst.responses.max())
    out = []
    for part in spec.split(","):
        out.append(max(1, round(float(part[:-1]) * omax)) if part.endswith("x") else int(part))
    return out


def row(label: str, inst, best: int | None, args) -> None:
    want = set(args.candidates.split(","))
    t0 = time.monotonic()
    st = heuristic_starts(inst, "total", seconds=0.5)
    ub = value_of(inst, st, "total")
    if best is None and args.best_seconds > 0:
        best = solve(inst, time_limit=args.best_seconds, threads=args.threads).objective
    best = min(ub, best) if best is not None else ub
    lo, hi = start_windows(inst, "total", ub)
    model = build_matrix(inst, "total", lo, hi)
    lp = solve_lp(model, args.time_limit)
    t_lp = time.monotonic() - t0
    root = lp.value
    line = (
        f"{label:<12} {inst.n:>4} {inst.memory:>4} {root:9.1f} {best:>7} "
        f"{100 * (best - root) / max(best, 1):5.1f} {t_lp:5.1f}"
    )
    if "others" in want:
        _, _, fix = lagrange_fix(inst, lo, hi, best, lp=lp)
        t1 = time.monotonic()
        cl, cs = clique_lp(inst, lo, hi, rounds=args.rounds, time_limit=args.time_limit)
        t_cl = time.monotonic() - t1
        t2 = time.monotonic()
        hr = highs_root(inst, lo, hi, time_limit=args.time_limit)
        t_hr = time.monotonic() - t2
        area = lower_bound(inst, "total")
        line += (
            f" | {100 * (1 - fix['kept'] / max(fix['columns'], 1)):5.1f} | "
            f"{cl.value:9.1f} {share(cl.value, root, best)} {t_cl:5.1f} {cs['cliques']:>4} | "
            f"{hr:9.1f} {share(hr, root, best)} {t_hr:5.1f} | {area:>7} {share(area, root, best)}"
        )
    if "blocks" in want:
        for L in block_lengths(args.block_len, inst):
            t3 = time.monotonic()
            bb, bs = block_bound(inst, ub, L, args.block_seconds, starts=st)
            line += (
                f" | {L:>3} {bb:9.1f} {share(bb, root, best)} {time.monotonic() - t3:5.1f} "
                f"{bs['iterations']:>3} {'y' if bs['converged'] else 'n'}"
            )
    print(line, flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    ap.add_argument("--typed", type=int, default=0, metavar="K", help="K typed instances instead")
    ap.add_argument("--typed-seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=10, help="clique separation rounds")
    ap.add_argument("--time-limit", type=float, default=60.0, help="per LP / root node")
    ap.add_argument("--best-seconds", type=float, default=0.0, help="solve() for 'best' (typed)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--candidates", default="others,blocks", help="others (fix, cliques, hroot, area), blocks"
    )
    ap.add_argument(
        "--block-len", default="1x", help="block lengths: integers or multiples of max response"
    )
    ap.add_argument("--block-seconds", type=float, default=30.0, help="per block length")
    args = ap.parse_args(argv)
    print(f"machine load at start {open('/proc/loadavg').read().split()[0]}")
    head = f"{'instance':<12} {'n':>4} {'M':>4} {'rootLP':>9} {'best':>7} {'rgap%':>5} {'sec':>5}"
    want = set(args.candidates.split(","))
    if "others" in want:
        head += (
            f" | {'fix%':>5} | {'cliques':>9} {'cl%':>5} {'sec':>5} {'#':>4} | "
            f"{'hroot':>9} {'hr%':>5} {'sec':>5} | {'area':>7} {'ar%':>5}"
        )
    if "blocks" in want:
        for _ in args.block_len.split(","):
            head += f" | {'L':>3} {'blocks':>9} {'bl%':>5} {'sec':>5} {'it':>3} c"
    print(head)
    if args.typed:
        for j, inst in enumerate(typed_instances(args.typed, args.typed_seed)):
            row(f"typed{j}", inst, None, args)
        return 0
    for n in map(int, args.sizes.split(",")):
        for seed in map(int, args.seeds.split(",")):
            inst = generate("random", seed, n=n, memory=6 * n, max_response=n)
            row(f"n{n}s{seed}", inst, BEST.get((n, seed)), args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
