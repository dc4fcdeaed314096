"""Event-driven simulation of scheduling policies (SPEC §1, §6), with enforced visibility.

Three modules, in the direction of their imports:

* :mod:`kvopt.engine.contract` — what a policy sees and may do: events
  (:class:`Event`, :data:`EVENT_KINDS`), views (:class:`View`,
  :class:`ClairvoyantView`, :class:`VisibleData`), decisions
  (:class:`Actions`), the policy kinds (:class:`Policy`, :class:`BlindPolicy`,
  :class:`ClairvoyantPolicy`) and the :class:`Adversary` protocol.  Policies
  import this module only.
* :mod:`kvopt.engine.core` — the event loop: :func:`run` runs a policy *object*
  and knows nothing of the policy registry.
* :mod:`kvopt.engine.results` — :class:`SimulationResult` and :class:`Stats`.
* :mod:`kvopt.engine.clock` — the clock in seconds (SPEC §10): ``τ_t`` of a run under a
  time model, one record per stretch of rounds with the same running set; the event loop
  advances it at every step and releases the jobs of a timed instance by it.
* :mod:`kvopt.engine.fastpath` — a plain run of a built-in policy that has a compiled loop
  (today ``route-online``): :func:`run` asks it first; the event loop is the reference.

Running a policy by its registry name is :func:`kvopt.simulation.simulate`
(above the engine and the policies).
"""

from __future__ import annotations

from .contract import (
    ARRIVAL,
    COMPLETION,
    EVENT_KINDS,
    EXPIRY,
    OVERFLOW,
    WAKE,
    Actions,
    Adversary,
    BlindPolicy,
    ClairvoyantPolicy,
    ClairvoyantView,
    Event,
    Policy,
    Release,
    RunAlone,
    View,
    VisibleData,
)
from .core import run, run_alone
from .results import SimulationResult, Stats

__all__ = [
    "ARRIVAL",
    "COMPLETION",
    "EVENT_KINDS",
    "EXPIRY",
    "OVERFLOW",
    "WAKE",
    "Actions",
    "Adversary",
    "BlindPolicy",
    "ClairvoyantPolicy",
    "ClairvoyantView",
    "Event",
    "Policy",
    "Release",
    "RunAlone",
    "SimulationResult",
    "Stats",
    "View",
    "VisibleData",
    "run",
    "run_alone",
]
