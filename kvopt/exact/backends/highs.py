"""The HiGHS backend: the time-indexed IP of :mod:`kvopt.exact.backends.highs_matrix` solved with
``highspy`` (the glue is :mod:`kvopt.exact.backends.highs_glue`), in this process or, for large
models, in the worker process of :mod:`kvopt.exact.backends.highs_worker`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ..backend import NO_HOOKS, Hooks, Limits, Problem
from ..common import RawResult, SolveStatus
from .highs_glue import (
    highs_status,
    highs_version,
    highspy_solution,
    option_value,
    run_highs,
    to_highs,
)
from .highs_matrix import DEFAULT_CUTS, build_matrix, warm_values
from .highs_worker import solve_in_worker

#: Models with at least this many non-zeros are solved in a worker process (see Highs.solve).
ISOLATE_NONZEROS = 20_000


@dataclass(frozen=True)
class Highs:
    """HiGHS on the numpy-built time-indexed IP (the default IP path).

    Reads the problem's windows and warm start (not ``ub``), every limit but
    ``bound_focus``, and the ``stop`` and ``monitor`` hooks.  Model options:
    ``aggregate`` (identical jobs as one group), ``z_bounds`` (makespan
    column), ``cuts`` (the rounded rows), ``defaults`` (HiGHS's default gap
    tolerances, for the textbook baseline); ``isolate`` forces (or forbids) the
    worker process; ``grace`` is how long a solver that overruns its limit is
    waited for; ``label`` names its results (``RawResult.solver``: two HiGHS models
    racing each other keep their statistics apart, ``models/time-indexed.md`` §10).

    HiGHS does not poll for interrupts in every phase (on a large model its
    presolve ran 20 s past a 2 s limit), and a thread cannot be killed.  So
    models with ``≥ ISOLATE_NONZEROS`` non-zeros (or ``isolate=True``) are
    solved in a worker process that is terminated if it does not stop within
    ``2·grace`` of being asked: the time limit, ``stop`` and Ctrl-C are
    honoured within about a second and no runaway solver keeps a core busy.
    Small models run in this process.
    """

    name: ClassVar[str] = "highs"
    #: models the batch cap (the count rows of models/time-indexed.md §13)
    batch_cap: ClassVar[bool] = True

    aggregate: bool = True
    z_bounds: tuple[float, float] | None = None
    cuts: tuple[int, ...] = DEFAULT_CUTS
    defaults: bool = False
    isolate: bool | None = None
    grace: float = 0.35
    label: str = "highs"

    def solve(self, problem: Problem, limits: Limits, hooks: Hooks = NO_HOOKS) -> RawResult:
        isolate = self.isolate
        if isolate is None:
            width = np.maximum(np.asarray(problem.hi) - np.asarray(problem.lo) + 1, 0)
            isolate = int((width * problem.instance.responses).sum()) >= ISOLATE_NONZEROS
        if not isolate:
            return self.solve_here(problem, limits, hooks)
        return solve_in_worker(self, problem, limits, hooks, grace=self.grace)

    def solve_here(
        self,
        problem: Problem,
        limits: Limits,
        hooks: Hooks = NO_HOOKS,
        *,
        retry: bool = True,
        presolve: bool = True,
    ) -> RawResult:
        """Build and solve the time-indexed IP with HiGHS in this process.

        HiGHS's reported objective is compared with the cost of its solution's
        columns; on a mismatch (seen with a warm start on a model that presolve
        settles at once: HiGHS reported 10 for a solution of cost 13, and "Optimal")
        its bound and status are not trusted: the model is solved again without
        the warm start and without presolve, and if that also disagrees the bound
        is dropped.  A "Solve error" (seen: presolve reduces a tiny aggregated model
        to empty and postsolves it to an infeasible point, e.g. 6 jobs, M = 5,
        identical jobs grouped) is retried the same way.
        """
        t0 = time.monotonic()
        inst = problem.instance
        model = build_matrix(
            inst,
            problem.objective,
            problem.lo,
            problem.hi,
            aggregate=self.aggregate,
            z_bounds=self.z_bounds,
            cuts=self.cuts,
            max_batch=inst.max_batch,
        )
        h = to_highs(model)
        if not presolve:
            h.setOptionValue("presolve", "off")
        stats = {
            "columns": model.n_cols,
            "rows": model.n_rows,
            "nonzeros": int(len(model.a_value)),
            "groups": len(model.groups),
            "build_seconds": round(time.monotonic() - t0, 3),
        }
        if problem.warm is not None:
            xv = warm_values(model, problem.warm)
            if xv is not None:
                h.setSolution(highspy_solution(xv))
                stats["warm_start"] = True
        native, cancelled, interrupted = run_highs(
            h,
            time_limit=max(limits.time_limit - (time.monotonic() - t0), 0.01),
            threads=limits.threads,
            seed=limits.seed,
            gap=limits.gap,
            stop=hooks.stop,
            grace=self.grace,
            defaults=self.defaults,
            monitor=hooks.monitor,
        )
        if native.startswith("Abandoned"):
            return RawResult(
                None,
                None,
                native,
                self.label,
                highs_version(),
                SolveStatus.UNKNOWN,
                interrupted=interrupted,
                stats=stats,
            )
        info = h.getInfo()
        starts = None
        mismatch = False
        if info.primal_solution_status == 2:  # kSolutionStatusFeasible
            x = np.asarray(h.getSolution().col_value)
            starts = model.starts_from(x, inst.n)
            cost = float(model.col_cost @ x)
            reported = float(info.objective_function_value)
            mismatch = abs(cost - reported) > 1e-6 * max(1.0, abs(cost))
        solve_error = native == "Solve error"
        if (mismatch or solve_error) and retry and not interrupted and not cancelled:
            left = limits.time_limit - (time.monotonic() - t0)
            if left > 0.05:
                again = self.solve_here(
                    replace(problem, warm=None),
                    replace(limits, time_limit=left),
                    hooks,
                    retry=False,
                    presolve=False,
                )
                why = "solve error" if solve_error else "objective mismatch"
                return replace(again, stats={**again.stats, "retried_without_presolve": why})
        bound = float(info.mip_dual_bound) if np.isfinite(info.mip_dual_bound) else None
        if mismatch:
            bound = None
            native = f"{native} (objective mismatch {reported:g} vs {cost:g}: bound dropped)"
        elif native == "Optimal" and starts is not None:
            # "Optimal" is HiGHS's claim that primal − dual ≤ max(mip_abs_gap,
            # mip_rel_gap·|primal|).  Its reported mip_dual_bound can lag behind that claim
            # (seen: 10.0 for a proven 13 when a warm start and presolve settle the model at
            # the root), so use the claim
            obj = float(info.objective_function_value)
            tol = max(option_value(h, "mip_abs_gap"), option_value(h, "mip_rel_gap") * abs(obj))
            bound = obj - tol if bound is None else max(bound, obj - tol)
        stats["nodes"] = int(info.mip_node_count)
        return RawResult(
            starts=starts,
            bound=bound,
            native_status=native + (" (cancelled)" if cancelled and native != "Optimal" else ""),
            solver=self.label,
            solver_version=highs_version(),
            status=highs_status(native, starts, trusted=not mismatch),
            interrupted=interrupted,
            stats=stats,
        )
