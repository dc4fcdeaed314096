"""The time-indexed IP of SPEC §5 in Pyomo, solved with HiGHS — the readable reference.

It states ``models/time-indexed.md`` line by line and builds the same model as
:func:`kvopt.exact.backends.highs_matrix.build_matrix` (same groups of identical jobs,
same windows, same rounded rows); ``tests/test_exact_models.py`` checks that
both reach the same optimum.  Pyomo's model construction is slow for large
horizons, which is why the numpy → highspy path is the default.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...errors import SolverError
from ...instance import Instance
from ..backend import NO_HOOKS, Hooks, Limits, Problem
from ..common import RawResult, SolveStatus, status_of, stdout_to_stderr
from .highs_matrix import DEFAULT_CUTS, job_groups

#: Pyomo termination conditions → kvopt's status (read with the schedule: ``FEASIBLE`` here
#: means "stopped"; ``finish()`` decides optimal vs feasible for the user).
PYOMO_STATUS = {
    "convergenceCriteriaSatisfied": SolveStatus.OPTIMAL,
    "maxTimeLimit": SolveStatus.FEASIBLE,
    "interrupted": SolveStatus.FEASIBLE,
    "iterationLimit": SolveStatus.FEASIBLE,
    "objectiveLimit": SolveStatus.FEASIBLE,
    "provenInfeasible": SolveStatus.INFEASIBLE,
    "infeasibleOrUnbounded": SolveStatus.INFEASIBLE,
    "error": SolveStatus.FEASIBLE,
    "unknown": SolveStatus.FEASIBLE,
}


def build_pyomo(
    inst: Instance,
    objective: str,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    aggregate: bool = True,
    cuts: tuple[int, ...] = DEFAULT_CUTS,
):
    """The Pyomo ``ConcreteModel`` (see ``models/time-indexed.md``; with the instance's batch
    cap, the count rows of §13)."""
    import pyomo.environ as pyo

    M = inst.memory
    groups = job_groups(inst, aggregate and objective == "total")
    m = pyo.ConcreteModel(name=inst.name or "kvopt")
    m.G = pyo.RangeSet(0, len(groups) - 1)
    rep = {g: jobs[0] for g, jobs in enumerate(groups)}
    size = {g: len(jobs) for g, jobs in enumerate(groups)}
    s = {g: int(inst.prompts[rep[g]]) for g in m.G}
    o = {g: int(inst.responses[rep[g]]) for g in m.G}
    # start window of a group: the intersection of its jobs' windows
    first = {g: int(max(lo[j] for j in groups[g])) for g in m.G}
    last = {g: int(min(hi[j] for j in groups[g])) for g in m.G}
    m.X = pyo.Set(dimen=2, initialize=[(g, t) for g in m.G for t in range(first[g], last[g] + 1)])
    m.x = pyo.Var(m.X, domain=pyo.NonNegativeIntegers, bounds=lambda _m, g, t: (0, size[g]))
    # every job starts exactly once
    m.assign = pyo.Constraint(
        m.G, rule=lambda _m, g: sum(_m.x[g, t] for t in range(first[g], last[g] + 1)) == size[g]
    )
    H = max(last[g] + o[g] for g in m.G)
    m.T = pyo.RangeSet(0, H - 1)

    def running(g, tau):  # starts t with t ≤ τ ≤ t + o_g − 1, inside the window
        return range(max(first[g], tau - o[g] + 1), min(last[g], tau) + 1)

    # memory: a job in its u-th round (u = τ − t) holds s + u + 1
    def mem_rule(_m, tau):
        terms = [(s[g] + tau - t + 1) * _m.x[g, t] for g in _m.G for t in running(g, tau)]
        return sum(terms) <= M if terms else pyo.Constraint.Skip

    m.memory = pyo.Constraint(m.T, rule=mem_rule)
    # batch cap (SPEC §10.1): at most B jobs run in any round (models/time-indexed.md §13)
    if inst.max_batch is not None:
        B = int(inst.max_batch)

        def batch_rule(_m, tau):
            terms = [(g, t) for g in _m.G for t in running(g, tau)]
            if sum(size[g] for g, _ in terms) <= B:  # the row cannot bind
                return pyo.Constraint.Skip
            return sum(_m.x[g, t] for g, t in terms) <= B

        m.batch = pyo.Constraint(m.T, rule=batch_rule)
    # rounded rows: Σ (⌈(k+1) w / M⌉ − 1) x ≤ k (models/time-indexed.md §4.2)
    m.K = pyo.Set(initialize=list(cuts))

    def cut_rule(_m, k, tau):
        terms = []
        for g in _m.G:
            for t in running(g, tau):
                c = -(-(k + 1) * (s[g] + tau - t + 1) // M) - 1
                if c:
                    terms.append(c * _m.x[g, t])
        return sum(terms) <= k if terms else pyo.Constraint.Skip

    m.rounded = pyo.Constraint(m.K, m.T, rule=cut_rule)
    if objective == "total":
        m.obj = pyo.Objective(expr=sum((t + o[g]) * m.x[g, t] for g, t in m.X))
    else:
        m.z = pyo.Var(domain=pyo.NonNegativeReals)
        m.span = pyo.Constraint(
            m.G,
            rule=lambda _m, g: (
                _m.z >= sum((t + o[g]) * _m.x[g, t] for t in range(first[g], last[g] + 1))
            ),
        )
        m.obj = pyo.Objective(expr=m.z)
    m._kvopt_groups = groups
    return m


@dataclass(frozen=True)
class PyomoHighs:
    """Build with Pyomo and solve with HiGHS through ``pyomo.contrib.solver``.

    Reads the problem's windows (no warm start, no ``ub``), the time limit,
    threads, seed and gap, and no hooks (it cannot be stopped early and does
    not race).  Model option: ``cuts`` (the rounded rows).
    """

    name: ClassVar[str] = "pyomo"
    #: models the batch cap (the count rows of models/time-indexed.md §13)
    batch_cap: ClassVar[bool] = True

    cuts: tuple[int, ...] = DEFAULT_CUTS

    def solve(self, problem: Problem, limits: Limits, hooks: Hooks = NO_HOOKS) -> RawResult:
        import pyomo.environ as pyo

        try:
            from pyomo.contrib.solver.solvers.highs import Highs
        except ImportError as exc:  # pragma: no cover - depends on the Pyomo version
            raise SolverError(f"Pyomo's HiGHS interface is not available: {exc}") from None
        t0 = time.monotonic()
        inst = problem.instance
        m = build_pyomo(inst, problem.objective, problem.lo, problem.hi, cuts=self.cuts)
        build = time.monotonic() - t0
        opt = Highs()
        with stdout_to_stderr():
            if not opt.available():
                raise SolverError("HiGHS is not available to Pyomo (install highspy)")
            version = ".".join(map(str, opt.version()))
            res = opt.solve(
                m,
                tee=False,
                load_solutions=False,
                raise_exception_on_nonoptimal_result=False,
                time_limit=max(limits.time_limit - build, 0.01),
                threads=int(limits.threads),
                solver_options={
                    "random_seed": int(limits.seed),
                    "mip_rel_gap": float(limits.gap),
                    "mip_abs_gap": 0.999 if limits.gap == 0 else 1e-6,
                },
            )
        native = res.termination_condition.name
        starts = None
        if res.incumbent_objective is not None:
            res.solution_loader.load_vars()
            starts = np.full(inst.n, -1, dtype=np.int64)
            for g, jobs in enumerate(m._kvopt_groups):
                ts = []
                for gg, t in m.X:
                    if gg == g:
                        ts += [t] * int(round(pyo.value(m.x[gg, t])))
                if len(ts) != len(jobs):
                    raise SolverError("Pyomo solution does not start every job once")
                starts[list(jobs)] = sorted(ts)
        bound = res.objective_bound
        return RawResult(
            starts=starts,
            bound=float(bound) if bound is not None and np.isfinite(bound) else None,
            native_status=native,
            solver="pyomo-highs",
            solver_version=f"pyomo {pyo.__version__ if hasattr(pyo, '__version__') else ''} / highs {version}",
            status=status_of(
                starts,
                proven=PYOMO_STATUS.get(native) is SolveStatus.OPTIMAL,
                infeasible=PYOMO_STATUS.get(native) is SolveStatus.INFEASIBLE,
            ),
            stats={"build_seconds": round(build, 3), "variables": len(m.X)},
        )
