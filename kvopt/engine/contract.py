"""The contract between the engine and a policy: what a policy sees and what it may do.

A policy module imports this module only, never the event loop that runs it
(:mod:`kvopt.engine.core`).

**Events** (:data:`EVENT_KINDS`; :class:`Event`):

* ``completion`` — an attempt ran ``o_i`` rounds; the job's response length is
  revealed (``view.response(i)``) and the event's ``info`` is ``o_i``;
* ``expiry``     — an attempt reached the cap its policy gave it (``info`` = rounds);
  the engine ends it (this is the policy's own decision, not a repair);
* ``arrival``    — round ``a_i`` is reached; job ``i`` becomes visible;
* ``wake``       — a wake-up the policy asked for with ``act.wake(t)``;
* ``overflow``   — the running set would hold more than ``M`` in this round
  (memory grows by one per running job per round, so the first such round is
  computed exactly after every decision); the policy must kill attempts now.

At one event time a policy is called once with the events in the order
*completions (by job index), expiries (by job index), arrivals (by job index),
one wake, one overflow* (SPEC §6.1; see :mod:`kvopt.engine.core`).

**What a policy may know (SPEC §1), enforced by the types.**  A job — its
index, its prompt, its existence — becomes visible when its arrival round is
reached; before that nothing of it is in the view, and with arrivals the total
number of jobs is not visible either.  A non-clairvoyant policy
(:class:`BlindPolicy`) receives a :class:`View`: ``memory``, ``n`` (the number
of jobs visible *so far*; without arrivals the instance's ``n``), the visible
jobs (``jobs``, ``arrival(j)``, ``prompts[j]``), the running attempts (start,
cap, hence progress) and the response length of *finished* jobs.  The view is
filled by the engine on each arrival and completion and simply does not hold
anything else: ``view.prompts[j]`` of a job that has not arrived raises
:class:`~kvopt.errors.PolicyError` (naming the job and the round), and
``view.prompts`` has no length and cannot be iterated (iterate ``view.jobs``).
A clairvoyant policy (:class:`ClairvoyantPolicy`) receives a
:class:`ClairvoyantView`, which adds ``responses[j]`` and ``predicted[j]`` for
*arrived* jobs, with the same guard, and ``instance`` — the whole
:class:`~kvopt.instance.Instance` — only when every job is visible at round 0
(no arrivals, no adversary).  Nothing reachable through the attributes of a
view or of the actions object holds data of a job that has not arrived (only
interpreter introspection of the engine's frame could reach it).

**What a policy may do.**  Decisions go through an :class:`Actions` object:
``start(job, cap=None)``, ``kill(job)``, ``wake(time)``; the engine refuses
every decision that breaks a rule (:mod:`kvopt.engine.core`).  After the run,
:meth:`Policy.report` may run sub-policies alone (:attr:`Policy.run_alone`).

**Adversaries** (:class:`Adversary`) see each call's decisions and may release
new jobs at future rounds; released jobs are invisible until their arrival
like any other job.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ..errors import PolicyError
from ..instance import Instance

COMPLETION, EXPIRY, ARRIVAL, WAKE, OVERFLOW = 0, 1, 2, 3, 4
COMPLETION, EXPIRY, ARRIVAL, WAKE, OVERFLOW = 0, 1, 2, 3, 4
EVENT_KINDS = ("completion", "expiry", "arrival", "wake", "overflow")


class Event(NamedTuple):
    """One event at ``time``: ``kind`` (index into :data:`EVENT_KINDS`), ``job`` (−1 if none).

    ``info`` is the attempt's number of rounds for completions and expiries, else 0.
    """

    time: int
    kind: int
    job: int
    info: int = 0

    @property
    def kind_name(self) -> str:
        return EVENT_KINDS[self.kind]


# ---------------------------------------------------------------------------
# The view a policy sees


class VisibleData:
    """Per-job data of the *visible* (arrived) jobs, read as ``data[j]`` (SPEC §1 visibility).

    ``view.prompts`` of every view, and ``view.responses`` / ``view.predicted`` of a
    :class:`ClairvoyantView`, are of this type.  ``data[j]`` returns the value (an
    ``int``) for a job that has arrived and raises :class:`~kvopt.errors.PolicyError`
    naming the job and the round for any other index — a job that has not arrived
    yet and an index that is no job at all are indistinguishable.  It holds the
    values of arrived jobs only (the engine adds a job's value on its arrival), and
    it is deliberately not a sequence: ``len`` and iteration raise, since they would
    reveal the number of jobs; iterate :attr:`View.jobs` instead.  ``j in data``
    tells whether job ``j`` is visible.
    """

    __slots__ = ("_d", "_view", "_what")

    def __init__(self, view: View, what: str):
        self._d: dict[int, int] = {}
        self._view = view
        self._what = what

    def __getitem__(self, job: int) -> int:
        try:
            return self._d[job]
        except KeyError:
            raise PolicyError(
                f"{self._what} of job {job} is not visible at round {self._view.now} "
                "(the job has not arrived)"
            ) from None

    def __contains__(self, job: object) -> bool:
        return job in self._d

    def __iter__(self):
        raise PolicyError(
            f"{self._what}: cannot iterate over jobs (that would reveal jobs that have not "
            "arrived); iterate view.jobs and index by job"
        )

    def __len__(self) -> int:
        raise PolicyError(
            f"{self._what}: has no length (the number of jobs is not visible); "
            "use view.n, the number of jobs visible so far"
        )

    def __repr__(self) -> str:
        return f"<{self._what} of {len(self._d)} visible job(s)>"


class View:
    """The state a policy may see (SPEC §1, non-clairvoyant information).

    * ``memory`` — the budget ``M``; ``max_batch`` — the batch cap ``B`` (SPEC §10.1:
      at most ``B`` attempts run in any round; ``None``: no cap), with
      :attr:`free_slots` and :meth:`has_slot` for an admission scan (the engine
      refuses a start beyond the cap);
    * ``n`` — the number of jobs **visible so far** (arrived by round ``now``).
      Without arrivals every job is visible at round 0 and ``n`` is the
      instance's ``n``; with arrivals the total number of jobs is not visible;
    * ``prompts[j]`` — the prompt length of a visible job (:class:`VisibleData`:
      raises :class:`~kvopt.errors.PolicyError` for any other index; no ``len``,
      no iteration);
    * ``now`` — the current round; ``jobs`` — the visible jobs in arrival order;
      ``arrival(j)`` — a visible job's arrival round;
    * ``running`` (job → start round), ``caps`` (job → cap or ``None``), and the
      finished jobs ``done`` (job → completion time) with their revealed response
      lengths (:meth:`response`).

    It holds no other response length and nothing of a job before its arrival:
    the engine adds a job (index, prompt, arrival) when its arrival round is
    reached.  Policies must treat it as read-only; the engine (or a slot host,
    see :mod:`kvopt.policy.blackbox`) updates it between calls, and at once for the
    policy's own decisions: after ``act.start(j)`` job ``j`` is in ``running`` and
    :meth:`memory_now` counts it, after ``act.kill(j)`` it is in neither.
    """

    __slots__ = (
        "memory",
        "max_batch",
        "n",
        "prompts",
        "now",
        "_ps",
        "_jobs",
        "_jobs_t",
        "_arrival",
        "_running",
        "_caps",
        "_done",
        "_revealed",
        "_C",
        "_K",
        "running",
        "caps",
        "done",
    )

    def __init__(self, memory: int, max_batch: int | None = None):
        self.memory = int(memory)
        self.max_batch = None if max_batch is None else int(max_batch)
        self.n = 0
        self.prompts = VisibleData(self, "prompt length")
        self._ps = self.prompts._d  # the engine's fast path to the visible prompts
        self.now = 0
        self._jobs: list[int] = []
        self._jobs_t: tuple[int, ...] | None = None
        self._arrival: dict[int, int] = {}
        self._running: dict[int, int] = {}
        self._caps: dict[int, int | None] = {}
        self._done: dict[int, int] = {}
        self._revealed: dict[int, int] = {}
        self._C = 0  # memory in round t of the running set is _C + _K * t
        self._K = 0
        self.running: Mapping[int, int] = MappingProxyType(self._running)
        self.caps: Mapping[int, int | None] = MappingProxyType(self._caps)
        self.done: Mapping[int, int] = MappingProxyType(self._done)

    # ---------------------------------------------------------------- reading
    @property
    def jobs(self) -> Sequence[int]:
        """Jobs visible so far (arrived), in arrival order (ties by job index)."""
        if self._jobs_t is None or len(self._jobs_t) != len(self._jobs):
            self._jobs_t = tuple(self._jobs)
        return self._jobs_t

    def arrival(self, job: int) -> int:
        """Arrival round of an arrived job."""
        try:
            return self._arrival[job]
        except KeyError:
            raise PolicyError(f"job {job} has not arrived by round {self.now}") from None

    def response(self, job: int) -> int:
        """Response length of a finished job (revealed by its completion)."""
        try:
            return self._revealed[job]
        except KeyError:
            raise PolicyError(
                f"response length of job {job} is not visible at round {self.now} "
                "(it is revealed when the job completes)"
            ) from None

    def is_done(self, job: int) -> bool:
        return job in self._done

    def is_running(self, job: int) -> bool:
        return job in self._running

    def progress(self, job: int) -> int:
        """Rounds the running attempt of ``job`` has completed by round ``now``."""
        return self.now - self._running[job]

    def unfinished(self) -> list[int]:
        """Visible jobs that are not finished, in arrival order."""
        d = self._done
        return [j for j in self._jobs if j not in d]

    def memory_at(self, t: int) -> int:
        """Memory the current running set holds in round ``t`` (if nothing changes)."""
        return self._C + self._K * t

    def memory_now(self) -> int:
        """Memory the current running set holds in round ``now``."""
        return self._C + self._K * self.now

    @property
    def n_running(self) -> int:
        """How many attempts are running."""
        return self._K

    @property
    def free_slots(self) -> int | None:
        """How many more attempts may start now under the batch cap (SPEC §10.1);
        ``None`` without a cap."""
        return None if self.max_batch is None else self.max_batch - self._K

    def has_slot(self) -> bool:
        """Whether one more attempt may start now (always, without a batch cap)."""
        return self.max_batch is None or self._K < self.max_batch

    # ------------------------------------------------------- updates (engine)
    def _arrive(self, job: int, t: int, prompt: int) -> None:
        self._jobs.append(job)
        self._arrival[job] = t
        self._ps[job] = prompt
        self.n += 1

    def _start(self, job: int, t: int, cap: int | None) -> None:
        self._running[job] = t
        self._caps[job] = cap
        self._C += self._ps[job] + 1 - t
        self._K += 1

    def _stop(self, job: int) -> int:
        start = self._running.pop(job)
        del self._caps[job]
        self._C -= self._ps[job] + 1 - start
        self._K -= 1
        return start

    def _finish(self, job: int, t: int, response: int) -> None:
        self._stop(job)
        self._done[job] = t
        self._revealed[job] = response


class ClairvoyantView(View):
    """What a clairvoyant policy sees: a :class:`View` plus the lengths of *arrived* jobs.

    * ``responses[j]`` — the true response length ``o_j`` of a visible job;
    * ``predicted[j]`` — its ``predicted_response`` where the instance gives one,
      else ``o_j`` (what prediction-based policies use);
    * ``intervals[j]`` — its ``predicted_interval`` ``(lo, hi)`` where given, else
      ``(predicted[j], predicted[j])`` (:attr:`Instance.intervals`; issue 69).  The engine
      passes it on arrival when it does; otherwise it is read from the whole instance
      when that is visible at round 0, and is the point ``predicted[j]`` when it is not;

    both :class:`VisibleData` with the same guard as ``prompts`` (SPEC §1: online
    clairvoyant policies such as ``mcsf`` with arrivals still see a job only from
    ``a_j`` on).  :attr:`instance` is the whole :class:`~kvopt.instance.Instance`,
    available only when every job is visible at round 0 (no arrivals, no
    adversary): the offline clairvoyant policies (restricted to such instances by
    their registry ``check``) may plan with it.
    """

    __slots__ = ("responses", "predicted", "intervals", "_rs", "_pr", "_iv", "_instance")

    def __init__(self, memory: int, instance: Instance | None = None, max_batch: int | None = None):
        super().__init__(memory, max_batch)
        self.responses = VisibleData(self, "response length")
        self.predicted = VisibleData(self, "predicted response length")
        self._rs = self.responses._d
        self._pr = self.predicted._d
        self.intervals = VisibleData(self, "predicted interval")
        self._iv = self.intervals._d
        self._instance = instance

    @property
    def instance(self) -> Instance:
        """The whole instance; :class:`~kvopt.errors.PolicyError` unless all jobs are visible
        at round 0 (an instance without arrivals, simulated without an adversary)."""
        if self._instance is None:
            raise PolicyError(
                f"the whole instance is not visible at round {self.now}: jobs arrive over "
                "time (arrivals or an adversary), so a policy sees each job only from its "
                "arrival on (view.jobs, view.prompts/responses/predicted[j])"
            )
        return self._instance

    def _arrive_c(
        self, job: int, t: int, prompt: int, response: int, predicted: int,
        interval: tuple[int, int] | None = None,
    ) -> None:  # fmt: skip
        self._jobs.append(job)
        self._arrival[job] = t
        self._ps[job] = prompt
        self._rs[job] = response
        self._pr[job] = predicted
        if interval is None:
            whole = self._instance
            interval = whole.intervals[job] if whole is not None else (predicted, predicted)
        self._iv[job] = interval
        self.n += 1


# ---------------------------------------------------------------------------
# Policies


class Actions(ABC):
    """The decisions a policy can make at the current event time."""

    @abstractmethod
    def start(self, job: int, cap: int | None = None) -> None:
        """Start an attempt of ``job`` now; it ends by itself after ``cap`` rounds (if given)."""

    @abstractmethod
    def kill(self, job: int) -> None:
        """Kill the running attempt of ``job`` now (its progress is lost)."""

    @abstractmethod
    def wake(self, time: int) -> None:
        """Ask to be called again at round ``time`` (> now)."""


#: ``run_alone(instance, policy)`` → the completion times (by job of ``instance``) of the
#: policy object run alone on ``instance`` by the engine, without instrumentation.
RunAlone = Callable[[Instance, "Policy"], Sequence[int]]


class Policy(ABC):
    """Common part of both policy kinds (:class:`BlindPolicy`, :class:`ClairvoyantPolicy`).

    ``name`` is used in error messages; ``instrument`` is set by the engine when
    instrumentation was requested (policies may then record extra data and
    return it from :meth:`report`).  Before it calls :meth:`report`, the engine
    also sets ``run_alone`` (:data:`RunAlone`), so instrumentation that compares
    with isolated runs of sub-policies (Route's and the black box's per-job
    bounds) runs them without importing the engine.
    """

    name: str = "policy"
    clairvoyant: bool = False
    instrument: bool = False
    run_alone: RunAlone | None = None

    @abstractmethod
    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        """React to the events at round ``now`` (see the module docstring for their order)."""

    def report(self, instance: Instance) -> Mapping[str, Any] | None:
        """Instrumentation after the run (the run is over, so the final instance may be used)."""
        return None


class BlindPolicy(Policy):
    """A non-clairvoyant policy: it only ever sees a :class:`View`."""

    clairvoyant = False

    def setup(self, view: View) -> None:  # noqa: B027 - optional hook
        """Called once at round 0, after the jobs arriving at 0 became visible."""


class ClairvoyantPolicy(Policy):
    """A clairvoyant policy: it sees a :class:`ClairvoyantView` (lengths of arrived jobs).

    ``on_events`` receives the same :class:`ClairvoyantView` as ``setup``.  An
    online clairvoyant policy learns each job's data on its arrival event
    (``view.prompts[j]``, ``view.responses[j]``, ``view.predicted[j]``); an
    offline one may plan with ``view.instance`` (instances without arrivals only).
    """

    clairvoyant = True

    def setup(self, view: ClairvoyantView) -> None:  # noqa: B027 - optional hook
        """Called once at round 0, after the jobs arriving at 0 became visible."""


# ---------------------------------------------------------------------------
# Hints for a user's policy that raised (kvopt.errors.UserCodeError)


def _public(obj: object) -> str:
    names = sorted({n for n in dir(type(obj)) if not n.startswith("_")})
    return ", ".join(names)


def contract_hint(exc: BaseException, policy: Policy | None = None) -> str | None:
    """The rule of this contract behind ``exc``, raised by a user's policy, or ``None``.

    An attribute a view, the actions object or an event does not have is the usual case:
    a :class:`BlindPolicy` reading ``view.responses`` is told that it never sees them
    (see :class:`ClairvoyantPolicy`); otherwise the names the object has are listed.
    """
    if isinstance(exc, AttributeError):
        obj, name = getattr(exc, "obj", None), getattr(exc, "name", None)
        if isinstance(obj, View) and not isinstance(obj, ClairvoyantView):
            if name in ("responses", "predicted", "instance"):
                return (
                    f"a BlindPolicy never sees response lengths: its View has no {name!r} "
                    "(view.response(j) gives a job's length once it has finished); a policy "
                    "that reads view.responses[j] must subclass kvopt.ClairvoyantPolicy, "
                    "see SPEC §1 and kvopt.engine.contract"
                )
            return f"a View has: {_public(obj)} (kvopt.engine.contract.View)"
        if isinstance(obj, View):
            return f"a ClairvoyantView has: {_public(obj)} (kvopt.engine.contract)"
        if isinstance(obj, Actions):
            return "the actions object has start(job, cap=None), kill(job) and wake(time) only"
        if isinstance(obj, Event):
            return "an event has time, kind, job, info and kind_name (kvopt.engine.contract)"
    if isinstance(exc, TypeError) and "on_events()" in str(exc):
        return "the engine calls on_events(self, now, events, view, act) (kvopt.engine.contract)"
    return None


# ---------------------------------------------------------------------------
# Adversaries

#: ``release(prompt, response, arrival, id=None, predicted_response=None) -> job index``
Release = Callable[..., int]


@runtime_checkable
class Adversary(Protocol):
    """An adaptive adversary that releases jobs in reaction to the policy's decisions.

    ``setup(instance)`` is called once before round 0 with the input instance.
    After every policy call at round ``now`` the engine calls
    ``on_decisions(now, starts, kills, release, events)``: ``starts`` and
    ``kills`` are the job indices started / killed in that call (in decision
    order), ``events`` the events the policy was called with.  ``release(prompt,
    response, arrival, id=None, predicted_response=None)`` appends a job (its
    index is the next free one) arriving at round ``arrival > now``; it is
    invisible to the policy until then, like any other job.  A release with
    ``arrival <= now``, a job that does not fit (``prompt + response > M``) or
    any other invalid field raises :class:`~kvopt.errors.InputError`; so does
    a release after the run ended.  The run ends when every known job is
    finished (after the adversary's call for that round).
    """

    def setup(self, instance: Instance) -> None: ...

    def on_decisions(
        self,
        now: int,
        starts: Sequence[int],
        kills: Sequence[int],
        release: Release,
        events: Sequence[Event],
    ) -> None: ...


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
    "View",
    "VisibleData",
    "contract_hint",
]
