"""The engine's side of a policy's :class:`~kvopt.engine.contract.Actions`: each decision
checked at once against the view and logged for :mod:`kvopt.engine.core` to apply (SPEC §4:
a policy may start, kill and wake, nothing else; a refused decision fails the run)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import PolicyError
from .contract import Actions, View


class EngineActions(Actions):
    """Validates each decision at once against the view and logs it for the engine.

    It holds only the view (nothing of unarrived jobs, no response lengths of
    unfinished ones) and a log, so a policy reaches no hidden data through it.
    It cannot tell "not arrived yet" from "no such job" (the engine words the
    final error), and the first refused decision fails the run even if the
    policy catches the error, so refusals cannot be used to probe.
    """

    __slots__ = ("_view", "_pname", "_log", "_refused", "_unseen", "_no_kills")

    def __init__(self, view: View, pname: str, no_kills: Callable[[], bool] | None = None):
        self._view = view
        self._pname = pname
        self._no_kills = no_kills  # the engine's never_kills (SPEC §4: the declared mark)
        self._log: list[
            tuple[int, int, int]
        ] = []  # (0=start/1=kill/2=wake, job or time, cap/start)
        self._refused: PolicyError | None = None
        self._unseen: int | None = None

    def _err(self, msg: str, job: int | None = None) -> PolicyError:
        now = self._view.now
        where = f"job {job}, round {now}" if job is not None else f"round {now}"
        err = PolicyError(f"policy {self._pname!r}: {where}: {msg}")
        if self._refused is None:
            self._refused = err
        return err

    def start(self, job: int, cap: int | None = None) -> None:
        v = self._view
        if not isinstance(job, int | np.integer) or job < 0:
            raise self._err(f"start of unknown job {job!r}")
        job = int(job)
        if job not in v._arrival:
            if self._refused is None:
                self._unseen = job
            raise self._err("started but not visible (it has not arrived)", job)
        if job in v._done:
            raise self._err("started after it finished", job)
        if job in v._running:
            raise self._err("started while an attempt of it is running (two attempts)", job)
        if v.max_batch is not None and v._K >= v.max_batch:
            raise self._err(
                f"started while {v._K} attempts run: the batch cap max_batch = {v.max_batch} "
                "allows no more (SPEC §10.1)",
                job,
            )
        if cap is None:
            c = -1
        else:
            c = int(cap)
            if c < 1:
                raise self._err(f"cap must be >= 1, got {cap}", job)
        v._start(job, v.now, None if c < 0 else c)
        self._log.append((0, job, c))

    def kill(self, job: int) -> None:
        v = self._view
        if self._no_kills is not None and self._no_kills():
            raise self._err("killed, but the policy declares kills = False (it never kills)", job)
        if job not in v._running:
            raise self._err("killed but not running", job)
        start = v._running[job]
        if v.now - start < 1:
            raise self._err("killed in the round it started (an attempt needs >= 1 round)", job)
        v._stop(job)
        self._log.append((1, int(job), start))

    def wake(self, time: int) -> None:
        time = int(time)
        if time <= self._view.now:
            raise self._err(f"wake-up at round {time} is not in the future")
        self._log.append((2, time, 0))


__all__ = ["EngineActions"]
