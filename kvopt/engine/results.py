"""What a simulation returns: :class:`SimulationResult` with its run :class:`Stats`."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..instance import Instance
from ..schedule import Schedule
from .clock import Clock


@dataclass(frozen=True)
class Stats:
    """Run statistics: killed attempts, rounds they wasted, events, event times, seconds."""

    kills: int
    wasted_rounds: int
    events: int
    event_times: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "kills": self.kills,
            "wasted_rounds": self.wasted_rounds,
            "events": self.events,
            "event_times": self.event_times,
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class SimulationResult:
    """What :func:`kvopt.simulation.simulate` (and :func:`kvopt.engine.core.run`) returns.

    ``schedule`` has passed :func:`~kvopt.schedule.checked`.

    ``trace`` (when requested) is a tuple of ``(time, what, job, info)`` rows:
    events (``what`` = event kind) and decisions (``start`` with ``info`` = cap or
    −1, ``kill`` with ``info`` = rounds run).  ``instrumentation`` is whatever the
    policy reported (see each policy's docstring), else ``None``.  ``instance`` is
    the final instance: the input itself, or — with an adversary — the input jobs
    followed by the released jobs (with their arrivals), against which the
    schedule was checked; it replays as a normal instance.  For a timed instance
    under a non-unit time model it is the realized instance (SPEC §10).  ``clock``
    (:class:`~kvopt.engine.clock.Clock`) gives each round's start in seconds under
    the run's time model.

    ``objectives`` is ``{"total_completion": ΣC_i, "makespan": max C_i}`` (SPEC §4's
    ``objective`` object of ``simulate --json``), also read as :attr:`total_completion` and
    :attr:`makespan`.  The dict was called ``objective`` until kvopt 0.2 renamed it (issue 68:
    :attr:`kvopt.exact.SolveResult.objective` is a number); that name still works for one
    release, with a :class:`DeprecationWarning`, and is removed in kvopt 0.3.
    """

    policy: str
    params: Mapping[str, Any]
    schedule: Schedule
    objectives: Mapping[str, int]
    stats: Stats
    completion_times: tuple[int, ...]
    trace: tuple[tuple[int, str, int, int], ...] | None = None
    instrumentation: Mapping[str, Any] | None = field(default=None, compare=False)
    instance: Instance | None = field(default=None, compare=False)
    clock: Clock | None = field(default=None, compare=False, repr=False)

    @property
    def total_completion(self) -> int:
        """``ΣC_i``, the total completion time (rounds)."""
        return int(self.objectives["total_completion"])

    @property
    def makespan(self) -> int:
        """``max C_i``, the makespan (rounds)."""
        return int(self.objectives["makespan"])

    @property
    def objective(self) -> Mapping[str, int]:
        """Deprecated alias of :attr:`objectives` (the same dict); removed in kvopt 0.3."""
        warnings.warn(
            "SimulationResult.objective is deprecated; use .objectives (a dict) or "
            ".total_completion / .makespan; removed in kvopt 0.3",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.objectives

    def __repr__(self) -> str:
        o = self.objectives
        params = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return (
            f"SimulationResult({self.policy}{f'[{params}]' if params else ''}: "
            f"total_completion={o['total_completion']}, makespan={o['makespan']}, "
            f"kills={self.stats.kills}, wasted_rounds={self.stats.wasted_rounds}, "
            f"{len(self.completion_times)} jobs)"
        )

    def to_dict(self, n: int | None = None) -> dict[str, Any]:
        """The JSON form of ``kvopt simulate --json`` (SPEC §4)."""
        return {
            "policy": self.policy,
            "params": dict(self.params),
            "objective": dict(self.objectives),
            "schedule": self.schedule.to_dict(n if n is not None else len(self.completion_times)),
            "stats": self.stats.to_dict(),
        }


__all__ = ["SimulationResult", "Stats"]
