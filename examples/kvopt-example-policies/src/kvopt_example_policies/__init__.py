"""An example policy and instance family, registered with kvopt through entry points.

``ShortestPromptFirst`` is a non-clairvoyant policy written against kvopt's
policy contract (:mod:`kvopt.engine.contract`): it sees a ``View`` (memory, the
visible jobs and their prompts, the running attempts, the finished jobs'
responses) and decides through ``Actions`` (``start``, ``kill``, ``wake``).
``bimodal`` is an instance family: a function of a ``numpy.random.Generator`` and
keyword parameters with defaults, returning a ``kvopt.Instance``.
"""

from __future__ import annotations

import numpy as np

import kvopt
from kvopt.engine.contract import ARRIVAL, OVERFLOW, Actions, BlindPolicy, Event, View


class ShortestPromptFirst(BlindPolicy):
    """Admit waiting jobs by ascending prompt while the current round fits; on overflow kill
    the newest attempt and queue it again (vLLM-style preemption with a prompt order)."""

    kills = True  # it preempts on overflow
    summary = "ascending prompt while the current round fits; on overflow kill the newest attempt"
    applies_to = "all instances (arrivals allowed)"
    source = "kvopt example package (examples/kvopt-example-policies)"

    def __init__(self, headroom: int = 0):
        if headroom < 0:
            raise ValueError("headroom must be >= 0")
        self.headroom = headroom
        self.waiting: list[int] = []

    def setup(self, view: View) -> None:
        self.waiting = []

    def _memory(self, view: View, now: int) -> int:
        """What the running attempts hold in round ``now`` (prompt + tokens decoded so far + 1)."""
        return sum(view.prompts[j] + (now - b) + 1 for j, b in view.running.items())

    def on_events(self, now: int, events: list[Event], view: View, act: Actions) -> None:
        for e in events:
            if e.kind == ARRIVAL:
                self.waiting.append(e.job)
        if any(e.kind == OVERFLOW for e in events):
            while self._memory(view, now) > view.memory:
                newest = max(view.running, key=lambda j: (view.running[j], j))
                act.kill(newest)
                self.waiting.append(newest)
        self.waiting.sort(key=lambda j: (view.prompts[j], j))
        used = self._memory(view, now)
        while self.waiting and view.has_slot():  # the batch cap, if any (SPEC §10.1)
            j = self.waiting[0]
            need = view.prompts[j] + 1
            if used + need + (self.headroom if view.running else 0) > view.memory:
                break
            act.start(j)
            used += need
            self.waiting.pop(0)


def bimodal(
    rng: np.random.Generator, n: int = 8, memory: int = 48, short: int = 2
) -> kvopt.Instance:
    """Half the jobs tiny (``short``-token responses), half long with larger prompts."""
    jobs = []
    for k in range(n):
        if k % 2:
            jobs.append(kvopt.Job(int(rng.integers(1, 4)), short))
        else:
            s = int(rng.integers(2, memory // 4 + 1))
            o = int(rng.integers(memory // 8 + 1, memory // 2))
            jobs.append(kvopt.Job(s, min(o, memory - s)))
    return kvopt.Instance(memory=memory, jobs=tuple(jobs), name="bimodal")
