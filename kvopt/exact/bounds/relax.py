"""Relaxations of the time-indexed model that go beyond its LP (issue 17, ``models/time-indexed.md`` §9).

* :func:`lagrange_fix` — **reduced-cost fixing** of start columns.  The memory
  and rounded rows of the root LP are priced with their duals ``y ≤ 0``; what is
  left is "every group picks its starts", whose value ``L(y)`` is a lower bound
  on every schedule.  A start ``t`` of group ``g`` whose reduced cost exceeds the
  group's cheapest by more than ``UB − L(y)`` is in no schedule of value
  ``≤ UB``, so it is dropped; the windows shrink to the starts left.  The bound
  is recomputed from ``y`` in exact arithmetic on the model (not read from the
  LP solver), so a slightly inaccurate LP can only fix fewer columns.
* :func:`clique_lp` — the LP with **cross-round conflict cliques**: two start
  columns conflict when their two staircases alone exceed ``M`` in some common
  round (or when they are two starts of one job); every set of pairwise
  conflicting columns holds at most one running start,
  ``Σ_{(g,t) ∈ K} x_{g,t} ≤ 1``.  Cliques are separated greedily on the
  fractional support of the LP, extended to maximal ones over all columns, and
  added in rounds.
* :func:`lp_duals` — the LP's duals, the prices of the branch and bound's
  Lagrangian bound (:mod:`kvopt.exact.bnb`).
* :func:`root_bounds` — the LP, the LP with cliques, and HiGHS's root node (its
  own cuts), for ``benchmarks/relaxations.py`` and :func:`kvopt.exact.typed_bound`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ...errors import SolverError
from ...instance import Instance
from ..backends.highs_glue import lp_solved, run_highs, to_highs
from ..backends.highs_matrix import DEFAULT_CUTS, MatrixModel, build_matrix


@dataclass
class RootLP:
    """A solved LP relaxation: the model, its value, the column values and the row duals."""

    model: MatrixModel
    value: float
    x: np.ndarray
    row_dual: np.ndarray
    highs: object  # the highspy.Highs holding it (rows may be added and the LP re-solved)


def solve_lp(model: MatrixModel, time_limit: float, *, interior: bool = False) -> RootLP:
    """Solve the LP relaxation of ``model`` (total completion) with HiGHS's simplex, or with
    its interior point method without crossover when ``interior``."""
    h = to_highs(model, relax=True)
    if interior:
        h.setOptionValue("solver", "ipm")
        h.setOptionValue("run_crossover", "off")
    return _resolve(model, h, time_limit)


def _resolve(model: MatrixModel, h, time_limit: float) -> RootLP:
    native, _, interrupted = run_highs(
        h, time_limit=max(time_limit, 0.05), threads=1, seed=0, gap=0.0
    )
    if interrupted:
        raise KeyboardInterrupt
    if not lp_solved(native):
        raise SolverError(f"LP relaxation not solved (HiGHS: {native})")
    sol = h.getSolution()
    return RootLP(
        model,
        float(h.getInfo().objective_function_value),
        np.asarray(sol.col_value),
        np.asarray(sol.row_dual),
        h,
    )


def lagrange_value(model: MatrixModel, row_dual: np.ndarray) -> tuple[float, np.ndarray]:
    """``L(y)`` and the reduced costs ``c − A_memᵀ y`` of the start columns.

    ``y`` is the dual of the ``≤`` rows (memory and rounded rows), clipped to
    ``≤ 0``; the assignment rows are kept as constraints.  For every schedule
    ``x``: ``c·x ≥ c·x + y·(b − A x) = y·b + r·x ≥ y·b + Σ_g |g| min_t r_{g,t} = L(y)``.
    """
    G = len(model.groups)
    nx = int((model.col_group >= 0).sum())
    y = np.minimum(np.asarray(row_dual, dtype=np.float64), 0.0)
    y[:G] = 0.0  # the assignment rows stay constraints
    col = np.repeat(np.arange(len(model.a_start) - 1), np.diff(model.a_start))
    ay = np.bincount(col, weights=model.a_value * y[model.a_index], minlength=model.n_cols)
    r = (model.col_cost - ay)[:nx]
    caps = model.row_upper[G : len(y)]
    base = float(y[G:] @ np.where(np.isfinite(caps), caps, 0.0))
    g = model.col_group[:nx]
    rmin = np.full(G, np.inf)
    np.minimum.at(rmin, g, r)
    size = np.array([len(x) for x in model.groups], dtype=np.float64)
    return base + float(size @ rmin), r


def lagrange_fix(
    inst: Instance,
    lo: np.ndarray,
    hi: np.ndarray,
    ub: int,
    *,
    cuts: tuple[int, ...] = DEFAULT_CUTS,
    time_limit: float = 10.0,
    lp: RootLP | None = None,
) -> tuple[np.ndarray, np.ndarray, dict]:
    """Windows ``(lo, hi)`` without the start columns that no schedule of value ``≤ ub`` uses.

    Total completion only.  A start ``t`` of group ``g`` is dropped when
    ``L(y) + r_{g,t} − min_t' r_{g,t'} > ub`` (see the module doc); the new
    window of each job is the range of its group's remaining starts (holes
    inside it are kept).  Returns the new windows and statistics (``lp``,
    ``lagrange``, columns before and after).
    """
    t0 = time.monotonic()
    lo = np.asarray(lo, dtype=np.int64).copy()
    hi = np.asarray(hi, dtype=np.int64).copy()
    if lp is None:
        model = build_matrix(inst, "total", lo, hi, cuts=cuts)
        lp = solve_lp(model, time_limit)
    model = lp.model
    value, r = lagrange_value(model, lp.row_dual)
    g = model.col_group[: len(r)]
    rmin = np.full(len(model.groups), np.inf)
    np.minimum.at(rmin, g, r)
    slack = ub - value
    keep = r - rmin[g] <= slack + 1e-9 * max(1.0, abs(ub))
    t = model.col_start[: len(r)]
    for k, jobs in enumerate(model.groups):
        ts = t[(g == k) & keep]
        if len(ts):  # never empty when ub is attained by a schedule inside the windows
            lo[list(jobs)] = np.maximum(lo[list(jobs)], int(ts.min()))
            hi[list(jobs)] = np.minimum(hi[list(jobs)], int(ts.max()))
    stats = {
        "lp": lp.value,
        "lagrange": value,
        "columns": len(r),
        "kept": int(keep.sum()),
        "window_columns": int(np.maximum(hi - lo + 1, 0).sum()),
        "seconds": time.monotonic() - t0,
    }
    return lo, hi, stats


def conflicts(s, o, t, single, s2, o2, t2, single2, memory: int, same) -> np.ndarray:
    """Whether columns ``(s, o, t)`` and ``(s2, o2, t2)`` conflict (broadcast arrays).

    Two starts of one group (``same``) conflict when the group is a single job;
    otherwise two columns conflict when their staircases overlap and, in the
    last common round ``τ`` (where both are largest), ``(s + τ − t + 1) + (s2 +
    τ − t2 + 1) > M``.  A column of a group of several jobs is usable in a clique
    only if two of its own copies conflict (then ``x ≤ 1`` for it).
    """
    end = np.minimum(t + o, t2 + o2) - 1
    overlap = np.maximum(t, t2) <= end
    load = (s + end - t + 1) + (s2 + end - t2 + 1)
    return (overlap & (load > memory)) | (same & single & single2)


def separate_cliques(
    model: MatrixModel, inst: Instance, x: np.ndarray, *, max_cliques: int = 200, eps: float = 1e-6
) -> list[np.ndarray]:
    """Violated conflict cliques (column index arrays) on the fractional support of ``x``."""
    nx = int((model.col_group >= 0).sum())
    g = model.col_group[:nx]
    rep = np.array([jobs[0] for jobs in model.groups], dtype=np.int64)
    size = np.array([len(jobs) for jobs in model.groups], dtype=np.int64)
    s = inst.prompts[rep][g].astype(np.int64)
    o = inst.responses[rep][g].astype(np.int64)
    t = model.col_start[:nx].astype(np.int64)
    single = size[g] == 1
    usable = single | (2 * (s + o) > inst.memory)  # x ≤ 1 for the column
    xv = np.asarray(x)[:nx]
    support = np.flatnonzero((xv > eps) & usable)
    if len(support) < 2:
        return []
    S = support[np.argsort(-xv[support], kind="stable")]
    adj = conflicts(
        s[S, None], o[S, None], t[S, None], single[S, None],
        s[None, S], o[None, S], t[None, S], single[None, S],
        inst.memory, g[S, None] == g[None, S],
    )  # fmt: skip
    np.fill_diagonal(adj, False)
    cand = np.flatnonzero(usable)
    out, seen = [], set()
    for a in range(len(S)):
        members = [a]
        ok = adj[a].copy()
        for b in range(len(S)):  # by decreasing x
            if ok[b]:
                members.append(b)
                ok &= adj[b]
        weight = float(xv[S[members]].sum())
        if weight <= 1 + 1e-4:
            continue
        cols = S[members]
        key = tuple(sorted(cols.tolist()))
        if key in seen:
            continue
        seen.add(key)

        # extend to a maximal clique over all usable columns (x = 0 ones included), one
        # column at a time: each added column must conflict with every member so far
        def adjacent(c):
            return conflicts(
                s[cand], o[cand], t[cand], single[cand],
                s[c], o[c], t[c], single[c], inst.memory, g[cand] == g[c],
            )  # fmt: skip

        mask = ~np.isin(cand, cols)
        for c in cols:
            mask &= adjacent(c)
        extra = []
        while mask.any():
            c = cand[int(np.argmax(mask))]
            extra.append(c)
            mask &= adjacent(c)
            mask[cand == c] = False
        out.append(np.concatenate([cols, np.asarray(extra, dtype=cols.dtype)]))
        if len(out) >= max_cliques:
            break
    return out


def clique_lp(
    inst: Instance,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    cuts: tuple[int, ...] = DEFAULT_CUTS,
    rounds: int = 10,
    time_limit: float = 30.0,
    lp: RootLP | None = None,
) -> tuple[RootLP, dict]:
    """The LP with conflict cliques separated for up to ``rounds`` rounds (total completion)."""
    t0 = time.monotonic()
    deadline = t0 + time_limit
    if lp is None:
        lp = solve_lp(build_matrix(inst, "total", lo, hi, cuts=cuts), time_limit)
    first = lp.value
    added = 0
    done = 0
    for _ in range(rounds):
        if time.monotonic() > deadline:
            break
        cl = separate_cliques(lp.model, inst, lp.x)
        if not cl:
            break
        h = lp.highs
        for c in cl:
            h.addRow(-h.getInfinity(), 1.0, len(c), c.astype(np.int32), np.ones(len(c)))
        added += len(cl)
        done += 1
        before = lp.value
        try:
            lp = _resolve(lp.model, h, deadline - time.monotonic())
        except SolverError:
            break
        if lp.value < before + 1e-6:
            break
    return lp, {
        "lp": first,
        "value": lp.value,
        "cliques": added,
        "rounds": done,
        "seconds": time.monotonic() - t0,
    }


def highs_root(
    inst: Instance, lo: np.ndarray, hi: np.ndarray, *, time_limit: float, cuts=DEFAULT_CUTS
) -> float:
    """HiGHS's dual bound after its root node (its cuts and presolve; one node, one thread)."""
    model = build_matrix(inst, "total", lo, hi, cuts=cuts)
    h = to_highs(model)
    h.setOptionValue("mip_max_nodes", 1)
    run_highs(h, time_limit=time_limit, threads=1, seed=0, gap=0.0)
    b = float(h.getInfo().mip_dual_bound)
    return b if math.isfinite(b) else -math.inf


def typed_bound(instance: Instance, time_limit: float = 10.0) -> int:
    """A lower bound on Opt (total completion) for screening, best on typed instances.

    The largest of the area and processing bounds (SPEC §2), the LP of the
    aggregated time-indexed model (identical jobs as one integer column per
    start, ``models/time-indexed.md`` §4.3) with conflict cliques (:func:`clique_lp`,
    within 30 % of ``time_limit``), and the time-block column generation
    (:func:`kvopt.exact.bounds.blocks.block_bound`, blocks of half the largest
    response) in the time left; one thread.  On typed instances the plain LP is
    far weaker: cliques closed 99.6 % of the root gap on one instance with jobs
    above ``M/2`` and nothing where the jobs are small against ``M``; there the
    blocks close 18–40 % in 30 s where HiGHS's root node (the third step
    before, ``models/time-indexed.md`` §9.4, §9.8) closed 0.2–0.8 %.  The
    windows come from a 0.1 s heuristic and contain every optimal schedule, so
    the value is ``≤ Opt``; a step that does not finish in time contributes
    what it has (or nothing).
    """
    from ..common import lower_bound, start_windows, value_of
    from ..heuristic import heuristic_starts
    from .blocks import block_bound, block_length

    if instance.n == 0:
        return 0
    t0 = time.monotonic()
    cheap = lower_bound(instance, "total")
    st = heuristic_starts(instance, "total", seconds=min(0.1, 0.1 * time_limit))
    ub = value_of(instance, st, "total")
    if cheap >= ub:
        return int(ub)
    lo, hi = start_windows(instance, "total", ub)
    best = float(cheap)
    try:
        lp, _ = clique_lp(instance, lo, hi, time_limit=0.3 * time_limit)
        best = max(best, lp.value)
    except SolverError:
        pass
    left = time_limit - (time.monotonic() - t0)
    if left > 0.05 and best < ub:
        L = block_length(instance, 0.5)
        try:
            value, _ = block_bound(instance, ub, L, left, starts=st, windows=(lo, hi))
            best = max(best, value)
        except SolverError:
            pass
    return int(min(ub, math.ceil(best - 1e-6)))


#: the duals are rounded to multiples of 1 / _DYADIC
_DYADIC = float(2**20)


def lp_duals(
    inst: Instance, lo, hi, time_limit: float, *, interior: bool = False
) -> tuple[list[float], list[float]]:
    """The branch and bound's prices (:mod:`kvopt.exact.bnb`): duals of the memory rows and
    of the "one job above M/2" rows of the time-indexed LP over the windows
    (``models/time-indexed.md``), clipped to ``≤ 0`` and rounded to multiples of ``2⁻²⁰``
    (any ``y ≤ 0`` gives a valid bound; dyadic values keep it exact).  ``interior``: from
    the interior point method (``benchmarks/duals.py``; ``models/bnb.md`` §10)."""
    model = build_matrix(inst, "total", lo, hi, aggregate=False, cuts=(1,))
    lp = solve_lp(model, time_limit, interior=interior)
    n, H = inst.n, model.horizon
    y = np.minimum(np.asarray(lp.row_dual, dtype=np.float64), 0.0)
    y = np.round(y * _DYADIC) / _DYADIC
    return y[n : n + H].tolist(), y[n + H : n + 2 * H].tolist()
