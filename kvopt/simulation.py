"""Run a policy by its registry name (or as an object) with the event engine (SPEC §6).

This module sits above both the engine (:mod:`kvopt.engine`, which runs a
policy *object* and knows nothing of the registry) and the policies
(:mod:`kvopt.policy`, which see only :mod:`kvopt.engine.contract`): it looks
the name up in the registry, checks the policy's instance class, builds the
object with its parameters and seed, and hands it to
:func:`kvopt.engine.core.run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .engine.contract import Adversary, Policy
from .engine.core import run
from .engine.results import SimulationResult
from .errors import InputError
from .instance import Instance, Job
from .policy import PolicySpec, ResolvedPolicy, resolve_policy
from .serving.timemodel import TimeModel, parse_time_model


def _check_admits_releases(policy: ResolvedPolicy, instance: Instance) -> None:
    """With an adversary, refuse at once a policy whose class excludes later arrivals.

    The probe is the instance plus a copy of its first job arriving after every
    job: it breaks no per-job rule the instance satisfies, only "no arrivals".
    (Run anyway, an offline policy would not see released jobs at all.)
    """
    j0 = instance.jobs[0]
    later = Job(j0.prompt, j0.response, int(instance.arrivals.max()) + 1)
    try:
        policy.check_applies(instance.replace(jobs=(*instance.jobs, later)))
    except InputError as err:
        raise InputError(
            f"{err.rule} (an adversary releases jobs at later rounds)",
            field=err.field,
            source=err.source,
        ) from None


def _check_final(policy: ResolvedPolicy):
    """The class check of the instance after the adversary's releases (for the engine)."""

    def check(final: Instance) -> None:
        try:
            policy.check_applies(final)
        except InputError as err:
            raise InputError(
                f"{err.rule} (in the instance after the adversary's releases)",
                field=err.field,
                source=err.source,
            ) from None

    return check


def simulate(
    instance: Instance,
    policy: str | ResolvedPolicy | Policy,
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    trace: bool = False,
    instrument: bool = False,
    adversary: Adversary | None = None,
    max_attempts: int | None = None,
    time_model: TimeModel | str | None = None,
) -> SimulationResult:
    """Run ``policy`` (a registry name, a reference, a policy class or object) on ``instance``.

    A reference (``file.py:Class``, ``package.module:Class``, an entry-point name,
    SPEC §4) or a class runs like a built-in name, either as ``NAME[K=V;…]``; a
    :class:`~kvopt.policy.ResolvedPolicy` (:func:`kvopt.policy.resolve_policy`) runs
    without being resolved again; an object runs as it is.

    ``params`` (only with a name) are the policy's parameters (see ``kvopt
    policies``); ``seed`` feeds seeded policies.  A name is checked against the
    policy's instance class first (:class:`~kvopt.errors.InputError` naming
    ``--policy`` and the rule).  ``trace=True`` records every event and
    decision; ``instrument=True`` asks the policy for its instrumentation
    (e.g. Rect's queue states, Route's per-job branch bounds).  ``adversary``
    (an :class:`~kvopt.engine.contract.Adversary`) may release jobs during the
    run in reaction to the policy's decisions; a named policy's class is then
    checked again on the final instance (``result.instance``).  The returned
    schedule has passed the checker against the final instance.  ``max_attempts``
    stops a run that makes more attempts with :class:`~kvopt.errors.BudgetError`.
    ``time_model`` (a :class:`~kvopt.serving.timemodel.TimeModel`, a preset name or
    ``"c0=…,c_b=…"``; default ``unit``) times the rounds (SPEC §10): on a timed
    instance it decides the arrival rounds, and ``result.clock`` gives the seconds
    (:func:`kvopt.serving.seconds.seconds_report` turns them into latencies).
    """
    tm = parse_time_model(time_model, source="time_model")
    if not isinstance(policy, str | type | PolicySpec | ResolvedPolicy):  # an object: as it is
        if params:
            raise TypeError("params are only accepted with a policy name")
        return run(instance, policy, trace=trace, instrument=instrument, adversary=adversary,
                   max_attempts=max_attempts, time_model=tm)  # fmt: skip
    # a name, a reference or a class (API; SPEC §4) is resolved once (a user's file is read
    # and hashed on every resolution); a ResolvedPolicy is not resolved again
    ref = resolve_policy(policy, params)
    ref.check_applies(instance)
    if adversary is not None and instance.n:
        _check_admits_releases(ref, instance)
    return run(
        instance,
        ref.make(seed),
        trace=trace,
        instrument=instrument,
        adversary=adversary,
        name=ref.name,
        params=ref.params,
        check_final=_check_final(ref),
        max_attempts=max_attempts,
        time_model=tm,
    )


__all__ = ["simulate"]
