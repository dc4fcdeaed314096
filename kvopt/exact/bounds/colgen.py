"""The LP with completion cliques by column generation over the start columns (issue 52,
``models/cliques.md`` §13).

:func:`kvopt.exact.bounds.cliques.add_cliques` gives HiGHS every start column of the windows:
at 40–60 jobs of Jaillet et al.'s setting that is about 58,000 columns, and each re-solve
after rows are added takes 4–20 s, so the LP is far from converged within a minute.  Here
HiGHS holds a *restricted master*: one artificial column per job (cost :data:`ARTIFICIAL`
above the dearest start, in the job's assignment row only, so the master is feasible from
the start) and the start columns priced in so far.  Each round solves the master, prices
every start column of the windows against its duals (``r = c − Aᵀy``, the clique rows
included), adds the most negative ones, and separates the rows of Lemma C1 on the master's
solution; it ends when neither finds anything (the master's value is then the LP's with
the rows) or at the deadline.

Every round gives a valid bound whatever the master holds (Lagrangian relaxation of the
memory and clique rows with the master's duals ``y ≤ 0``; ``models/time-indexed.md`` §9.1):

    ``Σ C ≥ y·b + Σ_i min_t (c_{i,t} − y·A_{i,t}) = z_master + Σ_i min_t r_{i,t}``,

the minimum over *all* of job ``i``'s starts in the windows.  The largest of these is the
value returned, with the duals and rows that gave it, so the prices of
:func:`kvopt.exact.bounds.lagrange.time_indexed_prices` (which recompute the same bound in
exact integers over every column) are those of the best round, not of the last.
"""

from __future__ import annotations

import time

import numpy as np

from ...errors import SolverError
from ...instance import Instance
from .cliques import DEFAULT_KS, MAX_ROUNDS, SLACK, CliqueLP, Nodes, separate

#: the artificial column's cost above the dearest start column of the windows
ARTIFICIAL = 1000.0
#: the artificial columns' cost is raised tenfold while one stays in a converged master, up
#: to this
ARTIFICIAL_MAX = 1e12
#: start columns added per job and round at most (the most negative reduced costs)
PER_JOB = 8
#: the starts of each job in the first master: this many on each side of the hint
BAND = 2
#: separate the rows every this many rounds while columns are still priced in (0: only once
#: none is)
SEPARATE_EVERY = 1
#: a reduced cost below ``−TOLERANCE`` prices a column in
TOLERANCE = 1e-6


def add_cliques_colgen(
    inst: Instance,
    model,
    nodes: Nodes,
    *,
    ks: tuple[int, ...] = DEFAULT_KS,
    deadline: float,
    threads: int = 1,
    hint: np.ndarray | None = None,
    max_rounds: int = 10 * MAX_ROUNDS,
    drop_slack: bool = True,
) -> CliqueLP:
    """The LP of ``model`` (a :class:`~kvopt.exact.backends.highs_matrix.MatrixModel` of
    total completion, one group per job) with the rows of Lemma C1, by column generation
    (module doc).  ``hint``: starts (one per job) whose columns, and :data:`BAND` on each
    side, form the first master (the windows' first starts when ``None``).  The result's
    ``value`` is the best Lagrangian bound of any round, ``lp`` is ``nan`` (the plain LP is
    never solved on its own: rows are separated from the first round), and ``duals`` /
    ``added`` the model's and the clique rows' duals of the best round (the rows as full
    column lists).  Raises :class:`SolverError` when not even one master is solved in time."""
    from ..backends.highs_glue import lp_solved, run_highs

    t0 = time.monotonic()
    n = inst.n
    ncol = model.n_cols
    group = np.asarray(model.col_group)
    if np.any(group < 0) or len(model.groups) != n:
        raise SolverError("column generation needs total completion and one group per job")
    cost = np.asarray(model.col_cost, dtype=np.float64)
    a_index = np.asarray(model.a_index, dtype=np.int64)
    a_value = np.asarray(model.a_value, dtype=np.float64)
    col_of = np.repeat(np.arange(ncol), np.diff(np.asarray(model.a_start, dtype=np.int64)))
    nrow = model.n_rows
    first_col = np.searchsorted(group, np.arange(n + 1))  # job i: columns first_col[i] …
    rmp = RestrictedMaster(model)
    h = rmp.h

    lo = np.asarray(model.col_start, dtype=np.int64)[first_col[:-1]]
    width = np.diff(first_col)
    centre = lo if hint is None else np.clip(np.asarray(hint, dtype=np.int64), lo, lo + width - 1)
    off = np.arange(-BAND, BAND + 1)
    cand = (centre - lo)[:, None] + off[None, :]
    ok = (cand >= 0) & (cand < width[:, None])
    rmp.add_columns((first_col[:-1][:, None] + cand)[ok])

    best, best_duals, best_rows = -np.inf, None, ()
    rounds, converged, total = 0, False, 0
    while rounds < max_rounds:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        native, _, interrupted = run_highs(h, time_limit=left, threads=threads, seed=0, gap=0.0)
        if interrupted:
            raise KeyboardInterrupt
        if not lp_solved(native):
            break
        rounds += 1
        sol = h.getSolution()
        dual = np.asarray(sol.row_dual, dtype=np.float64)
        y = dual[:nrow].copy()
        y[n:] = np.minimum(y[n:], 0.0)
        ycl = np.minimum(dual[nrow:], 0.0)
        red = cost - np.bincount(col_of, weights=y[a_index] * a_value, minlength=ncol)
        for d, (_, cols) in zip(ycl, rmp.rows):
            if d:
                red[cols] -= d
        per_job = np.minimum.reduceat(red, first_col[:-1])
        # z_master = π·1 + y·b: the bound with the clamped duals is recomputed from them
        yb = float(
            np.dot(y[n:], np.where(np.isfinite(model.row_upper[n:]), model.row_upper[n:], 0))
        )
        yb += float(sum(k * d for d, (k, _) in zip(ycl, rmp.rows)))
        bound = yb + float(y[:n].sum()) + float(per_job.sum())
        if bound > best:
            best = bound
            best_duals = np.concatenate([y, ycl])
            best_rows = tuple(rmp.rows)
        neg = np.flatnonzero(red < -TOLERANCE)
        # separation on the master's solution (zero outside it)
        x = rmp.x(sol.col_value)
        sep = not len(neg) or (SEPARATE_EVERY and rounds % SEPARATE_EVERY == 0)
        cuts = separate(nodes, x, inst.memory, ks) if sep else []
        if not len(neg) and not cuts:
            art = np.asarray(sol.col_value[:n])
            if np.all(art <= TOLERANCE):
                converged = True
                break
            # an artificial still in the optimum: its cost was not high enough to keep it
            # out (the bound above holds all the same); raise it and go on
            if not rmp.raise_artificials(np.flatnonzero(art > TOLERANCE)):
                break  # no fractional schedule in the windows without them: not converged
            continue
        if drop_slack and cuts and rmp.rows:
            act = np.asarray(sol.row_value)[nrow:]
            rhs = np.array([k for k, _ in rmp.rows], dtype=np.float64)
            rmp.drop_rows((act < rhs - SLACK) & (dual[nrow:] == 0.0))
        if len(neg):
            g = group[neg]
            order = np.lexsort((red[neg], g))
            g, neg = g[order], neg[order]
            rank = np.arange(len(neg)) - np.searchsorted(g, g)
            rmp.add_columns(neg[rank < PER_JOB])
        rmp.add_rows(cuts)
        total += len(cuts)
    if best_duals is None:
        raise SolverError("the restricted master was not solved in time")
    return CliqueLP(
        best,
        float("nan"),
        total,
        rounds,
        converged,
        time.monotonic() - t0,
        best_rows,
        True,
        duals=best_duals,
        columns=len(rmp.master),
    )


class RestrictedMaster:
    """The restricted master of :func:`add_cliques_colgen` in a ``highspy.Highs``: the rows of
    a :class:`~kvopt.exact.backends.highs_matrix.MatrixModel` (one group per job), one
    artificial column per job (cost :data:`ARTIFICIAL` above the dearest start column, in its
    assignment row only), the start columns added so far and the clique rows added so far.
    ``pos[c]`` is HiGHS's column of the model's column ``c`` (−1 if not in the master),
    ``master`` the model's columns in HiGHS's order after the artificials, and ``rows`` the
    clique rows ``(k, columns)`` (the model's columns, in the master or not) in HiGHS's order
    after the model's rows.  A column added later enters every row of ``rows`` that lists it."""

    def __init__(self, model) -> None:
        import highspy

        from ..backends.highs_glue import stdout_to_stderr

        self.model = model
        n = len(model.groups)
        with stdout_to_stderr(silence=True):
            h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        self.inf = inf = h.getInfinity()
        lp = highspy.HighsLp()
        lp.num_col_ = n
        lp.num_row_ = model.n_rows
        lp.col_cost_ = np.full(n, float(np.max(model.col_cost)) + ARTIFICIAL)
        lp.col_lower_ = np.zeros(n)
        lp.col_upper_ = np.full(n, inf)
        lp.row_lower_ = np.where(np.isfinite(model.row_lower), model.row_lower, -inf)
        lp.row_upper_ = np.where(np.isfinite(model.row_upper), model.row_upper, inf)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.arange(n + 1, dtype=np.int32)
        lp.a_matrix_.index_ = np.arange(n, dtype=np.int32)
        lp.a_matrix_.value_ = np.ones(n)
        if h.passModel(lp) != highspy.HighsStatus.kOk:
            raise SolverError("HiGHS rejected the restricted master")
        self.h = h
        self.n = n
        self.pos = np.full(model.n_cols, -1, dtype=np.int64)
        self.master: list[int] = []
        self.rows: list[tuple[int, np.ndarray]] = []

    def add_columns(self, cols) -> None:
        """Add the model's columns ``cols`` not in the master yet, with their entries in the
        model's rows and in the clique rows that list them."""
        m, pos = self.model, self.pos
        cols = np.asarray(cols, dtype=np.int64)
        cols = np.unique(cols[pos[cols] < 0])
        if not len(cols):
            return
        pos[cols] = self.n + len(self.master) + np.arange(len(cols))
        self.master.extend(cols.tolist())
        a_start = np.asarray(m.a_start, dtype=np.int64)
        lens = a_start[cols + 1] - a_start[cols]
        take = np.repeat(a_start[cols], lens) + (
            np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
        )
        owner = [np.repeat(np.arange(len(cols)), lens)]
        idx = [np.asarray(m.a_index, dtype=np.int64)[take]]
        val = [np.asarray(m.a_value, dtype=np.float64)[take]]
        if self.rows:
            listed = np.concatenate([c for _, c in self.rows])
            rid = np.repeat(np.arange(len(self.rows)), [len(c) for _, c in self.rows])
            fresh = np.zeros(m.n_cols, dtype=bool)
            fresh[cols] = True
            hit = fresh[listed]
            owner.append(np.searchsorted(cols, listed[hit]))
            idx.append(m.n_rows + rid[hit])
            val.append(np.ones(int(hit.sum())))
        own, ix, vl = np.concatenate(owner), np.concatenate(idx), np.concatenate(val)
        order = np.argsort(own, kind="stable")
        self.h.addCols(
            len(cols),
            np.asarray(m.col_cost, dtype=np.float64)[cols],
            np.zeros(len(cols)),
            np.full(len(cols), self.inf),
            len(order),
            np.searchsorted(own[order], np.arange(len(cols))).astype(np.int32),
            ix[order].astype(np.int32),
            vl[order],
        )

    def raise_artificials(self, jobs) -> bool:
        """Multiply the cost of the artificial columns of ``jobs`` by ten; false (and nothing
        changed) once one would exceed :data:`ARTIFICIAL_MAX`."""
        jobs = np.asarray(jobs, dtype=np.int32)
        cost = np.asarray(self.h.getLp().col_cost_)[jobs] * 10.0
        if np.any(cost > ARTIFICIAL_MAX):
            return False
        self.h.changeColsCost(len(jobs), jobs, cost)
        return True

    def add_rows(self, cuts) -> None:
        """Add the clique rows ``cuts`` (``(k, columns)``: ``Σ x ≤ k``) over the columns of
        theirs in the master."""
        if not cuts:
            return
        entries = [self.pos[c][self.pos[c] >= 0] for _, c in cuts]
        lens = np.array([len(e) for e in entries], dtype=np.int64)
        self.h.addRows(
            len(cuts),
            np.full(len(cuts), -self.inf),
            np.array([k for k, _ in cuts], dtype=np.float64),
            int(lens.sum()),
            (np.cumsum(lens) - lens).astype(np.int32),
            np.concatenate(entries).astype(np.int32),
            np.ones(int(lens.sum())),
        )
        self.rows.extend(cuts)

    def drop_rows(self, mask) -> None:
        """Delete the clique rows where ``mask`` (over ``rows``) holds."""
        gone = np.flatnonzero(mask)
        if len(gone):
            self.h.deleteRows(len(gone), (gone + self.model.n_rows).astype(np.int32))
            self.rows = [r for r, d in zip(self.rows, mask) if not d]

    def x(self, col_value) -> np.ndarray:
        """The master's solution over the model's columns (0 outside the master)."""
        x = np.zeros(self.model.n_cols)
        x[np.asarray(self.master, dtype=np.int64)] = np.asarray(col_value)[self.n :]
        return x
