"""The time-indexed LP's prices at real token lengths, in exact integers (issue 46,
``models/orders.md`` §10).

The LP of ``models/time-indexed.md`` §3 (memory rows and the "one job above ``M/2``" rows)
over start windows ``[lo_i, hi_i]`` that hold every schedule of value ``≤ UB`` is cheap when
those windows are narrow, whatever the horizon: on sixteen real requests it has about 10⁴
columns and 2·10⁶ nonzeros and is solved in 1–5 s, and its value is 2–8 % below Opt — above
the bound CP-SAT's event model reaches in a minute.  Its row duals ``y ≤ 0``, rounded to
multiples of ``1/D`` (``D = 2²⁰``; any ``y ≤ 0`` is valid), give for every schedule inside
the windows (Lagrangian relaxation of the rows; ``models/time-indexed.md`` §9.1)

    ``D · Σ C_i  ≥  Y·b + Σ_i R_i(S_i)``,   ``R_i(t) = D (t + o_i) − Σ_ρ Y_ρ a_{ρ,i,t}``,

with ``Y = D y`` integral, so every quantity is an integer and the inequality is exact.
:class:`Prices` keeps ``base = Y·b + Σ_i min_t R_i(t)`` and the tables ``T_i = R_i − min R_i``;
they give a lower bound (``⌈base / D⌉``), reduced-cost fixing of the windows for an upper
bound (:meth:`Prices.windows`), and the rows the event model adds so that its search sees the
bound at every node (:meth:`Prices.lines`, used by
:class:`~kvopt.exact.backends.events.CpSatEvents`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...errors import SolverError
from ...instance import Instance
from ..common import instance_key

#: the duals are rounded to multiples of 1 / SCALE (so every price is an integer)
SCALE = 1 << 20
#: largest LP built (memory-row nonzeros ``Σ_i (hi_i − lo_i + 1) o_i``): about 10 s and 0.8 GB
#: (sixteen Azure requests: 2·10⁶, 3-5 s, 470 MB peak for the whole solve)
MAX_NONZEROS = 4_000_000


def nonzeros(inst: Instance, lo, hi) -> int:
    """The memory-row nonzeros of the time-indexed LP over the windows ``[lo, hi]``."""
    width = np.maximum(np.asarray(hi, dtype=np.int64) - np.asarray(lo, dtype=np.int64) + 1, 0)
    return int((width * inst.responses.astype(np.int64)).sum())


@dataclass(frozen=True)
class Prices:
    """The LP's Lagrangian over windows ``[lo_i, hi_i]``, in units of ``1 / SCALE``:
    ``SCALE · Σ C ≥ base + Σ_i tables[i][S_i − lo_i]`` for every schedule in the windows
    (total completion; module doc).  ``lp`` is the LP's value as HiGHS reports it
    (information only: the bound is :attr:`bound`, recomputed from ``base``)."""

    lo: np.ndarray
    hi: np.ndarray
    tables: tuple[np.ndarray, ...]
    base: int
    lp: float
    seconds: float
    #: the duals themselves, for the branch and bound's Lagrangian bound
    #: (``_Search.set_duals``): ``(ym, yc, cliques)`` — the memory rows', the "one job above
    #: M/2" rows' (by round) and the clique rows' ``(k, μ, jobs, starts)``, all ``≤ 0`` in
    #: multiples of ``1 / SCALE`` (exact in floating point)
    duals: tuple | None = field(default=None, compare=False, repr=False)

    @property
    def bound(self) -> int:
        """``⌈base / SCALE⌉``: a lower bound on the total completion of every schedule in
        the windows."""
        return -(-self.base // SCALE)

    def covers(self, lo, hi) -> bool:
        """Do these prices hold for windows ``[lo, hi]`` (inside their own)?"""
        return bool(np.all(np.asarray(lo) >= self.lo) and np.all(np.asarray(hi) <= self.hi))

    def windows(self, lo, hi, ub: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Windows ``[lo, hi]`` (inside the prices' own) cut to the starts that some schedule
        of value ``≤ ub`` can use: start ``t`` of job ``i`` is kept iff
        ``tables[i][t] ≤ SCALE · ub − base`` (the other jobs add at least 0).  ``None`` when a
        job has no start left (no schedule of value ``≤ ub`` in the windows)."""
        room = SCALE * int(ub) - self.base
        nlo = np.asarray(lo, dtype=np.int64).copy()
        nhi = np.asarray(hi, dtype=np.int64).copy()
        for i, tab in enumerate(self.tables):
            a, b = int(nlo[i] - self.lo[i]), int(nhi[i] - self.lo[i])
            ok = np.flatnonzero(tab[a : b + 1] <= room)
            if not len(ok):
                return None
            nlo[i], nhi[i] = nlo[i] + ok[0], nlo[i] + ok[-1]
        return nlo, nhi

    def lines(self, i: int, lo: int, hi: int, units: int) -> list[tuple[int, int, int]]:
        """Rows ``p · e ≥ q · (S_i − lo) + r`` (integers, ``p > 0``) whose maximum is the lower
        convex hull of ``⌊units · T_i(t) / SCALE⌋`` over ``t ∈ [lo, hi]``: every point of the
        table lies on or above each row, so ``e_i`` may be any value ``≥`` the table's."""
        tab = self.tables[i][lo - int(self.lo[i]) : hi - int(self.lo[i]) + 1]
        pts = _lower_hull((tab * units) // SCALE)
        if len(pts) == 1:
            return [(1, 0, pts[0][1])]
        return [(x2 - x1, y2 - y1, y1 * x2 - y2 * x1) for (x1, y1), (x2, y2) in zip(pts, pts[1:])]


def _lower_hull(values: np.ndarray) -> list[tuple[int, int]]:
    """The vertices of the lower convex hull of the points ``(x, values[x])`` (monotone
    chain), as Python integers."""
    pts: list[tuple[int, int]] = []
    for x, y in enumerate(values.tolist()):
        while len(pts) >= 2:
            (x1, y1), (x2, y2) = pts[-2], pts[-1]
            if (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1) <= 0:
                pts.pop()
            else:
                break
        pts.append((x, int(y)))
    return pts


def time_indexed_prices(
    inst: Instance, lo, hi, time_limit: float, cliques: tuple[int, ...] = (), hint=None
) -> Prices | None:
    """The LP of the module doc over ``[lo, hi]`` (total completion), solved by HiGHS's
    simplex on one thread within ``time_limit``, and its prices.  ``None`` when the LP has
    more than :data:`MAX_NONZEROS` nonzeros or is not solved in time.

    ``cliques`` (the ``k`` of :mod:`kvopt.exact.bounds.cliques`): the LP with the completion
    cliques separated into it (``models/cliques.md``).  Every feasible schedule satisfies
    them, so their duals are priced like the memory rows' and the inequality stays exact;
    ``lp`` is then the value of the LP with the rows.  The rows are kept only while tight
    (``drop_slack``, ``models/cliques.md`` §10): the duals are those of the rows in the last
    LP, every one of them valid.  With :data:`COLGEN_COLUMNS` start columns or more, that LP
    is solved by column generation (:mod:`kvopt.exact.bounds.colgen`, its first master
    around ``hint``, starts of a schedule in the windows) and the prices are those of its
    best round."""
    from ..backends.highs_matrix import build_matrix
    from .relax import solve_lp

    t0 = time.monotonic()
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    if inst.n == 0 or np.any(hi < lo) or nonzeros(inst, lo, hi) > MAX_NONZEROS:
        return None
    model = build_matrix(inst, "total", lo, hi, aggregate=False, cuts=(1,))
    added: tuple = ()
    try:
        if cliques:
            from .cliques import lp_with_cliques

            res = lp_with_cliques(
                inst, model, ks=cliques, deadline=t0 + time_limit, hint=hint, drop_slack=True
            )
            row_dual, value, added = res.duals, res.value, res.added
        else:
            lp = solve_lp(model, time_limit)
            row_dual, value = lp.row_dual, lp.value
    except SolverError:
        return None
    n = inst.n
    y = np.minimum(np.asarray(row_dual, dtype=np.float64), 0.0)
    Y = np.rint(y * SCALE).astype(np.int64)
    Y[:n] = 0  # the assignment rows (one start per job) stay constraints
    caps = np.asarray(model.row_upper, dtype=np.float64)
    Ym = Y[: model.n_rows]
    finite = np.isfinite(caps) & (Ym != 0)
    base = sum(int(c) * int(v) for c, v in zip(caps[finite].astype(np.int64), Ym[finite]))
    nx = int((model.col_group >= 0).sum())
    starts = np.asarray(model.a_start, dtype=np.int64)
    prod = Y[np.asarray(model.a_index)] * np.rint(model.a_value).astype(np.int64)
    col_sum = np.zeros(model.n_cols, dtype=np.int64)
    np.add.at(col_sum, np.repeat(np.arange(model.n_cols), np.diff(starts)), prod)
    # the clique rows ``Σ_{cols} x ≤ k`` in the last LP (if any), after the model's rows in
    # HiGHS's order
    group_all = np.asarray(model.col_group)
    start_all = np.asarray(model.col_start)
    rows = []
    for r, (k, cols) in enumerate(added):
        v = int(Y[model.n_rows + r]) if model.n_rows + r < len(Y) else 0
        if v:
            base += k * v
            col_sum[cols] += v
            rows.append((int(k), v / SCALE, group_all[cols].tolist(), start_all[cols].tolist()))
    H = model.horizon
    duals = (
        (Y[n : n + H] / SCALE).tolist(),
        (Y[n + H : n + 2 * H] / SCALE).tolist() if model.cuts[:1] == (1,) else [0.0] * H,
        tuple(rows),
    )
    cost = np.rint(model.col_cost).astype(np.int64)
    R = (SCALE * cost - col_sum)[:nx]
    group = model.col_group[:nx]
    tables = []
    for i in range(n):
        r = R[group == i]
        if len(r) != int(hi[i] - lo[i] + 1):
            raise SolverError(f"job {i}: {len(r)} start columns for window {lo[i]}..{hi[i]}")
        m = int(r.min())
        base += m
        tables.append(r - m)
    return Prices(lo, hi, tuple(tables), base, float(value), time.monotonic() - t0, duals=duals)


#: prices already computed, by instance data and windows (the phases of one solve reuse them)
_CACHE: dict[tuple, Prices] = {}


def cached_prices(
    inst: Instance, lo, hi, time_limit: float, cliques: tuple[int, ...] = (), hint=None
) -> Prices | None:
    """:func:`time_indexed_prices`, reusing prices computed for the same instance (and the
    same ``cliques``) over windows that contain ``[lo, hi]`` (prices over wider windows hold
    on narrower ones)."""
    key = (instance_key(inst), tuple(cliques))
    old = _CACHE.get(key)
    if old is not None and old.covers(lo, hi):
        return old
    new = time_indexed_prices(inst, lo, hi, time_limit, cliques, hint)
    if new is not None:
        if len(_CACHE) > 16:
            _CACHE.clear()
        _CACHE[key] = new
    return new


def priced_windows(problem, limits, share: float, cliques: tuple[int, ...] = ()):
    """The prices of a phase that starts from them (``events-lagrange``, ``events-cliques``,
    ``bnb-cliques``): :func:`cached_prices` for ``problem``'s instance and windows within
    ``share`` of ``limits.time_limit``, then ``(prices, rest, lo, hi)`` — the prices (or
    ``None``), the limits with what is left of the time (the LP's time counts: given the whole
    limit, a model after it overran by the LP's 12 s, issue 52), and the windows cut by the
    prices for ``problem.ub`` (as they are without prices or ``ub``, or when no schedule of
    value ``≤ ub`` is in them at all)."""
    from dataclasses import replace

    t0 = time.monotonic()
    prices = cached_prices(
        problem.instance, problem.lo, problem.hi, share * limits.time_limit, cliques, problem.warm
    )
    rest = replace(limits, time_limit=max(limits.time_limit - (time.monotonic() - t0), 0.01))
    lo, hi = problem.lo, problem.hi
    if prices is not None and problem.ub is not None:
        cut = prices.windows(lo, hi, problem.ub)
        if cut is not None:
            lo, hi = cut
    return prices, rest, lo, hi


def clique_terms(cliques, lo, hi, start, horizon: int):
    """The rows of Lemma C1 in the branch and bound's Lagrangian (``models/cliques.md`` §14,
    Lemma B1): ``cliques`` as ``(k, μ, jobs, starts)`` (``Prices.duals``), the windows
    ``[lo_j, hi_j]`` and the starts placed so far (``−1``: none).  Returns ``(crow, extra)``:
    ``crow[τ]`` the terms ``μ (k − placed nodes)`` of the rows priced at round ``τ`` — the
    latest start among the row's nodes in the windows — and ``extra[(j, t)][u]`` the duals
    added to the price of job ``j`` started at ``t`` in its round ``t + u`` (that round).
    Rows with ``μ = 0`` or no node in the windows are left out (priced 0)."""
    extra: dict[tuple[int, int], dict[int, float]] = {}
    crow = [0.0] * (horizon + 1)
    for k, mu, jobs, starts in cliques:
        if not mu < 0.0:
            continue
        ok = [(int(j), int(t)) for j, t in zip(jobs, starts) if lo[j] <= t <= hi[j]]
        if not ok:
            continue
        tau = max(t for _, t in ok)
        placed = sum(1 for j, t in ok if start[j] == t)
        crow[tau] += mu * (k - placed)
        for j, t in ok:
            e = extra.setdefault((j, t), {})
            e[tau - t] = e.get(tau - t, 0.0) + mu
    return crow, extra
