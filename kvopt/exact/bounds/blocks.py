"""Time-block column generation: a lower bound on Opt (total completion) that sees ``L`` rounds at once.

Issue 17; the formulation and the proof that every kill-free schedule in the
windows is an integral point of it are in ``models/time-indexed.md`` §9.6.
After van den Akker, Hurkens and Savelsbergh (INFORMS JoC 12(2), 2000,
"Time-indexed formulations for machine scheduling problems: column
generation") and Bigras, Gamache and Savard (INFORMS JoC 20(1), 2008,
"Time-indexed formulations and the total weighted tardiness problem"), who cut
the horizon into periods and take a period's integral partial schedule as a
column.

The horizon ``[0, T)`` (``T = max_g (hi_g + o_g)`` over the start windows
``[lo, hi]`` of an upper bound) is cut into blocks ``[bL, (b+1)L)``.  Jobs are
grouped as in ``models/time-indexed.md`` §4.3 (identical jobs, ``|g|`` copies).
An *option* of block ``b`` is "a copy of ``g`` starts at ``t``" (``t`` in the
block and in ``g``'s window) or "a copy of ``g`` started at ``t < bL`` is still
running at ``bL``" (``t`` in the window, ``t + o_g > bL``).  A *column* of block
``b`` is an integer vector ``z`` over the block's options with at most ``|g|``
copies of each group and memory ``≤ M`` in every round of the block (each
option holds its staircase ``s_g + τ − t + 1`` in the rounds ``τ`` of the block
it occupies).  Master LP over ``λ_{b,p} ≥ 0``:

* convexity ``Σ_p λ_{b,p} = 1`` per block;
* assignment ``Σ_{b,p} (starts of g in p) λ_{b,p} = |g|`` per group;
* linking, per group ``g``, start ``t`` and later block ``b'`` with ``b'L`` in
  ``(t, t + o_g)``: ``Σ_{p ∈ b'} (copies of g running from t in p) λ_{b',p} −
  Σ_{p ∈ block(t)} (copies of g starting at t in p) λ_{block(t),p} = 0``;
* objective ``Σ (t + o_g)`` over the starts of each column.

Pricing is a small integer program per block (CP-SAT, one worker): minimise the
reduced cost ``Σ_k (c_k − a_kᵀ y) z_k`` over the columns (the convexity dual
is a constant).  For any duals ``y = (π, ρ)`` of the assignment and linking
rows, ``L(y) = Σ_g |g| π_g + Σ_b min_z (c − A_bᵀ y)·z`` is a lower bound on
every schedule (Lagrangian relaxation of those rows; the convexity duals
cancel), so the bound reported is the best ``L(y)`` met, computed with CP-SAT's
proven bound of each pricing problem with coefficients rounded *down* to a
``1/SCALE`` grid (hence rigorous however far the search got; a call stopped
before any solution counts with the trivial bound ``Σ_k min(0, r_k)·ub_k``).
The first dual point comes from the time-indexed LP (:func:`_ti_duals`, so
``L ≥`` that LP after one exact round); then the master's duals are kept in a
box ``centre ± δ`` around the best point so far by slack columns (du Merle,
Villeneuve, Desrosiers, Hansen, Discrete Math. 194, 1999).  When no column
prices out at the master's duals, every pricing is proven and no slack is
used, ``L`` equals the master LP
value: the column generation has converged.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ...errors import SolverError
from ...instance import Instance
from ..backends.highs_glue import lp_solved, run_highs
from ..backends.highs_matrix import job_groups
from ..common import start_windows, value_of

#: reduced costs are rounded down to multiples of 1/SCALE for CP-SAT (integer objective)
SCALE = 10_000
#: half-width of the first dual box (du Merle, Villeneuve, Desrosiers, Hansen 1999)
DELTA = 0.3
#: a pricing call's limit in a round is at most PACE times the time left shared among the
#: blocks left (most calls prove well within it; the others get more time at the round's end)
PACE = 4.0
#: at most this many columns per block and pricing round (CP-SAT's improving solutions)
COLUMNS_PER_BLOCK = 5


@dataclass
class Block:
    """Block ``b`` (rounds ``first … last − 1``): its options and their master coefficients."""

    b: int
    first: int
    last: int
    group: np.ndarray  # group of each option
    start: np.ndarray  # start round of each option
    running: np.ndarray  # True: started before the block, still running at its first round
    cost: np.ndarray  # t + o_g for a start option, 0 for a running one
    rows: list[np.ndarray]  # master rows (assignment, linking) of each option
    vals: list[np.ndarray]  # their coefficients
    mem: np.ndarray  # (options × rounds of the block) memory held
    seen: set = field(default_factory=set)


@dataclass
class Master:
    """Row layout of the master LP: blocks, then groups, then linking rows."""

    n_blocks: int
    sizes: np.ndarray  # |g|
    link: dict  # (g, t, b') -> row index

    @property
    def n_rows(self) -> int:
        return self.n_blocks + len(self.sizes) + len(self.link)


def build_blocks(
    inst: Instance, lo: np.ndarray, hi: np.ndarray, block_len: int, *, linking: bool = True
) -> tuple[Master, list[Block], tuple[tuple[int, ...], ...]]:
    """The master's rows and every block's options over the windows ``[lo, hi]``.

    ``linking=False`` leaves the linking rows out (and with them the running
    options): the relaxation is then *not* valid for the objective's link
    between blocks and exists only for the test that shows the rows matter.
    """
    if block_len < 1:
        raise ValueError(f"block_len must be >= 1, got {block_len}")
    groups = job_groups(inst)
    rep = np.array([g[0] for g in groups], dtype=np.int64)
    s = inst.prompts[rep].astype(np.int64)
    o = inst.responses[rep].astype(np.int64)
    glo = np.array([int(lo[list(g)].max()) for g in groups], dtype=np.int64)
    ghi = np.array([int(hi[list(g)].min()) for g in groups], dtype=np.int64)
    if np.any(ghi < glo):
        raise SolverError("empty start window (the upper bound used for the horizon is invalid)")
    L = int(block_len)
    T = int((ghi + o).max())
    B = -(-T // L)
    G = len(groups)
    link: dict = {}
    if linking:
        for g in range(G):
            for t in range(int(glo[g]), int(ghi[g]) + 1):
                for b2 in range(t // L + 1, (t + int(o[g]) - 1) // L + 1):
                    link[(g, t, b2)] = B + G + len(link)
    master = Master(B, np.array([len(g) for g in groups], dtype=np.int64), link)
    blocks = []
    for b in range(B):
        first, last = b * L, min((b + 1) * L, T)
        og, ot, orun, oc, rows, vals = [], [], [], [], [], []
        for g in range(G):
            for t in range(max(first, int(glo[g])), min(last - 1, int(ghi[g])) + 1):
                last_b = (t + int(o[g]) - 1) // L if linking else b
                later = [link[(g, t, b2)] for b2 in range(b + 1, last_b + 1)]
                og.append(g), ot.append(t), orun.append(False), oc.append(t + int(o[g]))
                rows.append(np.array([B + g, *later], dtype=np.int64))
                vals.append(np.array([1.0] + [-1.0] * len(later)))
            if not linking:
                continue
            for t in range(
                max(int(glo[g]), first - int(o[g]) + 1), min(first - 1, int(ghi[g])) + 1
            ):
                og.append(g), ot.append(t), orun.append(True), oc.append(0)
                rows.append(np.array([link[(g, t, b)]], dtype=np.int64))
                vals.append(np.array([1.0]))
        og = np.array(og, dtype=np.int64)
        ot = np.array(ot, dtype=np.int64)
        tau = np.arange(first, last)
        age = tau[None, :] - ot[:, None]  # rounds since the start
        on = (age >= 0) & (age < o[og][:, None])
        mem = np.where(on, s[og][:, None] + age + 1, 0)
        blocks.append(
            Block(
                b, first, last, og, ot, np.array(orun, bool), np.array(oc, float), rows, vals, mem
            )
        )
    return master, blocks, groups


def start_counts(starts: np.ndarray, groups) -> Counter:
    """How many jobs of each group start at each round: ``{(g, t): count}``."""
    counts: Counter = Counter()
    for g, jobs in enumerate(groups):
        counts.update((g, t) for t in np.asarray(starts)[list(jobs)].tolist())
    return counts


def column_of(
    block: Block, starts: np.ndarray, groups, counts: Counter | None = None
) -> np.ndarray:
    """The column of ``block`` that a kill-free schedule (per-job ``starts``) induces: each of
    the block's options (group, start, running) counts the group's jobs with that start.

    ``counts`` (:func:`start_counts` of the same starts) saves the pass over the jobs when
    every block takes the same schedule: a pass per block was ``O(blocks × n)``, minutes on a
    typed instance with thousands of copies."""
    if counts is None:
        counts = start_counts(starts, groups)
    return np.array(
        [counts.get((int(g), int(t)), 0) for g, t in zip(block.group, block.start)],
        dtype=np.int64,
    )


def block_length(inst: Instance, share: float) -> int:
    """``share`` of the largest response, rounded up, at least 1 (typed instances use half of
    it: ``models/time-indexed.md`` §9.8)."""
    return max(1, math.ceil(share * int(inst.responses.max())))


class _Pricer:
    """Per-block pricing by CP-SAT: min ``Σ r_k z_k`` over the block's columns."""

    def __init__(
        self, block: Block, sizes: np.ndarray, memory: int, stop: threading.Event | None = None
    ):
        self.block = block
        self.sizes = sizes
        self.memory = memory
        self.stop = stop  # set: a running call is stopped within about 50 ms

    def price(self, r: np.ndarray, seconds: float):
        """``(lower bound on min r·z, list of columns z with r·z < 0, proven)``."""
        from ortools.sat.python import cp_model

        blk = self.block
        neg = np.flatnonzero(r < -1e-9)  # options with r ≥ 0 are 0 in some optimal column
        if len(neg) == 0:
            return 0.0, [], True
        coef = np.floor(r[neg] * SCALE).astype(np.int64)
        m = cp_model.CpModel()
        ub = self.sizes[blk.group[neg]]
        z = [
            m.new_bool_var(f"z{k}") if u == 1 else m.new_int_var(0, int(u), f"z{k}")
            for k, u in zip(neg, ub)
        ]
        for g in np.unique(blk.group[neg]):
            idx = np.flatnonzero(blk.group[neg] == g)
            m.add(sum(z[i] for i in idx) <= int(self.sizes[g]))
        mem = blk.mem[neg]
        for c in range(mem.shape[1]):
            idx = np.flatnonzero(mem[:, c])
            if mem[idx, c] @ ub[idx] > self.memory:
                m.add(sum(int(mem[i, c]) * z[i] for i in idx) <= self.memory)
        m.minimize(sum(int(c) * v for c, v in zip(coef, z)))
        found: list[np.ndarray] = []

        class Collect(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self):
                col = np.zeros(len(blk.group), dtype=np.int64)
                col[neg] = [self.value(v) for v in z]
                found.append(col)

        solver = cp_model.CpSolver()
        p = solver.parameters
        p.num_workers = 1
        p.max_time_in_seconds = max(seconds, 0.01)
        p.catch_sigint_signal = False
        status = self._solve(solver, m, Collect())
        if status in (cp_model.MODEL_INVALID, cp_model.INFEASIBLE):  # the zero column is feasible
            raise SolverError(f"block pricing failed (CP-SAT: {solver.status_name(status)})")
        # Σ_k min(0, r_k)·ub_k bounds every column; without a solution (stopped in presolve)
        # CP-SAT's own bound is not one (it reports 0)
        trivial = float(np.floor(r[neg] * SCALE) @ ub) / SCALE
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return trivial, [], False
        bound = max(float(solver.best_objective_bound) / SCALE, trivial)
        cols = [c for c in found[::-1] if float(r @ c) < -1e-9][:COLUMNS_PER_BLOCK]
        return min(bound, 0.0), cols, status == cp_model.OPTIMAL

    def _solve(self, solver, model, callback):
        """CP-SAT's solve, stopped once ``self.stop`` is set: a watcher asks every 50 ms
        while the call runs (a request that came before the search started is repeated)."""
        if self.stop is None:
            return solver.solve(model, callback)
        finished = threading.Event()

        def watch() -> None:
            while not finished.wait(0.05):
                if self.stop.is_set():
                    solver.stop_search()

        threading.Thread(target=watch, daemon=True).start()
        try:
            return solver.solve(model, callback)
        finally:
            finished.set()


def block_bound(
    inst: Instance,
    ub: int | None = None,
    block_len: int | None = None,
    time_limit: float = 60.0,
    *,
    starts: np.ndarray | None = None,
    linking: bool = True,
    delta0: float = DELTA,
    price_seconds: float | None = None,
    windows: tuple[np.ndarray, np.ndarray] | None = None,
    stop: threading.Event | None = None,
    on_bound=None,
) -> tuple[float, dict]:
    """Lower bound on Opt (total completion) by time-block column generation (see the module doc).

    ``ub`` is the value of a known schedule (the windows of
    ``models/time-indexed.md`` §2 are taken from it, so the bound is ``≤ Opt``
    whenever ``ub ≥ Opt``); ``starts`` a schedule for the first columns (default:
    the heuristic's, which also gives ``ub`` when it is ``None``); ``block_len``
    defaults to the largest response.  Returns the best Lagrangian bound met
    (``-inf`` if no pricing round finished) and statistics: ``lp`` (the last
    restricted master's value), ``converged``, ``iterations``, ``columns``,
    ``blocks``, ``seconds``.  ``linking=False`` drops the linking rows (an
    invalid relaxation, for tests only).

    ``windows`` replaces the windows of ``ub`` by tighter ones that still hold
    every optimal schedule (those of :func:`kvopt.exact.solve`: LP windows and
    reduced-cost fixing), so the value is still ``≤ Opt``.  ``stop`` (an event)
    ends the column generation within about 0.1 s (a running pricing call is
    stopped; the round it was in does not count); ``on_bound(value)`` is called
    with every improved bound.  A pricing round ends in the time left: a
    call's limit is ``price_seconds`` or ``PACE`` times the time left shared
    among the blocks still to price, whichever is less, and once every block is
    priced the calls stopped at their limit run again with the time left
    (CP-SAT's bound of a call stopped early is still a bound;
    ``models/time-indexed.md`` §9.8).
    """
    from ..heuristic import heuristic_starts

    t0 = time.monotonic()
    deadline = t0 + time_limit
    if inst.n == 0:
        return 0.0, {"converged": True}
    if starts is None:
        starts = heuristic_starts(inst, "total", seconds=min(0.5, 0.05 * time_limit))
    if ub is None:
        ub = value_of(inst, starts, "total")
    L = int(block_len or inst.responses.max())
    lo, hi = start_windows(inst, "total", ub) if windows is None else windows
    master, blocks, groups = build_blocks(inst, lo, hi, L, linking=linking)
    pricers = [_Pricer(b, master.sizes, inst.memory, stop) for b in blocks]

    def stopped() -> bool:
        return time.monotonic() >= deadline or (stop is not None and stop.is_set())

    if price_seconds is None:  # a pricing round over all blocks takes at most half the time
        price_seconds = min(5.0, max(1.0, (deadline - t0) / (2 * len(blocks))))
    h = _master_lp(master)
    owner: list[tuple[int, np.ndarray]] = []  # (block, z) of each master column

    def add(b: int, z: np.ndarray) -> bool:
        blk = blocks[b]
        key = tuple(np.flatnonzero(z).tolist()), tuple(z[z > 0].tolist())
        if key in blk.seen:
            return False
        blk.seen.add(key)
        nz = np.flatnonzero(z)
        acc: dict[int, float] = {b: 1.0}
        for k in nz:
            for row, v in zip(blk.rows[k], blk.vals[k]):
                acc[int(row)] = acc.get(int(row), 0.0) + v * float(z[k])
        idx = np.array([i for i, v in acc.items() if v != 0], dtype=np.int32)
        val = np.array([acc[int(i)] for i in idx], dtype=np.float64)
        h.addCol(float(blk.cost @ z), 0.0, h.getInfinity(), len(idx), idx, val)
        owner.append((b, z))
        return True

    inside = bool(np.all((starts >= lo) & (starts <= hi)))
    counts = start_counts(starts, groups) if inside else None
    for blk in blocks:
        add(blk.b, np.zeros(len(blk.group), dtype=np.int64))
        if inside:
            add(blk.b, column_of(blk, starts, groups, counts))
    if not inside:  # artificial starts keep the first master feasible (never in a bound)
        big = float(ub + 1)
        for g in range(len(master.sizes)):
            h.addCol(big, 0.0, h.getInfinity(), 1, np.array([master.n_blocks + g], np.int32),
                     np.array([1.0]))  # fmt: skip
            owner.append((-1, np.zeros(0)))

    trace: list = []
    G = len(master.sizes)
    y0 = _ti_duals(inst, lo, hi, master, blocks, max(deadline - time.monotonic(), 0.05))
    center = y0 if y0 is not None else np.zeros(master.n_rows)
    # du Merle et al.'s box: slack columns ±e_i (rows other than convexity) priced so that
    # the master's duals stay within ``center ± delta``; a bound needs no convergence
    nb, nr = master.n_blocks, master.n_rows
    rows = np.arange(nb, nr, dtype=np.int32)
    box0 = h.getNumCol()
    for sign in (1.0, -1.0):
        h.addCols(
            len(rows), np.zeros(len(rows)), np.zeros(len(rows)), np.full(len(rows), h.getInfinity()),
            len(rows), np.arange(len(rows), dtype=np.int32), rows, np.full(len(rows), sign),
        )  # fmt: skip
    delta = delta0 if y0 is not None else 1e6

    def set_box():
        cost = np.concatenate([center[nb:] + delta, -(center[nb:] - delta)])
        h.changeColsCost(len(cost), np.arange(box0, box0 + len(cost), dtype=np.int32), cost)

    set_box()
    best = -math.inf
    it, lp_value, converged = 0, math.nan, False
    while not stopped():
        it += 1
        if it == 1 and y0 is not None:
            y, lp_value = y0, math.nan  # price the LP's duals first: L(y0) >= the LP
        else:
            native, _, interrupted = run_highs(
                h, time_limit=max(deadline - time.monotonic(), 0.05), threads=1, seed=0, gap=0.0
            )
            if interrupted:
                raise KeyboardInterrupt
            if not lp_solved(native):
                break
            lp_value = float(h.getInfo().objective_function_value)
            y = np.asarray(h.getSolution().row_dual, dtype=np.float64)
        total = float(master.sizes @ y[nb : nb + G])
        found, exact = 0, True
        unproven: list[tuple[int, np.ndarray, float]] = []
        for i, (blk, pr) in enumerate(zip(blocks, pricers)):
            left = deadline - time.monotonic()
            if left <= 0 or stopped():
                exact = False
                total = -math.inf
                break
            r = _reduced(blk, y)
            # the round must end in time: most calls end well before their limit, so a call
            # may take PACE times its share of the time left, keeping 20 ms for each other
            rest = len(blocks) - i
            share = min(PACE * left / rest, left - 0.02 * (rest - 1))
            lb, cols, proven = pr.price(r, max(0.02, min(price_seconds, share)))
            if stop is not None and stop.is_set():
                total = -math.inf  # the call may have been stopped: the round does not count
                break
            exact &= proven
            total += lb
            if not proven:
                unproven.append((i, r, lb))
            for z in cols:
                found += float(r @ z) - y[blk.b] < -1e-7 or it == 1
                add(blk.b, z)
        # every block priced: the calls stopped at their share get the time left, one by one
        # (the same y, so each block's better bound adds to L(y) on its own)
        for j, (i, r, lb) in enumerate(unproven if math.isfinite(total) else ()):
            left = deadline - time.monotonic()
            if left <= 0.02 or stopped():
                break
            lb2, cols, _ = pricers[i].price(r, min(price_seconds, left / (len(unproven) - j)))
            total += max(lb2, lb) - lb
            for z in cols:
                add(blocks[i].b, z)
        if total > best:
            best, center = total, y.copy()
            set_box()
            if on_bound is not None:
                on_bound(best)
        trace.append((round(time.monotonic() - t0, 2), round(lp_value, 3), round(total, 3), delta))
        if found == 0 and it > 1:
            xs = np.asarray(h.getSolution().col_value)[box0:]
            if xs.max(initial=0.0) > 1e-7 and delta < 1e5:
                delta *= 10.0  # no column at the box's duals but the box binds: widen it
                set_box()
                continue
            converged = exact
            break
    return best, {
        "trace": trace,
        "lp": lp_value,
        "converged": converged,
        "iterations": it,
        "columns": len(owner),
        "blocks": len(blocks),
        "block_len": L,
        "seconds": time.monotonic() - t0,
    }


def _reduced(blk: Block, y: np.ndarray) -> np.ndarray:
    """Reduced costs ``c_k − a_kᵀ y`` of the block's options (the convexity dual left out)."""
    return blk.cost - np.array([float(y[r] @ v) for r, v in zip(blk.rows, blk.vals)])


def _master_lp(master: Master):
    """An empty HiGHS LP with the master's rows (columns are added as they are generated)."""
    import highspy

    from ..common import stdout_to_stderr

    with stdout_to_stderr(silence=True):
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    rhs = np.concatenate(
        [np.ones(master.n_blocks), master.sizes.astype(float), np.zeros(len(master.link))]
    )
    n = len(rhs)
    h.addRows(n, rhs, rhs, 0, np.zeros(n + 1, np.int32), np.zeros(0, np.int32), np.zeros(0))
    return h


def _ti_duals(inst, lo, hi, master: Master, blocks: list[Block], seconds: float):
    """A first dual point from the time-indexed LP (``k = 1`` rows): ``L`` of it is ``≥`` that LP.

    ``π_g`` is the LP's assignment dual and ``ρ_{g,t,b'}`` the LP's penalty
    ``Σ_{τ ∈ b'} (w_τ·mem + w¹_τ·rnd)`` of the staircase of ``(g, t)`` inside block ``b'``
    (``w ≥ 0`` the memory-row and ``w¹`` the rounded-row multipliers): then a
    block column's reduced cost is the sum of its starts' LP reduced costs (``≥ 0``) minus
    the penalty of its memory in the block (``≤ Σ_τ (w_τ M + w¹_τ)``), so ``L(y) ≥`` the LP value.
    ``None`` if the LP is not solved in time.
    """
    from ..backends.highs_matrix import build_matrix
    from .relax import solve_lp

    try:
        lp = solve_lp(build_matrix(inst, "total", lo, hi, cuts=(1,)), seconds)
    except SolverError:
        return None
    G, H, M = len(master.sizes), lp.model.horizon, inst.memory
    d = np.minimum(lp.row_dual, 0.0)
    w, w1 = -d[G : G + H], -d[G + H : G + 2 * H]
    y = np.zeros(master.n_rows)
    y[master.n_blocks : master.n_blocks + G] = lp.row_dual[:G]
    for blk in blocks:
        rnd = np.where(blk.mem > 0, -(-2 * blk.mem // M) - 1, 0)
        pen = blk.mem @ w[blk.first : blk.last] + rnd @ w1[blk.first : blk.last]
        for k in np.flatnonzero(blk.running):
            y[master.link[(int(blk.group[k]), int(blk.start[k]), blk.b)]] = pen[k]
    return y
