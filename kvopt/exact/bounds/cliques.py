"""Completion cliques: the time-indexed LP with rows that see how far running jobs will grow
(issue 52, ``models/cliques.md``).

A job's memory grows by one token a round until it completes, so two jobs that run in the
same round ``τ`` are still both running in the last round of whichever completes first, each
grown by the rounds left until then.  For a *node* ``(i, t)`` (job ``i`` started at ``t``)
running at ``τ`` write ``h = s_i + τ − t + 1`` (its memory at ``τ``) and ``P_i = s_i + o_i``
(its memory in its last round).  **Lemma C1** (``models/cliques.md`` §2): for integers
``k ≥ 1`` and ``θ ≥ 1``, no feasible schedule runs more than ``k`` of the nodes with

    ``h ≥ θ``   and   ``(k + 1) P_i − k h > M − k θ``

in round ``τ``; so ``Σ x_{i,t} ≤ k`` over them is valid for every schedule (not only optimal
ones).  ``k = 1, θ = ⌊M/2⌋ + 1`` is the "one job above ``M/2``" row of
``models/time-indexed.md`` §4.2; a small ``θ`` puts whole jobs with long responses into one
row, which is what the LP misses where responses are as long as the memory (Jaillet et al.'s
setting, ``o ≤ M − s``: the LP 14–26 % below Opt, the LP with these rows 7–8 %).

There are up to ``M`` values of ``θ`` per round and ``k``, each row with many nonzeros, so
they are separated: :func:`separate` finds, for each round and ``k``, the ``θ`` whose row the
LP's solution violates most (one pass over the running nodes with a difference array), and
:func:`add_cliques` re-solves until none is violated or the time is up.  Every LP solved
along the way is a relaxation of the time-indexed model with valid rows, so the last solved
value is a lower bound on every schedule inside the windows, however early it stops.

:func:`clique_bound` is ``kvopt bound --cliques``.  The route ``cliques`` uses the LP's prices
(:func:`kvopt.exact.bounds.lagrange.time_indexed_prices` with ``cliques``): the variants
``bnb-cliques`` (the branch and bound over the windows they cut) and ``events-cliques`` (the event
model with them).  HiGHS's own branch and bound on the model with the rows was measured and not
adopted (``models/cliques.md`` §5).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from ...errors import SolverError
from ...instance import Instance

#: the ``k`` separated by default: on the four n = 14–16 instances of Jaillet et al.'s setting
#: with a known Opt, ``k = 1`` closed 35–68 % of the LP's gap to Opt and ``k = 1, 2, 3``
#: 44–71 %, for 1.2–1.6 × the rows (``models/cliques.md`` §4)
DEFAULT_KS: tuple[int, ...] = (1, 2, 3)
#: start columns from which the LP with the rows is solved by column generation
#: (:mod:`kvopt.exact.bounds.colgen`; ``models/cliques.md`` §13: at n = 30 it converges in
#: 5–12 s where the full LP takes 8–20 s, at n = 20 (5,000 columns) both take 1.5 s)
COLGEN_COLUMNS = 10_000
#: separation rounds at most (each adds at most one row per round of time and ``k``)
MAX_ROUNDS = 60
#: a row is violated when the LP's left-hand side exceeds ``k`` by more than this
VIOLATION = 1e-6
#: with ``drop_slack``, a row whose left-hand side is this far below ``k`` (and dual 0) is
#: dropped before the next rows are added (``models/cliques.md`` §10)
SLACK = 1e-6


@dataclass(frozen=True)
class Nodes:
    """Every (column, round) pair of a time-indexed model's start columns, sorted by round:
    the column, its memory ``h`` in that round and its job's peak ``P`` (the makespan
    column, if any, is left out)."""

    column: np.ndarray
    h: np.ndarray
    peak: np.ndarray
    first: np.ndarray  # first[τ] … first[τ + 1] − 1 are round τ's pairs

    @classmethod
    def of(cls, inst: Instance, col_group, col_start, groups) -> Nodes:
        col_group = np.asarray(col_group)
        ok = col_group >= 0
        cols = np.flatnonzero(ok)
        rep = np.array([g[0] for g in groups], dtype=np.int64)
        s = inst.prompts[rep].astype(np.int64)[col_group[cols]]
        o = inst.responses[rep].astype(np.int64)[col_group[cols]]
        t = np.asarray(col_start, dtype=np.int64)[cols]
        c = np.repeat(cols, o)
        u = np.arange(len(c)) - np.repeat(np.cumsum(o) - o, o)
        tau = np.repeat(t, o) + u
        h = np.repeat(s, o) + u + 1
        peak = np.repeat(s + o, o)
        order = np.argsort(tau, kind="stable")
        horizon = int(tau.max()) + 1 if len(tau) else 0
        first = np.searchsorted(tau[order], np.arange(horizon + 1))
        return cls(c[order], h[order], peak[order], first)


def theta_range(h: np.ndarray, peak: np.ndarray, k: int, memory: int):
    """The ``θ`` for which a node of memory ``h`` and peak ``P`` is in the ``k``-row of Lemma
    C1: ``max(1, ⌊(M − (k+1)P + k h) / k⌋ + 1) ≤ θ ≤ h`` (empty when the first exceeds ``h``)."""
    alpha = (k + 1) * peak - k * h
    lo = np.maximum(1, (memory - alpha) // k + 1)
    return lo, h


def separate(
    nodes: Nodes, x: np.ndarray, memory: int, ks: tuple[int, ...] = DEFAULT_KS
) -> list[tuple[int, np.ndarray]]:
    """The most violated row of Lemma C1 for each round and ``k`` (``(k, columns)``, the row
    being ``Σ_{columns} x ≤ k``), where one is violated by more than :data:`VIOLATION`."""
    out = []
    for tau in range(len(nodes.first) - 1):
        a, b = nodes.first[tau], nodes.first[tau + 1]
        if b - a < 2:
            continue
        c = nodes.column[a:b]
        xv = x[c]
        if xv.sum() <= min(ks) + VIOLATION:
            continue
        h, peak = nodes.h[a:b], nodes.peak[a:b]
        for k in ks:
            lo, hi = theta_range(h, peak, k, memory)
            ok = lo <= hi
            if xv[ok].sum() <= k + VIOLATION:
                continue
            d = np.zeros(memory + 2)
            np.add.at(d, lo[ok], xv[ok])
            np.add.at(d, hi[ok] + 1, -xv[ok])
            sums = np.cumsum(d)
            theta = int(np.argmax(sums))
            if sums[theta] > k + VIOLATION:
                sel = ok & (lo <= theta) & (hi >= theta)
                out.append((k, np.unique(c[sel])))
    return out


@dataclass(frozen=True)
class CliqueLP:
    """The LP with completion cliques: ``value`` (the last LP solved to optimality), ``lp``
    (the first: the time-indexed LP itself), the rows added, the separation rounds, whether
    separation ended with no violated row, and the seconds taken."""

    value: float
    lp: float
    rows: int
    rounds: int
    converged: bool
    seconds: float
    #: the rows in the LP at the end, in HiGHS's order after the model's (``(k, columns)``:
    #: ``Σ_{columns} x ≤ k``; every row added unless ``drop_slack``); for the prices
    added: tuple = field(default=(), compare=False, repr=False)
    #: whether the solution HiGHS holds (its row duals) is of the model with these rows: false
    #: only when rows were dropped and the deadline came before the next solve
    aligned: bool = field(default=True, compare=False, repr=False)
    #: the duals to price with (the model's rows, then ``added``'s), when they are not the
    #: solution HiGHS holds (:mod:`kvopt.exact.bounds.colgen`: those of its best round)
    duals: np.ndarray | None = field(default=None, compare=False, repr=False)
    #: the start columns HiGHS held at the end (column generation), or ``None`` (all of them)
    columns: int | None = field(default=None, compare=False, repr=False)


def add_cliques(
    h,
    inst: Instance,
    nodes: Nodes,
    *,
    ks: tuple[int, ...] = DEFAULT_KS,
    deadline: float,
    max_rounds: int = MAX_ROUNDS,
    threads: int = 1,
    drop_slack: bool = False,
) -> CliqueLP:
    """Solve the relaxed model held by the ``highspy.Highs`` ``h`` and add violated rows of
    Lemma C1 until none is left, ``max_rounds`` rounds or ``deadline`` (``time.monotonic()``).
    Each re-solve starts from the previous basis (HiGHS keeps it when rows are appended: the
    dual simplex goes on from it).  ``drop_slack``: before each round's rows are added, the
    rows added earlier that have slack and dual 0 at the current optimum are deleted (that
    optimum and its basis stay as they are); the converged value is the same, the LP smaller
    (``models/cliques.md`` §10: n = 30, 38.5 → 32.0 s, 2,780 → 1,775 rows at the end).
    Raises :class:`SolverError` when not even the first LP is solved in time."""
    import highspy

    from ..backends.highs_glue import lp_solved, run_highs

    t0 = time.monotonic()
    # rows deleted since HiGHS last ran: its solution's arrays are then stale and no longer
    # in the rows' order (HiGHS truncates them), so the prices must not read its row duals
    stale = False

    def lp_run() -> float | None:
        nonlocal stale
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        stale = False
        native, _, interrupted = run_highs(h, time_limit=left, threads=threads, seed=0, gap=0.0)
        if interrupted:
            raise KeyboardInterrupt
        return float(h.getInfo().objective_function_value) if lp_solved(native) else None

    first = lp_run()
    if first is None:
        raise SolverError("the time-indexed LP was not solved in time")
    value, rounds, converged = first, 0, False
    base = h.getNumRow()
    active: list[tuple[int, np.ndarray]] = []  # the rows in the model, in HiGHS's order
    total = 0
    while rounds < max_rounds and time.monotonic() < deadline:
        sol = h.getSolution()
        x = np.asarray(sol.col_value)
        cuts = separate(nodes, x, inst.memory, ks)
        if not cuts:
            converged = True
            break
        if drop_slack and active:
            # rows kept only while tight: a row with slack has dual 0, so dropping it leaves
            # this LP's optimum (and the basis, its slack being basic) as they are
            act = np.asarray(sol.row_value)[base:]
            dual = np.asarray(sol.row_dual)[base:]
            rhs = np.array([k for k, _ in active], dtype=np.float64)
            slack = (act < rhs - SLACK) & (dual == 0.0)
            if slack.any():
                gone = np.flatnonzero(slack)
                h.deleteRows(len(gone), (gone + base).astype(np.int32))
                active = [r for r, s in zip(active, slack) if not s]
                stale = True
        for k, cols in cuts:
            h.addRow(
                -highspy.kHighsInf, float(k), len(cols), cols.astype(np.int32), np.ones(len(cols))
            )
        active.extend(cuts)
        total += len(cuts)
        rounds += 1
        v = lp_run()
        if v is None:
            break
        value = max(value, v)
    return CliqueLP(
        value, first, total, rounds, converged, time.monotonic() - t0, tuple(active), not stale
    )


def lp_with_cliques(
    inst: Instance,
    model,
    *,
    ks: tuple[int, ...] = DEFAULT_KS,
    deadline: float,
    hint=None,
    drop_slack: bool = False,
) -> CliqueLP:
    """The relaxed ``model`` (total completion, one group per job) with the rows of Lemma C1:
    by column generation from :data:`COLGEN_COLUMNS` start columns on
    (:func:`kvopt.exact.bounds.colgen.add_cliques_colgen`, its first master around ``hint``),
    over every column below (:func:`add_cliques`).  Either way ``duals`` and ``added`` are
    the duals and the rows to price with: the best round's, or the last LP's (the model's rows
    only, ``added`` empty, when that LP's duals are stale after dropped rows)."""
    from ..backends.highs_glue import to_highs

    nodes = Nodes.of(inst, model.col_group, model.col_start, model.groups)
    if model.n_cols >= COLGEN_COLUMNS:
        from .colgen import add_cliques_colgen

        return add_cliques_colgen(inst, model, nodes, ks=ks, deadline=deadline, hint=hint)
    h = to_highs(model, relax=True)
    res = add_cliques(h, inst, nodes, ks=ks, deadline=deadline, drop_slack=drop_slack)
    duals = np.asarray(h.getSolution().row_dual)
    if not res.aligned:  # stale duals after dropped rows: the model's rows' only
        return replace(res, duals=duals[: model.n_rows], added=())
    return replace(res, duals=duals)


def clique_bound(
    instance: Instance, time_limit: float = 60.0, ks: tuple[int, ...] = DEFAULT_KS
) -> CliqueLP:
    """The time-indexed LP of ``models/time-indexed.md`` §3 (with its ``k = 1`` rounded rows)
    plus the completion cliques of Lemma C1, over the start windows of the heuristic's
    schedule (they keep an optimal schedule, which satisfies every row: the value is
    ``≤ Opt``), by column generation from :data:`COLGEN_COLUMNS` start columns on (``value``
    is then its best Lagrangian bound, ``lp`` not computed: ``nan``).  ``kvopt bound
    --cliques``.  Total completion time."""
    from ..backends.highs_matrix import build_matrix
    from ..common import start_windows, value_of
    from ..heuristic import heuristic_starts

    if instance.n == 0:
        return CliqueLP(0.0, 0.0, 0, 0, True, 0.0)
    t0 = time.monotonic()
    st = heuristic_starts(instance, "total", seconds=min(0.2, 0.05 * time_limit))
    lo, hi = start_windows(instance, "total", value_of(instance, st, "total"))
    model = build_matrix(instance, "total", lo, hi, aggregate=False)
    res = lp_with_cliques(instance, model, ks=ks, deadline=t0 + time_limit, hint=st)
    return CliqueLP(
        res.value,
        res.lp,
        res.rows,
        res.rounds,
        res.converged,
        time.monotonic() - t0,
        columns=res.columns,
    )
