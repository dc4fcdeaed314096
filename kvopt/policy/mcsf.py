"""``mcsf`` — Memory-Constrained Shortest First (Jaillet et al. 2025, Algorithm 1) and
``mc-benchmark`` (their §5.2, Algorithm 2); also the shared admission loop of ``svf``.

All of them form their batch at **every round**, as Jaillet et al. do ("at
each time step t"; SPEC §6): keep every running job, consider the waiting jobs
in a priority order and add each while the **exact future-memory check**
(:mod:`kvopt.futurememory`, the one shared implementation) passes for the
running jobs plus the ones added so far, and stop at the first that fails.  The
check can pass between events — a job started one round later holds one token
less in every future round — so after each scan the policy computes the first
round at which the first waiting job would pass if nothing else happened
(:func:`~kvopt.futurememory.next_fit_round`) and wakes up then: the schedule is
the per-round one without a call per round.  Orders (ties by job index):

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

Online: a job's prompt, length and priority are read from the
:class:`~kvopt.engine.ClairvoyantView` when it arrives (SPEC §1: with arrivals
these policies see a job only from ``a_i`` on).

**Predictions stay predictions** (SPEC §10.1).  Order, admission and the estimates
of running jobs read ``view.predicted`` (the true length only where the instance
gives no prediction) and what the engine shows every policy: prompts, arrivals,
running attempts' progress, and a length once its job completes.  Two instances that
differ only in true responses give the same decisions up to the first completion.

**Admission** (``admission=``, SPEC §10.1):

* ``future`` (the default) — the exact future-memory check above;
* ``vllm`` — what vLLM does: in priority order, admit while the memory held in the
  current round plus ``s_i + 1`` fits in ``M`` (an empty system always admits its
  head) and the batch cap allows; stop at the first that does not.  On overflow the
  most recently started attempt is preempted (ties: later in the policy's order) and
  waits again under its priority, as ``fcfs`` does (SPEC §6.3).  It may kill, so an
  object built with it declares ``kills = True``.

**Batch cap** (``max_batch``, SPEC §10.1): either scan also stops while ``B``
attempts run; a completion frees a slot and calls the policy again, so no wake-up is
needed while the batch is full.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Sequence

from ..engine.contract import (
    ARRIVAL,
    COMPLETION,
    EXPIRY,
    OVERFLOW,
    Actions,
    ClairvoyantPolicy,
    ClairvoyantView,
    Event,
    View,
)
from ..errors import InputError
from ..futurememory import RunningSet, next_fit_round_sorted, peak_sorted

#: The values of ``admission=`` (SPEC §10.1).
ADMISSIONS = ("future", "vllm")


def check_admission(admission: str) -> str:
    """``admission`` if it is one of :data:`ADMISSIONS`; else :class:`InputError`."""
    if admission not in ADMISSIONS:
        raise InputError(
            f"must be one of {', '.join(ADMISSIONS)}, got {admission!r}",
            source="--param admission",
        )
    return admission


class FutureCheckGreedy(ClairvoyantPolicy):
    """Priority-ordered admission under the exact future-memory check (stop at first failure).

    Subclasses define :meth:`priority` (a sortable key of an arrived job) and
    :meth:`length` (the length the check uses), both read from the view when
    the job arrives.
    """

    name = "future-check"
    kills = False  # exact future-memory admission: memory never overflows
    # ... with the true lengths; planned with a predicted_response shorter than the truth,
    # memory may overflow, and the newest attempt is killed (SPEC §6.2 admission, §6.3 rule)
    kills_when_mispredicted = True
    #: plans with ``predicted_response``, decides from it alone (SPEC §10.1)
    predictions = True

    def __init__(self, admission: str = "future") -> None:
        self.admission = check_admission(admission)
        self.params: dict = {"admission": self.admission}
        if self.admission == "vllm":  # preempts on overflow (SPEC §6.3)
            self.kills = True

    # -- to override ---------------------------------------------------------
    def priority(self, view: ClairvoyantView, j: int):  # pragma: no cover - abstract
        raise NotImplementedError

    def length(self, view: ClairvoyantView, j: int) -> int:
        """Length the check uses: predicted when the instance has it, else true."""
        return view.predicted[j]

    # -- engine hooks --------------------------------------------------------
    def setup(self, view: ClairvoyantView) -> None:
        self.M = view.memory
        self.prompts: dict[int, int] = {}
        self.est: dict[int, int] = {}
        self.key: dict[int, tuple] = {}
        self.waiting: list = []  # a heap of (priority, job): the policy's order, ties by index
        self.woken_at = -1  # the last wake-up asked for
        self.running = RunningSet()  # the running jobs by expected last round (the check's)
        for j in view.jobs:
            self._arrive(j, view)

    def _arrive(self, j: int, view: ClairvoyantView) -> None:
        if j not in self.key:
            self.prompts[j] = view.prompts[j]
            self.est[j] = self.length(view, j)
            self.key[j] = (self.priority(view, j), j)
            heapq.heappush(self.waiting, self.key[j])

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        overflow = False
        for e in events:
            if e.kind == ARRIVAL:
                self._arrive(e.job, view)  # type: ignore[arg-type]
            elif e.kind == OVERFLOW:
                overflow = True
            elif e.kind == COMPLETION or e.kind == EXPIRY:
                self.running.remove(e.job)
        if overflow:
            self._resolve_overflow(view, act)
        self._admit(now, view, act)

    def _resolve_overflow(self, view: View, act: Actions) -> None:
        while view.memory_now() > self.M:
            victim = max(view.running, key=lambda j: (view.running[j], self.key[j]))
            act.kill(victim)
            self.running.remove(victim)
            heapq.heappush(self.waiting, self.key[victim])

    def _admit(self, now: int, view: View, act: Actions) -> None:
        if self.admission == "vllm":
            self._admit_vllm(view, act)
        else:
            self._admit_future(now, view, act)

    def _admit_vllm(self, view: View, act: Actions) -> None:
        """vLLM's admission (module docstring): memory held now plus ``s_i + 1``, the cap."""
        rs, M, prompts, est, waiting = self.running, self.M, self.prompts, self.est, self.waiting
        now = view.now
        used = view.memory_now()
        while waiting and view.has_slot():
            j = waiting[0][1]
            need = prompts[j] + 1
            if used + need > M and view.running:  # an empty system admits its head
                break
            act.start(j)
            rs.add(j, prompts[j], now, est[j])
            heapq.heappop(waiting)
            used += need

    def _admit_future(self, now: int, view: View, act: Actions) -> None:
        """The scan: the exact check (:func:`~kvopt.futurememory.peak_sorted`) over the
        running set in its kept order plus each candidate inserted in its place."""
        rs, M, prompts, est = self.running, self.M, self.prompts, self.est
        waiting = self.waiting
        while waiting:  # the waiting jobs in the policy's order, stop at the first that fails
            if not view.has_slot():  # the batch cap: a completion will call again
                return
            j = waiting[0][1]
            s, e = prompts[j], est[j]
            if rs.Ls:
                L, c = now + e - 1, s + 1 - now  # starting now: holds c + τ up to round L
                i = bisect_right(rs.Ls, L)
                rs.Ls.insert(i, L)
                rs.cs.insert(i, c)
                fits = peak_sorted(rs.Ls, rs.cs, now) <= M
                del rs.Ls[i], rs.cs[i]
                if not fits:
                    break
            # else nothing running: start it even if its estimated peak exceeds M (its
            # true peak s + o ≤ M fits), as the check would for a fitting one
            act.start(j)
            rs.add(j, s, now, e)
            heapq.heappop(waiting)
        if waiting and view.running:
            self._wake_when_fits(now, view, act)

    def _wake_when_fits(self, now: int, view: View, act: Actions) -> None:
        """Wake up at the first round at which the first waiting job passes the check.

        Until the next event the running set only ages, and the scan stops at the
        first waiting job, so the per-round rule (SPEC §6) changes nothing before
        that round; an event before it calls the policy anyway (and the wake-up
        then merely repeats the scan).
        """
        j = self.waiting[0][1]
        rs = self.running
        u = next_fit_round_sorted(self.M, rs.Ls, rs.cs, now, self.prompts[j], self.est[j])
        if u is not None and u != self.woken_at:
            self.woken_at = u
            act.wake(u)


class MCSF(FutureCheckGreedy):
    """MC-SF: ascending (predicted) response length, exact future-memory check."""

    name = "mcsf"

    def priority(self, view: ClairvoyantView, j: int):
        return view.predicted[j]


class MCBenchmark(FutureCheckGreedy):
    """MC-Benchmark: arrival order (ties by job index), exact future-memory check."""

    name = "mc-benchmark"

    def priority(self, view: ClairvoyantView, j: int):
        return view.arrival(j)
