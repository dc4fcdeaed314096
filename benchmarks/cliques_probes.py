"""Two probes of what the LP with the completion cliques misses (issue 52, ``models/cliques.md``
§11): measurements, not methods.

``branch``: a branch and cut on the start windows of one draw of the summaries' setting (model
1).  At every node the LP with the rows of Lemma C1 is re-solved from the previous basis and the
rows are separated again; nodes best-first; the branching job is the one whose start is spread
widest (weighted by its peak ``s + o``), split at the median of its start distribution; each
node's LP solution is rounded into a serial schedule by the mean starts.  Prints the root, the
bound every 200 nodes and at the end.  ``--only K`` branches on the ``K`` jobs of largest peak
only and stops at the first node taken whose LP solution has their starts integral: its value
is then ``min_σ LP(σ)`` over their placements ``σ``, the most a relaxation that ties only
their starts can give (§17).

``fix``: the same LP, converged, with the jobs of largest peak fixed at the starts of a proved
optimal schedule (how much of the gap is their position).

``pairs``: the LP with the rows, converged over the windows of a schedule of value ``--ub``, on
``_summaries_like(seed, n)`` of ``tests/test_cliques.py`` (§4's draws): for each pair of jobs
whose supports hold two starts that cannot run together (their staircases alone exceed ``M``),
the largest mass a joint distribution over compatible pairs of starts can carry with the LP's
marginals (a transportation LP); a pair is inconsistent when it is below 1.

    python benchmarks/cliques_probes.py branch --seed 503 --n-min 14 --n-max 14 --seconds 60
    python benchmarks/cliques_probes.py branch --seed 503 --only 4 --seconds 600
    python benchmarks/cliques_probes.py fix --seed 503 --n-min 14 --n-max 14 --counts 0,4,7
    python benchmarks/cliques_probes.py pairs --seed 1 --n 14 --ub 793

``search``: the branch and bound alone (compiled when Numba is installed, one thread) over
the windows of the heuristic's value, priced by the plain LP's duals and then by the duals of
the LP with the rows (§14, Lemma B1): the root bound, whether it finished, the best value,
the nodes and the seconds of each.  ``--n N`` draws ``_summaries_like(seed, N)`` (§4's n14 s1
is ``--seed 1 --n 14``); otherwise ``summaries_instance(seed, model, n_min, n_max)``::

    python benchmarks/cliques_probes.py search --seed 1 --n 14 --seconds 60
    python benchmarks/cliques_probes.py search --seed 200 --n-min 20 --n-max 20 --seconds 60
"""

from __future__ import annotations

import argparse
import heapq
import math
import time

import highspy
import numpy as np
from mcsf_jaillet import summaries_instance

from kvopt.exact.backends.highs_glue import to_highs
from kvopt.exact.backends.highs_matrix import build_matrix
from kvopt.exact.bounds.cliques import Nodes, separate
from kvopt.exact.common import start_windows, value_of
from kvopt.exact.heuristic import heuristic_starts, improve_starts, place
from kvopt.instance import Instance


def _up(v: float) -> float:
    return math.inf if v == math.inf else math.ceil(v - 1e-6)


class _LP:
    """The time-indexed LP over the windows of ``ub`` (one group per job), the rows of Lemma C1
    added as separated."""

    def __init__(self, inst: Instance, ub: int):
        self.inst = inst
        lo, hi = start_windows(inst, "total", ub)
        self.model = build_matrix(inst, "total", lo, hi, aggregate=False)
        self.nodes = Nodes.of(inst, self.model.col_group, self.model.col_start, self.model.groups)
        self.h = to_highs(self.model, relax=True)
        self.h.setOptionValue("threads", 1)
        self.upper = self.model.col_upper.copy()
        self.rows = 0

    def solve(self, upper: np.ndarray, rounds: int, stop: float = math.inf):
        diff = np.flatnonzero(upper != self.upper)
        if len(diff):
            self.h.changeColsBounds(
                len(diff), diff.astype(np.int32), np.zeros(len(diff)), upper[diff]
            )
            self.upper = upper.copy()
        value, x = self._run()
        for _ in range(rounds):
            if x is None or _up(value) >= stop:
                break
            cuts = separate(self.nodes, x, self.inst.memory)
            if not cuts:
                break
            for k, cols in cuts:
                self.h.addRow(
                    -highspy.kHighsInf,
                    float(k),
                    len(cols),
                    cols.astype(np.int32),
                    np.ones(len(cols)),
                )
            self.rows += len(cuts)
            value, x = self._run()
        return value, x

    def _run(self):
        self.h.run()
        status = self.h.modelStatusToString(self.h.getModelStatus())
        if status == "Infeasible":
            return math.inf, None
        if status != "Optimal":
            raise RuntimeError(f"LP: {status}")
        return self.h.getInfo().objective_function_value, np.asarray(self.h.getSolution().col_value)


def branch(inst: Instance, seconds: float, only: int = 0) -> dict:
    """The branch and cut (module doc).  With ``only = K`` it branches only on the ``K`` jobs
    of largest peak and stops at the first node taken (best-first) where their starts are
    integral, the rows separated to the end there: its value is ``min_σ LP(σ)`` over the
    placements ``σ`` of those jobs, the most that any relaxation tying only their starts (an
    arc-time-indexed model of their order, columns of their joint schedules) can give."""
    t0 = time.monotonic()
    n, o = inst.n, inst.responses.astype(np.int64)
    peak = inst.prompts.astype(np.int64) + o
    chosen = np.argsort(-peak, kind="stable")[:only] if only else np.arange(n)
    best = improve_starts(inst, heuristic_starts(inst, "total", seconds=0.5), seconds=2.0)
    ub = value_of(inst, best, "total")
    lp = _LP(inst, ub)
    cg, ct = lp.model.col_group, lp.model.col_start
    root, x = lp.solve(lp.upper.copy(), 60)
    print(f"root {root:.1f}, schedule {ub}, {lp.rows} rows, {time.monotonic() - t0:.1f} s")
    heap, count, nodes = [(root, 0, lp.upper.copy(), x)], 1, 0
    while heap and time.monotonic() - t0 < seconds:
        bound, _, upper, x = heapq.heappop(heap)
        if _up(bound) >= ub:
            continue
        nodes += 1
        mean = np.bincount(cg, weights=x * ct, minlength=n)
        for key in (mean, mean + 0.5 * o, mean + o):  # the LP's starts rounded into schedules
            st = place(inst, np.lexsort((np.arange(n), key)))
            ub = min(ub, value_of(inst, st, "total"))
        spread = np.bincount(cg, weights=x * np.abs(ct - mean[cg]), minlength=n)
        if only and spread[chosen].max() < 1e-6:  # the chosen jobs' starts are integral
            value, cx = lp.solve(upper, 80)  # their rows to the end
            if value > bound + 1e-6:
                heapq.heappush(heap, (value, count, upper, cx))
                count += 1
                continue
            return {
                "only": only,
                "root": round(root, 1),
                "tied": round(value, 1),
                "schedule": ub,
                "nodes": nodes,
                "seconds": round(time.monotonic() - t0, 1),
            }
        if np.abs(x - np.rint(x)).max() < 1e-6:
            ub = min(ub, value_of(inst, lp.model.starts_from(x, n), "total"))
            continue
        j = int(chosen[np.argmax((spread * peak)[chosen])])
        cols = np.flatnonzero(cg == j)
        k = min(int(np.searchsorted(np.cumsum(x[cols]), 0.5 - 1e-9)), len(cols) - 2)
        split = ct[cols[k]]
        for side in (ct[cols] > split, ct[cols] <= split):
            child = upper.copy()
            child[cols[side]] = 0
            value, cx = lp.solve(child, 3, stop=ub)
            if _up(value) < ub:
                heapq.heappush(heap, (value, count, child, cx))
                count += 1
        if nodes % 200 == 0:
            low = min((b for b, *_ in heap), default=ub)
            print(f"  {nodes} nodes, bound {low:.1f}, schedule {ub}, {time.monotonic() - t0:.1f} s")
    open_ = [b for b, *_ in heap if _up(b) < ub]
    return {
        "root": round(root, 1),
        "bound": round(min(open_), 1) if open_ else ub,
        "schedule": ub,
        "proved": not open_,
        "nodes": nodes,
        "rows": lp.rows,
        "seconds": round(time.monotonic() - t0, 1),
    }


def fix(inst: Instance, counts: list[int]) -> dict:
    """The LP with the rows (converged) with the ``k`` jobs of largest peak fixed at the starts
    of a proved optimal schedule, for each ``k`` in ``counts``."""
    from kvopt.exact import solve

    res = solve(inst, time_limit=120, threads=2)
    if not res.optimal:
        raise SystemExit(f"Opt not proved in 120 s ({res})")
    opt = np.zeros(inst.n, dtype=np.int64)
    for a in res.schedule.attempts:
        opt[a.job] = a.start
    order = np.argsort(-(inst.prompts + inst.responses), kind="stable")
    out = {"opt": res.objective}
    for k in counts:
        lp = _LP(inst, res.objective)
        cg, ct = lp.model.col_group, lp.model.col_start
        upper = lp.upper.copy()
        for j in order[:k]:
            upper[(cg == j) & (ct != opt[j])] = 0
        out[f"longest {k} fixed"] = round(lp.solve(upper, 80)[0], 1)
    return out


def _summaries_like(seed: int, n: int) -> Instance:
    """``tests/test_cliques.py``'s draw (``models/cliques.md`` §4's ``n14 s1`` is seed 1, n 14)."""
    rng = np.random.default_rng(seed)
    M = int(rng.integers(30, 51))
    s = rng.integers(1, 6, n)
    o = [int(rng.integers(1, M - int(si) + 1)) for si in s]
    return Instance.from_arrays(M, [int(v) for v in s], o)


def _carried(xi, xj, ok) -> float:
    """The largest mass of a distribution on the ``True`` cells of ``ok`` whose row and column
    sums stay within ``xi`` and ``xj``."""
    cells = np.argwhere(ok)
    a, m = len(xi), len(cells)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    model = highspy.HighsLp()
    model.num_col_, model.num_row_ = m, a + len(xj)
    model.col_cost_, model.col_lower_, model.col_upper_ = -np.ones(m), np.zeros(m), np.ones(m)
    model.row_lower_ = np.full(a + len(xj), -highspy.kHighsInf)
    model.row_upper_ = np.concatenate([xi, xj])
    index = np.empty(2 * m, dtype=np.int32)
    index[0::2], index[1::2] = cells[:, 0], a + cells[:, 1]
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_ = np.arange(m + 1) * 2
    model.a_matrix_.index_ = index
    model.a_matrix_.value_ = np.ones(2 * m)
    h.passModel(model)
    h.run()
    return -h.getInfo().objective_function_value


def pairs(inst: Instance, ub: int) -> dict:
    lp = _LP(inst, ub)
    value, x = lp.solve(lp.upper.copy(), 80)
    cg, ct = lp.model.col_group, lp.model.col_start
    s, o, M = inst.prompts.astype(np.int64), inst.responses.astype(np.int64), inst.memory
    conflicting, short = 0, []
    for i in range(inst.n):
        for j in range(i + 1, inst.n):
            ci = np.flatnonzero((cg == i) & (x > 1e-7))
            cj = np.flatnonzero((cg == j) & (x > 1e-7))
            ti, tj = ct[ci][:, None], ct[cj][None, :]
            last = np.minimum(ti + o[i], tj + o[j]) - 1  # both largest in their last common round
            load = (s[i] + last - ti + 1) + (s[j] + last - tj + 1)
            ok = (np.maximum(ti, tj) > last) | (load <= M)
            if ok.all():
                continue
            conflicting += 1
            mass = _carried(x[ci], x[cj], ok)
            if mass < 1 - 1e-5:
                short.append((round(1 - mass, 3), i, j))
    return {
        "lp_with_rows": round(value, 1),
        "rows": lp.rows,
        "conflicting_pairs": conflicting,
        "inconsistent": len(short),
        "shortfalls": sorted(short, reverse=True),
    }


def search(inst: Instance, seconds: float, which: tuple[str, ...] = ("plain", "cliques")):
    """``search``'s figures (module doc), one dict per pricing."""
    from kvopt.exact.bnb.search import (
        _CHECK_EVERY,
        MEMO_LIMIT,
        _Search,
        _Stopped,
        numba_installed,
    )
    from kvopt.exact.bounds.cliques import DEFAULT_KS
    from kvopt.exact.bounds.lagrange import time_indexed_prices
    from kvopt.exact.bounds.relax import lp_duals

    warm = heuristic_starts(inst, "total", seconds=1.0)
    ub = value_of(inst, warm, "total")
    lo, hi = start_windows(inst, "total", ub)
    if numba_installed():
        from kvopt.exact.bnb import compiled

        compiled.prepare()
    out = []
    for kind in which:
        t0 = time.monotonic()
        if kind == "plain":
            duals = (*lp_duals(inst, lo, hi, 60.0), ())
        else:
            duals = time_indexed_prices(inst, lo, hi, 60.0, DEFAULT_KS).duals
        lp_s = time.monotonic() - t0
        s = _Search(inst, "total", lo, hi, ub + 1, None, time.monotonic() + seconds, *[None] * 3)
        s.set_duals(*duals)
        root = s.root_bound()
        t1 = time.monotonic()
        try:
            if numba_installed():
                done = compiled.run_compiled(s, MEMO_LIMIT, _CHECK_EVERY)
            else:
                s.run()
                done = True
        except _Stopped:
            done = False
        out.append(
            {
                "duals": kind,
                "n": inst.n,
                "M": inst.memory,
                "ub": ub,
                "root": root,
                "clique_rows": len(duals[2]),
                "lp_seconds": round(lp_s, 1),
                "finished": done,
                "best": s.best if s.best_starts is not None else ub,
                "nodes": s.nodes,
                "seconds": round(time.monotonic() - t1, 1),
            }
        )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="probe", required=True)
    b = sub.add_parser("branch", help="the branch and cut on start windows (model 1)")
    b.add_argument("--seed", type=int, default=503)
    b.add_argument("--n-min", type=int, default=14)
    b.add_argument("--n-max", type=int, default=14)
    b.add_argument("--seconds", type=float, default=60.0)
    b.add_argument("--only", type=int, default=0, help="branch on the K longest jobs only")
    p = sub.add_parser("pairs", help="pairwise consistency of the LP's optimum")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--n", type=int, default=14)
    p.add_argument("--ub", type=int, default=793, help="a schedule's value (its windows)")
    f = sub.add_parser("fix", help="the LP with the longest jobs fixed at Opt's starts")
    f.add_argument("--seed", type=int, default=503)
    f.add_argument("--n-min", type=int, default=14)
    f.add_argument("--n-max", type=int, default=14)
    f.add_argument("--counts", default="0,4,7", help="how many of the longest jobs to fix")
    s = sub.add_parser("search", help="the branch and bound, plain duals against the rows'")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--n", type=int, default=None, help="draw _summaries_like(seed, n)")
    s.add_argument("--model", type=int, choices=(1, 2), default=1)
    s.add_argument("--n-min", type=int, default=20)
    s.add_argument("--n-max", type=int, default=20)
    s.add_argument("--seconds", type=float, default=60.0)
    s.add_argument("--duals", default="plain,cliques", help="plain, cliques or both")
    args = ap.parse_args(argv)
    if args.probe == "branch" and args.only < 0:
        ap.error("--only: must be 0 (every job) or more")
    if args.probe == "search":
        if args.n is not None:
            inst = _summaries_like(args.seed, args.n)
        else:
            inst = summaries_instance(args.seed, args.model, args.n_min, args.n_max)
        for row in search(inst, args.seconds, tuple(args.duals.split(","))):
            print(row)
    elif args.probe == "fix":
        inst = summaries_instance(args.seed, 1, args.n_min, args.n_max)
        print(fix(inst, [int(k) for k in args.counts.split(",")]))
    elif args.probe == "branch":
        inst = summaries_instance(args.seed, 1, args.n_min, args.n_max)
        print(f"M {inst.memory}, n {inst.n}")
        print(branch(inst, args.seconds, args.only))
    else:
        print(pairs(_summaries_like(args.seed, args.n), args.ub))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
