"""The CP-SAT model of SPEC §5 (OR-Tools), written out in ``models/cpsat.md``.

One integer start ``S_i ∈ [lo_i, hi_i]`` per job.  The memory staircase of
job ``i`` (``s_i + u + 1`` in its ``u``-th round) is one fixed-size interval
``[S_i, S_i + o_i)`` of demand ``s_i + 1`` plus ``o_i − 1`` unit-demand
intervals ``[S_i + k, S_i + o_i)`` (``k = 1 … o_i−1``), all under one
cumulative constraint of capacity ``M``.  (SPEC §5 writes it as demand
``s_i`` plus ``o_i`` unit intervals ``k = 0 … o_i−1``; merging the ``k = 0``
one into the base is the same staircase with one interval fewer.)

With a batch cap ``B`` (SPEC §10.1, ``Instance.max_batch``) the jobs' intervals
``[S_i, S_i + o_i)`` with demand 1 go under a second cumulative of capacity ``B``
(``models/cpsat.md``, "Batch cap"); with the time-indexed rows, also their count rows.

Objective ``min Σ_i (S_i + o_i)`` or ``min z`` with ``z ≥ S_i + o_i``.
Redundant constraints (each keeps every optimal schedule): the objective is at
least the cheap lower bound of SPEC §2 and at most the heuristic's value;
identical jobs (same ``s, o, a``) start in index order.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...instance import Instance
from .. import workers
from ..backend import NO_HOOKS, Hooks, Limits, Problem
from ..common import RawResult, SolveStatus, root_lower_bound, status_of

#: Largest number of memory-row terms for which the time-indexed rows are added to CP-SAT.
TIME_INDEXED_TERMS = 400_000

#: the two full CP-SAT workers of ``bound_focus`` with 2 threads
BOUND_SUBSOLVERS = ("default_lp", "lb_tree_search")
#: … and of ``proof_focus``: two tree searches (CP-SAT seeds them apart).  Where the proof is
#: ``default_lp``'s search, not a rising bound, the second one helps it and
#: ``lb_tree_search`` does not (``models/orders.md`` §7: the event model on the n = 12
#: real-length samples, seed 4 in 8.1-10.9 s against 11.0-22.8 s); its bound is worse when
#: the search does not end (n = 16: 2,344 against 2,526 after 30 s)
PROOF_SUBSOLVERS = ("default_lp", "default_lp")

#: CP-SAT statuses → kvopt reading (``finish()`` decides optimal vs feasible from the bound).
CPSAT_STATUS = {
    "OPTIMAL": "optimal",
    "FEASIBLE": "stopped",
    "INFEASIBLE": "infeasible",
    "MODEL_INVALID": "error",
    "UNKNOWN": "unknown",
}


class BuildCancelled(Exception):
    """The model was still being built when the caller asked to stop."""


def cpsat_version() -> str:
    import ortools

    return ortools.__version__


def build_cpsat(
    inst: Instance,
    objective: str,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    ub: int | None = None,
    redundant: bool = True,
    lb: int | None = None,
    time_indexed: bool = False,
    stop: threading.Event | None = None,
):
    """The CP-SAT model and its start variables (see module doc).

    Raises :class:`BuildCancelled` when ``stop`` is set while the model is built
    (a racing solver finished first).
    """
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    n, M = inst.n, inst.memory
    starts, intervals, demands = [], [], []
    for i in range(n):
        s, o = int(inst.prompts[i]), int(inst.responses[i])
        S = m.new_int_var(int(lo[i]), int(hi[i]), f"S{i}")
        starts.append(S)
        intervals.append(m.new_fixed_size_interval_var(S, o, f"base{i}"))
        demands.append(s + 1)
        for k in range(1, o):
            intervals.append(m.new_fixed_size_interval_var(S + k, o - k, f"step{i}_{k}"))
            demands.append(1)
    if n:
        m.add_cumulative(intervals, demands, M)
    add_batch_cap(m, inst, starts)
    if redundant:
        # the tail of a job in which it holds more than M/2 memory (s + u + 1 > M/2): no two
        # such tails overlap (the k = 1 rounded row of the time-indexed model, models/cpsat.md)
        tails = []
        for i in range(n):
            s_, o = int(inst.prompts[i]), int(inst.responses[i])
            u0 = max(0, M // 2 - s_)  # first u with 2 (s + u + 1) > M
            if u0 < o:
                tails.append(m.new_fixed_size_interval_var(starts[i] + u0, o - u0, f"tail{i}"))
        if len(tails) > 1:
            m.add_no_overlap(tails)
    if time_indexed and n:
        # the time-indexed rows as redundant linear constraints (gives CP-SAT the IP's LP)
        rows: dict[int, list] = {}
        heavy: dict[int, list] = {}
        for i in range(n):
            if stop is not None and stop.is_set():
                raise BuildCancelled
            s_, o = int(inst.prompts[i]), int(inst.responses[i])
            xs = []
            for t in range(int(lo[i]), int(hi[i]) + 1):
                x = m.new_bool_var(f"x{i}_{t}")
                xs.append((t, x))
                for u in range(o):
                    rows.setdefault(t + u, []).append((s_ + u + 1, x))
                    if 2 * (s_ + u + 1) > M:
                        heavy.setdefault(t + u, []).append(x)
            m.add_exactly_one([x for _, x in xs])
            m.add(starts[i] == sum(t * x for t, x in xs))
        for terms in rows.values():
            if sum(c for c, _ in terms) > M:
                m.add(sum(c * x for c, x in terms) <= M)
            if inst.max_batch is not None and len(terms) > inst.max_batch:
                m.add(sum(x for _, x in terms) <= int(inst.max_batch))
        for xs_ in heavy.values():
            if len(xs_) > 1:
                m.add_at_most_one(xs_)
    lb = max(root_lower_bound(inst, objective), lb or 0)
    if objective == "total":
        expr = sum(starts) + int(inst.responses.sum())
        if redundant:
            m.add(expr >= lb)
            if ub is not None:
                m.add(expr <= ub)
        m.minimize(expr)
    else:
        hmax = int(max((int(hi[i] + inst.responses[i]) for i in range(n)), default=0))
        z = m.new_int_var(lb if redundant else 0, max(hmax, lb), "z")
        for i in range(n):
            m.add(z >= starts[i] + int(inst.responses[i]))
        if redundant and ub is not None:
            m.add(z <= ub)
        m.minimize(z)
    if redundant:
        seen: dict[tuple[int, int, int], int] = {}
        for i in range(n):
            key = (int(inst.prompts[i]), int(inst.responses[i]), int(inst.arrivals[i]))
            if key in seen:
                m.add(starts[seen[key]] <= starts[i])
            seen[key] = i
    return m, starts


def add_batch_cap(m, inst: Instance, starts) -> None:
    """The batch cap of SPEC §10.1 (``Instance.max_batch``; nothing without one): the jobs'
    intervals ``[S_i, S_i + o_i)``, demand 1 each, under a cumulative of capacity ``B`` — at
    most ``B`` jobs run in any round (``models/cpsat.md``, "Batch cap").  Shared by the
    time-indexed CP-SAT model and the event model."""
    cap = inst.max_batch
    if cap is None or inst.n <= cap:  # n ≤ B: the cap cannot bind
        return
    jobs = [
        m.new_fixed_size_interval_var(S, int(o), f"batch{i}")
        for i, (S, o) in enumerate(zip(starts, inst.responses))
    ]
    m.add_cumulative(jobs, [1] * len(jobs), int(cap))


def cpsat_status(status: int, starts) -> SolveStatus:
    """kvopt's status of a CP-SAT result, from CP-SAT's own (``cp_model.OPTIMAL``: proven
    within the gap asked for; ``INFEASIBLE``; ``FEASIBLE`` / ``UNKNOWN``: stopped, with or
    without a schedule).  ``MODEL_INVALID`` never gets here (it raises)."""
    from ortools.sat.python import cp_model

    return status_of(
        starts, proven=status == cp_model.OPTIMAL, infeasible=status == cp_model.INFEASIBLE
    )


@dataclass(frozen=True)
class CpSat:
    """OR-Tools CP-SAT on the model of :func:`build_cpsat` (``models/cpsat.md``).

    Reads the whole problem (windows, warm start as hints, ``ub`` as a
    redundant row), every limit (``bound_focus``: with 2 threads, two full
    workers that move the bound, ``BOUND_SUBSOLVERS``; ``proof_focus``: two tree
    searches, ``PROOF_SUBSOLVERS``) and the ``stop`` and
    ``monitor`` hooks.  Model options: ``redundant`` rows, ``lb`` (a known
    lower bound), ``time_indexed`` (the time-indexed rows; by default unless
    the model would have more than ``TIME_INDEXED_TERMS`` terms); ``grace`` is
    how long a solver that overruns its limit is waited for.  The search runs
    in a worker thread; Ctrl-C stops it.
    """

    name: ClassVar[str] = "cpsat"
    #: models the batch cap (:func:`add_batch_cap`)
    batch_cap: ClassVar[bool] = True

    redundant: bool = True
    lb: int | None = None
    time_indexed: bool | None = None
    grace: float = 0.35

    def build(self, problem: Problem, stop: threading.Event | None):
        """The model, its start variables and the statistics that describe it (a subclass
        with another model overrides this and ``name``; the search is the same)."""
        inst, lo, hi = problem.instance, problem.lo, problem.hi
        time_indexed = self.time_indexed
        if time_indexed is None:  # the redundant time-indexed rows, unless the model gets huge
            width = np.maximum(np.asarray(hi) - np.asarray(lo) + 1, 0)
            terms = int((width * inst.responses).sum())
            time_indexed = self.redundant and terms <= TIME_INDEXED_TERMS
        m, starts = build_cpsat(
            inst,
            problem.objective,
            lo,
            hi,
            ub=problem.ub,
            redundant=self.redundant,
            lb=self.lb,
            time_indexed=time_indexed,
            stop=stop,
        )
        stats = {
            "intervals": int(sum(int(o) for o in inst.responses)),
            "time_indexed": bool(time_indexed),
        }
        return m, starts, stats

    def solve(self, problem: Problem, limits: Limits, hooks: Hooks = NO_HOOKS) -> RawResult:
        from ortools.sat.python import cp_model

        t0 = time.monotonic()
        try:
            m, starts, model_stats = self.build(problem, hooks.stop)
        except BuildCancelled:
            return RawResult(
                None,
                None,
                "CANCELLED (before solving)",
                self.name,
                cpsat_version(),
                SolveStatus.UNKNOWN,
            )
        if problem.warm is not None:
            for S, v in zip(starts, problem.warm):
                m.add_hint(S, int(v))
        solver = cp_model.CpSolver()
        p = solver.parameters
        p.max_time_in_seconds = max(limits.time_limit - (time.monotonic() - t0), 0.01)
        p.num_workers = int(limits.threads)
        # two full workers of our choice (models/cpsat.md, "Parameters"): with 2 workers
        # CP-SAT's default runs one full search and LNS helpers
        full = BOUND_SUBSOLVERS if limits.bound_focus else PROOF_SUBSOLVERS
        if (limits.bound_focus or limits.proof_focus) and limits.threads == 2:
            p.num_full_subsolvers = 2
            p.subsolvers.extend(full)
        p.random_seed = int(limits.seed)
        p.log_search_progress = False
        p.catch_sigint_signal = False  # Ctrl-C is handled in the main thread (stop_search)
        p.relative_gap_limit = float(limits.gap)
        p.absolute_gap_limit = 0.0 if limits.gap == 0 else 1e-9
        stop, monitor, grace = hooks.stop, hooks.monitor, self.grace
        box: dict = {}
        callback = None
        if monitor is not None:

            class Report(cp_model.CpSolverSolutionCallback):
                def on_solution_callback(self):
                    monitor(self.objective_value, self.best_objective_bound)

            callback = Report()
            solver.best_bound_callback = lambda bound: monitor(None, bound)

        def work():
            box["status"] = solver.solve(m, callback)

        deadline = time.monotonic() + p.max_time_in_seconds + grace
        th, held = workers.start_deferred(work, name="kvopt-cpsat", stop=solver.stop_search)
        cancelled = interrupted = False
        abandon_at = None
        while True:
            try:
                held.release()  # a Ctrl-C that came while the thread started lands here
                if th.finished():
                    break
                th.wait(0.05)
                now = time.monotonic()
                if not cancelled and (now > deadline or (stop is not None and stop.is_set())):
                    solver.stop_search()
                    cancelled = True
                    abandon_at = now + 2 * grace
                if abandon_at is not None and now > abandon_at and not th.finished():
                    return RawResult(
                        None,
                        None,
                        "ABANDONED (did not stop when asked)",
                        self.name,
                        cpsat_version(),
                        SolveStatus.UNKNOWN,
                        interrupted=interrupted,
                    )
            except KeyboardInterrupt:
                solver.stop_search()
                cancelled = interrupted = True
                abandon_at = time.monotonic() + 2 * grace
        status = box.get("status", cp_model.UNKNOWN)
        native = solver.status_name(status)
        found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        st = np.array([solver.value(S) for S in starts], dtype=np.int64) if found else None
        bound = float(solver.best_objective_bound) if found or status == cp_model.UNKNOWN else None
        if status == cp_model.MODEL_INVALID:
            from ...errors import SolverError

            raise SolverError(f"CP-SAT rejected the model: {m.validate()}")
        return RawResult(
            starts=st,
            bound=bound if bound is not None and np.isfinite(bound) else None,
            native_status=native + (" (cancelled)" if cancelled and native != "OPTIMAL" else ""),
            solver=self.name,
            solver_version=cpsat_version(),
            status=cpsat_status(status, st),
            interrupted=interrupted,
            stats={
                "branches": int(solver.num_branches),
                "conflicts": int(solver.num_conflicts),
                **model_stats,
            },
        )
