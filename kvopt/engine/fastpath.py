"""A plain run through a built-in policy's compiled loop (issue 54): where :func:`kvopt.engine.core.run`
asks for it and what it builds from it.

**Where the dispatch lives.**  :func:`kvopt.engine.core.run` calls :func:`compiled_result`
first.  It goes on only for a *plain* run: no trace, no instrumentation, no adversary, no
``max_attempts``, the ``unit`` time model (or none), no batch cap (``max_batch``), the switch :data:`ENABLED` on, and a
policy object of kvopt's own (:func:`~kvopt.engine.core.is_user_policy` false) that has a
``compiled_run(instance, idle_calls)`` method.  That method (today only
:meth:`kvopt.policy.route.RouteOnline.compiled_run`) decides the rest: it returns ``None``
unless its object is exactly its built-in class with parameters its kernel copies, Numba is
installed and the kernel ran the whole run to the end (no overflow, stall or idle run: those
are the reference's to report).  On ``None`` the reference (the event loop of
:mod:`kvopt.engine.core` with the policy object) runs exactly as before.  A user's policy is
never asked, so the policy contract (:mod:`kvopt.engine.contract`) does not change.

What a compiled loop returns (a mapping): the attempts as four arrays (``job``, ``start``,
``rounds``, ``completed``) in the schedule's order (start, then job), the engine's
``n_events`` and ``n_times``, and the unit clock's ``busy_seconds``, ``memory_seconds``
and last round ``now``.  The result is built as :func:`~kvopt.engine.core.run` builds it:
the schedule passes the checker, whose completion times give the objective; kills and
wasted rounds count the attempts that did not complete.  The clock keeps one stretch record
(under ``unit`` every round lasts one second, so ``τ_t = t`` whatever the records), with the
sums the engine's clock would hold.  The policy object is not run, so it holds no run state
afterwards (a plain run reports nothing from it).
"""

from __future__ import annotations

import time as _time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from ..instance import Instance
from ..schedule import Schedule, check_schedule
from ..serving.timemodel import TimeModel
from .clock import Clock
from .contract import Adversary, Policy
from .results import SimulationResult, Stats

#: Use the compiled loops where they apply (tests switch it off to run the reference).
ENABLED = True


def _schedule_from_arrays(
    job: np.ndarray,
    start: np.ndarray,
    rounds: np.ndarray,
    completed: np.ndarray,
    *,
    memory: int,
    instance: str,
    producer: str,
) -> Schedule:
    """The schedule of attempt columns already in the schedule's order (start, then job): a
    columnar :class:`~kvopt.schedule.Schedule` (no ``Attempt`` objects; the arrays are taken
    as they are and made read-only)."""
    return Schedule.from_columns(
        job, start, rounds, completed, memory=memory, instance=instance, producer=producer
    )


def _clock(model: TimeModel | None, out: Mapping[str, Any]) -> Clock:
    clock = Clock(model)
    clock._t, clock._tau, clock._b, clock._k0, clock._p, clock._q = [0], [0.0], [0], [0], [0], [0]
    clock.now = int(out["now"])
    clock.tau_now = float(out["now"])
    clock.busy_seconds = float(out["busy_seconds"])
    clock.memory_seconds = float(out["memory_seconds"])
    return clock


def compiled_result(
    instance: Instance,
    policy: Policy,
    *,
    trace: bool,
    instrument: bool,
    adversary: Adversary | None,
    max_attempts: int | None,
    time_model: TimeModel | None,
    user: bool,
    name: str,
    params: Mapping[str, Any],
    idle_calls: int,
) -> SimulationResult | None:
    """The result of ``policy``'s compiled loop on a plain run, or ``None`` (module docstring)."""
    if not ENABLED or trace or instrument or adversary is not None or max_attempts is not None:
        return None
    if user or not instance.n or (time_model is not None and not time_model.is_unit):
        return None
    if instance.max_batch is not None:  # the compiled loops know no batch cap (SPEC §10.1)
        return None
    hook = getattr(policy, "compiled_run", None)
    if hook is None:
        return None
    t0 = _time.perf_counter()
    out = hook(instance, idle_calls)
    if out is None:
        return None
    seconds = _time.perf_counter() - t0
    job, start, rounds, completed = out["job"], out["start"], out["rounds"], out["completed"]
    sched = _schedule_from_arrays(
        job, start, rounds, completed, memory=instance.memory, instance=instance.name, producer=name
    )
    check = check_schedule(instance, sched)
    check.raise_if_invalid(f"schedule of policy {name!r}")
    ct = check.completion_times
    objective = {"total_completion": int(sum(ct)), "makespan": int(max(ct, default=0))}
    killed = ~completed
    stats = Stats(
        int(killed.sum()), int(rounds[killed].sum()), int(out["n_events"]), int(out["n_times"]),
        seconds,
    )  # fmt: skip
    return SimulationResult(
        policy=name,
        params=MappingProxyType(dict(params)),
        schedule=sched,
        objectives=MappingProxyType(objective),
        stats=stats,
        completion_times=tuple(int(c) for c in ct),  # type: ignore[arg-type]
        trace=None,
        instrumentation=None,
        instance=instance,
        clock=_clock(time_model, out),
    )


__all__ = ["ENABLED", "compiled_result"]
