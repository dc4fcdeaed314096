"""``fcfs`` — vLLM-style first-come-first-served with recompute preemption (SPEC §6.3;
Jaillet et al. 2025 §5.2; Kwon et al. 2023).  Non-clairvoyant.

The queue is in arrival order (ties by job index).  At each event time ``t``
(arrivals, completions, and the first round in which the running set
overflows — the engine's events):

1. completions are recorded (the engine has ended those attempts);
2. while the running attempts would hold more than ``M`` in round ``t``, the
   most recently started one is killed (ties: the one later in queue order);
   the killed jobs go back to the *front* of the queue, in queue order;
3. the head of the queue is admitted while the memory the running attempts
   hold in round ``t`` plus ``s_i + 1`` fits in ``M`` and, under a batch cap
   ``B`` (``max_batch``, SPEC §10.1), fewer than ``B`` attempts run (stop at the
   first that does not fit).

This is vLLM's admission: ``admission=vllm`` of SPEC §10.1, the only one ``fcfs``
takes.  ``admission=future`` (the exact future-memory check of §6.2) needs response
lengths, which a non-clairvoyant policy never sees; it is refused (exit 2), and
``mc-benchmark`` is FCFS order under that check.  ``sjf`` takes both
(:class:`~kvopt.policy.sjf.SJFFuture`).

:class:`QueueLogic` holds this loop for ``fcfs``, ``sjf`` (same rules, queue
ordered by predicted response) and the ``alpha-protect`` / ``beta-clear``
family (threshold ``(1−α)M`` and their own overflow rules).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from ..engine.contract import ARRIVAL, OVERFLOW, Actions, BlindPolicy, Event, View
from ..errors import InputError
from .mcsf import check_admission


class QueueLogic:
    """The event loop shared by the queue baselines (see the module docstring).

    The waiting queue is a heap of ``(tier, key, job)`` (distinct entries: the job
    index decides ties), popped in that order: killed jobs enter tier 0 (the front)
    when :attr:`killed_to_front`, every other job tier 1.  (It was a sorted list with
    ``insort`` and ``del waiting[:taken]``, ``O(queue)`` per event: at 10⁶ requests the
    backlog made ``fcfs`` ×36 slower than at 10⁵, issue 54.)
    """

    name = "queue"
    kills = True  # on overflow (alpha-protect / beta-clear: their own overflow rules)
    killed_to_front = True

    def queue_key(self, view: View, j: int):
        """Queue order within a tier (arrival order here)."""
        return view.arrival(j)

    def admit_limit(self) -> int:
        """Memory an admission may fill up to (``M`` here)."""
        return self.M

    def _init_queue(self, view: View) -> None:
        self.M = view.memory
        self.prompts: dict[int, int] = {}  # filled on arrival
        self.waiting: list[tuple] = []
        self.seen: set[int] = set()
        self.keys: dict[int, tuple] = {}
        for j in view.jobs:
            self._arrive(view, j)

    def _arrive(self, view: View, j: int) -> None:
        if j not in self.seen:
            self.seen.add(j)
            self.prompts[j] = int(view.prompts[j])
            self.keys[j] = (self.queue_key(view, j), j)
            heapq.heappush(self.waiting, (1, *self.keys[j]))

    def _requeue(self, j: int) -> None:
        heapq.heappush(self.waiting, (0 if self.killed_to_front else 1, *self.keys[j]))

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        overflow = False
        for e in events:
            if e.kind == ARRIVAL:
                self._arrive(view, e.job)
            elif e.kind == OVERFLOW:
                overflow = True
        cleared = False
        if overflow or view.memory_now() > self.M:
            cleared = self.resolve_overflow(view, act)
        self.admit(view, act, head_only=cleared and not view.running)

    def resolve_overflow(self, view: View, act: Actions) -> bool:
        """Kill the most recently started attempt (ties: later in queue order) until round
        ``now`` fits; returns whether anything was killed."""
        killed = False
        while view.memory_now() > self.M:
            victim = max(view.running, key=lambda j: (view.running[j], self.keys[j]))
            act.kill(victim)
            self._requeue(victim)
            killed = True
        return killed

    def admit(self, view: View, act: Actions, head_only: bool = False) -> None:
        limit = self.admit_limit()
        used = view.memory_now()
        waiting = self.waiting
        taken = 0
        while waiting and view.has_slot():
            j = waiting[0][-1]
            need = self.prompts[j] + 1
            if used + need <= limit or (taken == 0 and not view.running):
                # (an empty system always admits its head: its true peak s + o ≤ M)
                act.start(j)
                heapq.heappop(waiting)
                used += need
                taken += 1
                if head_only:
                    break
            else:
                break


class FCFS(QueueLogic, BlindPolicy):
    """vLLM-style FCFS with recompute preemption (SPEC §6.3)."""

    name = "fcfs"

    def __init__(self, admission: str = "vllm") -> None:
        if check_admission(admission) != "vllm":
            raise InputError(
                "fcfs is non-clairvoyant and takes only admission=vllm: admission=future "
                "needs response lengths (mc-benchmark is FCFS order under the future-memory "
                "check)",
                source="--param admission",
            )
        self.params: dict = {"admission": admission}

    def setup(self, view: View) -> None:
        self._init_queue(view)
