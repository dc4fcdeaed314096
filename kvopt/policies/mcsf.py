"""``mcsf`` — Memory-Constrained Shortest First (Jaillet et al. 2025, Algorithm 1) and
``mc-benchmark`` (their §5.2, Algorithm 2); also the shared admission loop of ``svf``.

All of them keep every running job and, at time 0 and every event (arrival,
completion), consider the waiting jobs in a priority order and add each while
the **exact future-memory check** (:mod:`kvopt.futurememory`, the one shared
implementation) passes for the running jobs plus the ones added so far, and
stop at the first that fails.  Orders (ties by job index):

* ``mcsf``          — ascending (predicted) response length;
* ``mc-benchmark``  — arrival order (vLLM-style, with MC-SF's check).

Lengths: the check uses ``predicted_response`` when the instance has it, else
the true response, so with exact lengths memory never overflows and no job is
killed.  Choices the papers leave open (documented here):

* a running job that has already decoded at least its predicted length is
  expected to finish in the next round (remaining estimate 1);
* if an underestimated prediction makes the real memory exceed ``M`` (the
  engine's overflow event), the most recently started attempt is killed (ties:
  the one later in the policy's order), as in ``fcfs``, until the round fits;
  killed jobs wait again under their priority;
* when nothing is running the first waiting job is started even if its
  predicted peak exceeds ``M`` (its true peak ``s + o ≤ M`` always fits), so a
  wrong prediction can never stall the policy.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ..engine import ARRIVAL, OVERFLOW, Actions, ClairvoyantPolicy, Event, View
from ..futurememory import FutureMemory
from ..instance import Instance


class FutureCheckGreedy(ClairvoyantPolicy):
    """Priority-ordered admission under the exact future-memory check (stop at first failure).

    Subclasses define :meth:`priority` (a sortable key per job) and
    :meth:`lengths` (the lengths the check uses).
    """

    name = "future-check"

    def __init__(self) -> None:
        self.params: dict = {}

    # -- to override ---------------------------------------------------------
    def priority(self, instance: Instance, j: int):  # pragma: no cover - abstract
        raise NotImplementedError

    def lengths(self, instance: Instance) -> list[int]:
        """Lengths the check uses: predicted when the instance has them, else true."""
        return [int(x) for x in instance.predicted]

    # -- engine hooks --------------------------------------------------------
    def setup(self, instance: Instance, view: View) -> None:
        self.M = instance.memory
        self.prompts = [int(x) for x in instance.prompts]
        self.est = self.lengths(instance)
        self.key = [(self.priority(instance, j), j) for j in range(instance.n)]
        self.waiting: list = []
        self.seen: set[int] = set()
        for j in view.jobs:
            self._arrive(j)

    def _arrive(self, j: int) -> None:
        if j not in self.seen:
            self.seen.add(j)
            bisect.insort(self.waiting, self.key[j])

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        overflow = False
        for e in events:
            if e.kind == ARRIVAL:
                self._arrive(e.job)
            elif e.kind == OVERFLOW:
                overflow = True
        if overflow:
            self._resolve_overflow(view, act)
        self._admit(now, view, act)

    def _resolve_overflow(self, view: View, act: Actions) -> None:
        while view.memory_now() > self.M:
            victim = max(view.running, key=lambda j: (view.running[j], self.key[j]))
            act.kill(victim)
            bisect.insort(self.waiting, self.key[victim])

    def _admit(self, now: int, view: View, act: Actions) -> None:
        running = list(view.running)
        fm = FutureMemory(
            self.M,
            [self.prompts[j] for j in running],
            [now - view.running[j] for j in running],
            [max(self.est[j] - (now - view.running[j]), 1) for j in running],
        )
        taken = 0
        for _, j in self.waiting:
            if fm.try_add(self.prompts[j], self.est[j]):
                act.start(j)
                taken += 1
            elif not fm.prompts:  # nothing running: start it anyway (true peak ≤ M)
                act.start(j)
                fm.prompts.append(self.prompts[j])
                fm.progress.append(0)
                fm.remaining.append(self.est[j])
                taken += 1
            else:
                break
        del self.waiting[:taken]


class MCSF(FutureCheckGreedy):
    """MC-SF: ascending (predicted) response length, exact future-memory check."""

    name = "mcsf"

    def priority(self, instance: Instance, j: int):
        return int(instance.predicted[j])


class MCBenchmark(FutureCheckGreedy):
    """MC-Benchmark: arrival order (ties by job index), exact future-memory check."""

    name = "mc-benchmark"

    def priority(self, instance: Instance, j: int):
        return int(instance.arrivals[j])
