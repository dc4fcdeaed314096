"""Inside the branch and bound's tree: its node bound (Lemma B1, priced by the root's LP with the
rows) against the LP with the rows re-solved over the node's own windows (issue 52,
``models/cliques.md`` §17): measurements, not methods.

A node places some jobs in (start, index) order, the last at round ``t``. Its own windows: the
placed jobs fixed at their starts; each other job from its earliest start on the placed
profile (at or after ``t``; after it below the last index, the tie rule) to its window's end.
Every completion of the node lies in them, so the LP with the rows over them bounds the node;
so does Lemma B1 with any prices ``≤ 0`` for its rows (the root's, or another node's).
Both are counted as pruning a node when they reach ``--ub`` (no better schedule below it; by
default the value of the local search's schedule, whose value also sets the windows).

``path``: along the chronological path of that schedule, at each depth: B1 with the root's
prices and the node's own LP.

``depth``: the nodes with ``--depth`` jobs placed that B1 with the root's prices does not prune
(listed as the two-thread search lists its tasks, ``compiled.list_tasks``), how many, and a
uniform sample of ``--sample`` of them: for each, B1 with the root's prices, the best B1 over
the prices of ``--pool`` other sampled nodes (each its own LP's), and its own LP.

``subtrees``: the same nodes (``--depth``, 2 by default), each subtree searched (compiled, one
thread) with the root's prices for at most ``--seconds``: how many finish, and for those that
do not, their own LP and a search of ``--long`` seconds with the root's prices and with their
own LP's prices::

    python benchmarks/tree_prices.py path --seed 204 --ub 968
    python benchmarks/tree_prices.py depth --seed 204 --ub 968 --depth 8 --pool 8 --sample 40
    python benchmarks/tree_prices.py subtrees --seed 204 --ub 968 --depth 2 --long 30
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from mcsf_jaillet import summaries_instance

from kvopt.exact.bnb import compiled
from kvopt.exact.bnb.search import _CHECK_EVERY, MEMO_LIMIT, _Search
from kvopt.exact.bounds.cliques import DEFAULT_KS
from kvopt.exact.bounds.lagrange import time_indexed_prices
from kvopt.exact.common import start_windows, value_of
from kvopt.exact.heuristic import heuristic_starts, improve_starts
from kvopt.instance import Instance


class _Tree:
    """One draw, a schedule found by a fixed number of local search moves (the path), the
    windows of its value and a search priced by the root's LP with the rows."""

    def __init__(self, inst: Instance, ub: int | None):
        self.inst = inst
        warm = heuristic_starts(inst, "total", moves=2000, seed=0)
        self.starts = improve_starts(inst, warm, moves=20000, seed=0)  # the same every run
        self.value = value_of(inst, self.starts, "total")
        # the windows hold every schedule as good as the path's; prune at >= ub
        self.ub = self.value if ub is None else min(ub, self.value)
        self.lo, self.hi = start_windows(inst, "total", self.value)
        t0 = time.monotonic()
        self.root = time_indexed_prices(inst, self.lo, self.hi, 120.0, DEFAULT_KS)
        self.lp_seconds = time.monotonic() - t0
        self.search = self.priced(self.root)

    def priced(self, prices) -> _Search:
        """A search over the windows, priced by ``prices``' duals, nothing placed."""
        s = _Search(
            self.inst, "total", self.lo, self.hi, self.ub + 1, None,
            time.monotonic() + 3600, None, None, None,
        )  # fmt: skip
        s.set_duals(*prices.duals)
        return s

    def bound(self, s: _Search, placed: list[tuple[int, int]]) -> tuple[float, dict]:
        """Lemma B1 at the node ``placed`` with ``s``'s prices (``models/cliques.md`` §14), and
        the earliest starts of the jobs left (``inf`` if one has none in its window)."""
        o, cost = s.o, 0
        for j, t in placed:
            s.start[j] = t
            s.add(j, t, +1)
            cost += t + o[j]
        last, t = placed[-1]
        est = {}
        for j in range(s.n):
            if s.start[j] < 0:
                e = max(s.a[j], t + 1 if j < last else t)
                while e <= s.hi[j] and not s.fits(j, e):
                    e += 1
                est[j] = e
        if any(e > s.hi[j] for j, e in est.items()):
            value = math.inf
        else:
            t0 = min(est.values())
            end = max(tj + o[j] for j, tj in placed)
            value = cost + sum(s.sufmin[j][e] for j, e in est.items())
            value += sum(s.dslack[t0:end]) + s.bsuf[end] if t0 < end else s.bsuf[t0]
        for j, tj in placed:
            s.add(j, tj, -1)
            s.start[j] = -1
        return value, est

    def own(self, placed: list[tuple[int, int]], est: dict):
        """The LP with the rows over the node's own windows (``None``: no start left)."""
        if any(e > self.hi[j] for j, e in est.items()):
            return None
        lo, hi = self.lo.copy(), self.hi.copy()
        for j, t in placed:
            lo[j] = hi[j] = t
        for j, e in est.items():
            lo[j] = e
        return time_indexed_prices(self.inst, lo, hi, 120.0, DEFAULT_KS)

    def prunes(self, value: float) -> bool:
        return math.ceil(value - 1e-6) >= self.ub


def path(tree: _Tree) -> None:
    s, starts = tree.search, tree.starts
    order = sorted(range(tree.inst.n), key=lambda j: (starts[j], j))
    print(f"the path of the schedule of value {tree.value}")
    print("depth    t   B1 (root prices)   own LP   seconds")
    for k in range(1, tree.inst.n):
        placed = [(j, int(starts[j])) for j in order[:k]]
        b1, est = tree.bound(s, placed)
        t0 = time.monotonic()
        own = tree.own(placed, est)
        lp = math.inf if own is None else own.lp
        print(f"{k:5d} {placed[-1][1]:4d} {b1:18.1f} {lp:8.1f} {time.monotonic() - t0:9.1f}")


def depth(tree: _Tree, d: int, pool: int, sample: int, seed: int) -> None:
    compiled.prepare()
    t0 = time.monotonic()
    table, nodes = compiled.list_tasks(tree.search, d, MEMO_LIMIT, _CHECK_EVERY)
    print(
        f"{len(table):,} nodes with {d} jobs placed are not pruned by B1 with the root's prices "
        f"({nodes:,} nodes visited, {time.monotonic() - t0:.1f} s)"
    )
    if len(table) < pool + sample:
        _fail(f"--pool + --sample: {pool + sample} asked, {len(table)} nodes at depth {d}")
    picks = np.random.default_rng(seed).choice(len(table), size=pool + sample, replace=False)
    nodes_ = [[(int(r[2 * q]), int(r[2 * q + 1])) for q in range(d)] for r in table[picks]]
    searches = []
    for placed in nodes_[:pool]:
        own = tree.own(placed, tree.bound(tree.search, placed)[1])
        if own is not None:
            searches.append(tree.priced(own))
    print(f"a pool of the prices of {len(searches)} sampled nodes' own LPs")
    print("node    t   B1 (root prices)   B1 (best of the pool)   own LP")
    cut = [0, 0, 0]
    for q, placed in enumerate(nodes_[pool:]):
        root, est = tree.bound(tree.search, placed)
        best = max([tree.bound(s, placed)[0] for s in searches], default=-math.inf)
        own = tree.own(placed, est)
        lp = math.inf if own is None else own.lp
        for i, v in enumerate((root, max(root, best), lp)):
            cut[i] += tree.prunes(v)
        print(f"{q:4d} {placed[-1][1]:4d} {root:18.1f} {best:23.1f} {lp:8.1f}")
    print(
        f"of {sample} sampled nodes, pruned at >= {tree.ub}: by the root's prices {cut[0]}, "
        f"with the pool's too {cut[1]}, by their own LP {cut[2]}"
    )


def _subtree(
    tree: _Tree, s: _Search, row: np.ndarray, d: int, seconds: float, below: int | None = None
) -> tuple:
    """The compiled search below one listed node (``row``) with ``s``'s prices, at most
    ``seconds``, for a schedule below ``below`` (default ``tree.ub``): (finished, nodes,
    the best value found, or ``below`` if none)."""
    from kvopt.exact.bnb.compiled import _arguments, _arrays, _supervise
    from kvopt.exact.bnb.kernel import _BEST0, _DONE

    ctl = np.array([0, 2**62, 0, 0, 2**62, 1], np.int64)
    ctl[_BEST0 + 1] = 1
    paths = np.ascontiguousarray(row, np.int64)
    below = tree.ub if below is None else below
    args, _ = _arguments(
        s, _arrays(s), ctl, (2, 0, 1), below, (paths, 1, d), (MEMO_LIMIT, -1, _CHECK_EVERY)
    )
    s.deadline = time.monotonic() + seconds
    (out,), interrupted = _supervise([args], ctl, s)
    if interrupted:
        raise KeyboardInterrupt
    return out[0] == _DONE, int(out[1]), int(out[2])


def subtrees(tree: _Tree, d: int, seconds: float, long: float) -> None:
    compiled.prepare()
    table, _ = compiled.list_tasks(tree.search, d, MEMO_LIMIT, _CHECK_EVERY)
    t0 = time.monotonic()
    total, heavy = 0, []
    for i, row in enumerate(table):
        done, nodes, _ = _subtree(tree, tree.search, row, d, seconds)
        total += nodes
        if not done:
            heavy.append(i)
    print(
        f"{len(table):,} nodes with {d} jobs placed are not pruned by B1 with the root's "
        f"prices; {len(table) - len(heavy):,} subtrees finished within {seconds:g} s each, "
        f"{len(heavy)} did not ({total:,} nodes, {time.monotonic() - t0:.0f} s)"
    )
    print(f"the others, each searched for {long:g} s with the root's prices and its own LP's:")
    print(
        "placed (job, start)   B1 (root prices)   own LP   root prices: done, nodes   own: done, nodes"
    )
    for i in heavy:
        placed = [(int(table[i][2 * p]), int(table[i][2 * p + 1])) for p in range(d)]
        own = tree.own(placed, tree.bound(tree.search, placed)[1])
        lp = math.inf if own is None else own.lp
        head = f"{placed!s:21} {float(table[i][-1]):18.1f} {lp:8.1f}"
        if own is None or tree.prunes(lp):
            print(f"{head}   pruned by its own LP")
            continue
        a = _subtree(tree, tree.search, table[i], d, long)
        b = _subtree(tree, tree.priced(own), table[i], d, long)
        print(f"{head}   {a[0]!s:5} {a[1]:>20,}   {b[0]!s:5} {b[1]:>12,}")


def _fail(message: str) -> None:
    """One line on stderr and exit status 2 (nothing is written: the probes only print)."""
    print(f"tree_prices: {message}", file=sys.stderr)
    raise SystemExit(2)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="probe", required=True)
    for name in ("path", "depth", "subtrees"):
        p = sub.add_parser(name)
        p.add_argument("--seed", type=int, default=204)
        p.add_argument("--model", type=int, choices=(1, 2), default=1)
        p.add_argument("--n-min", type=int, default=20)
        p.add_argument("--n-max", type=int, default=20)
        p.add_argument("--ub", type=int, default=None, help="the threshold (default: heuristic)")
        if name != "path":
            p.add_argument("--depth", type=int, default=8 if name == "depth" else 2)
        if name == "depth":
            p.add_argument("--pool", type=int, default=8)
            p.add_argument("--sample", type=int, default=40)
            p.add_argument("--sample-seed", type=int, default=0)
        if name == "subtrees":
            p.add_argument("--seconds", type=float, default=1.0, help="per subtree, first")
            p.add_argument("--long", type=float, default=30.0, help="per subtree left, then")
    args = ap.parse_args(argv)
    if not 1 <= args.n_min <= args.n_max:
        ap.error("--n-min, --n-max: need 1 <= n-min <= n-max")
    if args.ub is not None and args.ub < 1:
        ap.error("--ub: must be at least 1")
    if args.probe != "path":
        if not 1 <= args.depth < args.n_min:
            ap.error("--depth: must be at least 1 and below --n-min")
        if not compiled.available():
            _fail(f"{args.probe} needs the compiled search (pip install -e '.[fast]')")
    if args.probe == "depth" and (args.pool < 0 or args.sample < 1):
        ap.error("--pool, --sample: need pool >= 0 and sample >= 1")
    if args.probe == "subtrees" and not (args.seconds > 0 and args.long > 0):
        ap.error("--seconds, --long: must be positive")
    tree = _Tree(summaries_instance(args.seed, args.model, args.n_min, args.n_max), args.ub)
    inst = tree.inst
    print(
        f"n {inst.n}, M {inst.memory}, ub {tree.ub}, the root's LP with the rows "
        f"{tree.root.lp:.1f} ({tree.lp_seconds:.1f} s)"
    )
    if args.probe == "path":
        path(tree)
    elif args.probe == "depth":
        depth(tree, args.depth, args.pool, args.sample, args.sample_seed)
    else:
        subtrees(tree, args.depth, args.seconds, args.long)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
