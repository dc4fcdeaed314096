"""HiGHS glue (``highspy``): hand a :class:`~kvopt.exact.backends.highs_matrix.MatrixModel` to HiGHS,
run it under a time limit and a stop event, read its answer.

``highspy`` is imported inside the functions only.  The model itself is built
in :mod:`kvopt.exact.backends.highs_matrix`; the backend that builds, runs, checks and
decodes is :mod:`kvopt.exact.backends.highs`.
"""

from __future__ import annotations

import functools
import threading
import time
from typing import TYPE_CHECKING

import numpy as np

from ...errors import SolverError
from .. import workers
from ..common import SolveStatus, status_of, stdout_to_stderr

if TYPE_CHECKING:
    from .highs_matrix import MatrixModel

#: HiGHS model statuses (``h.modelStatusToString``) → kvopt's reading: proven optimal
#: (within the gap asked for), proven infeasible, or stopped (any other status: a schedule
#: then is feasible, none is unknown; :func:`highs_status`).  ``finish()`` still decides
#: optimal/feasible for the user from the checked objective and the bound.
HIGHS_STATUS = {
    "Optimal": SolveStatus.OPTIMAL,
    "Infeasible": SolveStatus.INFEASIBLE,
    "Time limit reached": SolveStatus.FEASIBLE,
    "Interrupted by user": SolveStatus.FEASIBLE,
    "Solution limit reached": SolveStatus.FEASIBLE,
    "Iteration limit reached": SolveStatus.FEASIBLE,
    "Objective bound": SolveStatus.FEASIBLE,
    "Unknown": SolveStatus.FEASIBLE,
}


def lp_solved(native: str) -> bool:
    """Did HiGHS solve an LP to optimality (its native status read through
    :data:`HIGHS_STATUS`, for the LP relaxations of :mod:`kvopt.exact.bounds`)?"""
    return HIGHS_STATUS.get(native) is SolveStatus.OPTIMAL


def highs_status(native: str, starts, *, trusted: bool = True) -> SolveStatus:
    """kvopt's status of a HiGHS result: :data:`HIGHS_STATUS` of its native status, read
    with the schedule it has (``trusted=False``: its objective did not match, not proven)."""
    s = HIGHS_STATUS.get(native, SolveStatus.FEASIBLE)
    return status_of(
        starts,
        proven=s is SolveStatus.OPTIMAL and trusted,
        infeasible=s is SolveStatus.INFEASIBLE,
    )


@functools.cache
def highs_version() -> str:
    import highspy

    with stdout_to_stderr(silence=True):  # the constructor prints a banner
        h = highspy.Highs()
    return f"{h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"


def to_highs(model: MatrixModel, *, relax: bool = False, names: bool = False):
    """A silent ``highspy.Highs`` holding ``model`` (integrality dropped when ``relax``)."""
    import highspy

    with stdout_to_stderr(silence=True):  # the constructor prints a banner
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    lp = highspy.HighsLp()
    lp.num_col_ = model.n_cols
    lp.num_row_ = model.n_rows
    lp.col_cost_ = model.col_cost
    lp.col_lower_ = model.col_lower
    lp.col_upper_ = model.col_upper
    inf = h.getInfinity()
    lp.row_lower_ = np.where(np.isfinite(model.row_lower), model.row_lower, -inf)
    lp.row_upper_ = np.where(np.isfinite(model.row_upper), model.row_upper, inf)
    lp.col_upper_ = np.where(np.isfinite(model.col_upper), model.col_upper, inf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = model.a_start.astype(np.int32)
    lp.a_matrix_.index_ = model.a_index.astype(np.int32)
    lp.a_matrix_.value_ = model.a_value
    if not relax:
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if v else highspy.HighsVarType.kContinuous
            for v in model.integrality
        ]
    if names:
        lp.col_names_ = [
            "z" if g < 0 else f"x_g{g}_t{t}" for g, t in zip(model.col_group, model.col_start)
        ]
        G = len(model.groups)
        H = model.horizon
        rn = [f"assign_g{g}" for g in range(G)] + [f"mem_t{t}" for t in range(H)]
        for k in model.cuts:
            rn += [f"round{k}_t{t}" for t in range(H)]
        if model.max_batch is not None:
            rn += [f"batch_t{t}" for t in range(H)]
        if model.objective == "makespan":
            rn += [f"span_g{g}" for g in range(G)]
        lp.row_names_ = rn
    status = h.passModel(lp)
    if status != highspy.HighsStatus.kOk:
        raise SolverError(
            f"HiGHS rejected the model ({h.statusToString(status) if hasattr(h, 'statusToString') else status})"
        )
    return h


def highspy_solution(x: np.ndarray):
    """A ``highspy.HighsSolution`` with column values ``x`` (a warm start)."""
    import highspy

    sol = highspy.HighsSolution()
    sol.col_value = list(map(float, x))
    sol.value_valid = True
    return sol


def option_value(h, name: str) -> float:
    """A numeric option of ``h`` (highspy returns a value or a ``(status, value)`` pair)."""
    value = h.getOptionValue(name)
    return float(value[1] if isinstance(value, tuple) else value)


def run_highs(
    h,
    *,
    time_limit: float,
    threads: int,
    seed: int,
    gap: float,
    stop: threading.Event | None = None,
    grace: float = 0.35,
    defaults: bool = False,
    monitor=None,
) -> tuple[str, bool, bool]:
    """Run ``h`` in HiGHS's own thread; honour ``time_limit`` and ``stop`` even if HiGHS overruns.

    Returns ``(native_status, cancelled, interrupted)``.  ``KeyboardInterrupt``
    cancels the solve and waits for HiGHS to stop; the caller reports what was
    found and marks the result interrupted.
    """
    # HiGHS compares its time limit with the run time of every run of ``h`` so far, not of
    # this one (HiGHS 1.16, ``getRunTime``): a re-solve after rows were added, given the 47 s
    # left, stopped at once after 47 s of earlier runs (issue 52: the LP with the completion
    # cliques stopped at about half its deadline). So the limit is set past what ``h`` has run.
    h.setOptionValue("time_limit", max(float(time_limit), 0.01) + float(h.getRunTime()))
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("random_seed", int(seed))
    if not defaults:  # the objective is integral: an absolute gap below 1 proves optimality
        h.setOptionValue("mip_rel_gap", float(gap))
        h.setOptionValue("mip_abs_gap", 0.999 if gap == 0 else 1e-6)
    import highspy

    # our own thread and interrupt flag: highspy's startSolve() uses class-level locks, so
    # one abandoned solve would block every later one in the process
    flag = {"stop": False}

    def on_interrupt(event):
        if (
            monitor is not None
            and event.callback_type == highspy.cb.HighsCallbackType.kCallbackMipInterrupt
        ):
            out = event.data_out
            monitor(out.mip_primal_bound, out.mip_dual_bound)
        if flag["stop"]:
            event.interrupt()

    h.cbSimplexInterrupt += on_interrupt
    h.cbIpmInterrupt += on_interrupt
    h.cbMipInterrupt += on_interrupt
    box: dict = {}

    def work():
        try:
            box["status"] = h.run()
        except BaseException as exc:  # noqa: BLE001 - reported in the caller's thread
            box["error"] = exc

    def ask_stop() -> None:
        flag["stop"] = True

    deadline = time.monotonic() + float(time_limit) + grace
    cancelled = interrupted = False
    abandon_at = None
    with stdout_to_stderr():
        th, held = workers.start_deferred(work, name="kvopt-highs-run", stop=ask_stop)
        while True:
            try:
                held.release()  # a Ctrl-C that came while the thread started lands here
                if th.finished():
                    break
                th.wait(0.05)
                now = time.monotonic()
                if not cancelled and (now > deadline or (stop is not None and stop.is_set())):
                    flag["stop"] = cancelled = True
                    abandon_at = now + 2 * grace
                if abandon_at is not None and now > abandon_at and not th.finished():
                    # HiGHS does not poll for interrupts in every phase (e.g. parts of
                    # presolve); leave its thread behind rather than overrun the limit
                    return "Abandoned (did not stop when asked)", True, interrupted
            except KeyboardInterrupt:
                flag["stop"] = cancelled = interrupted = True
                abandon_at = time.monotonic() + 2 * grace
    if "error" in box:
        raise SolverError(f"HiGHS failed: {box['error']}")
    native = h.modelStatusToString(h.getModelStatus())
    return native, cancelled, interrupted
