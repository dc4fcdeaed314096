"""Event-driven simulation of scheduling policies (SPEC §1, §6), with enforced visibility.

The engine never loops over rounds.  It keeps a heap of future events and jumps
from one event time to the next.  Event kinds (:data:`EVENT_KINDS`):

* ``completion`` — an attempt ran ``o_i`` rounds; the job's response length is
  revealed (``view.response(i)``) and the event's ``info`` is ``o_i``;
* ``expiry``     — an attempt reached the cap its policy gave it (``info`` = rounds);
  the engine ends it (this is the policy's own decision, not a repair);
* ``arrival``    — round ``a_i`` is reached; job ``i`` becomes visible;
* ``wake``       — a wake-up the policy asked for with ``act.wake(t)``;
* ``overflow``   — the running set would hold more than ``M`` in this round
  (memory grows by one per running job per round, so the first such round is
  computed exactly after every decision); the policy must kill attempts now.

**Order of simultaneous events** (fixed, documented, SPEC §6.1): at an event
time ``t`` the engine first ends every attempt that completes or expires at
``t`` and registers every arrival at ``t``; then it calls the policy once with
the list of events in the order *completions (by job index), expiries (by job
index), arrivals (by job index), one wake, one overflow*.  A policy that wants
"one event at a time" semantics (Rect) walks the list in that order.  The policy
is always called at time 0 (possibly with an empty list) and otherwise only when
there is at least one event.

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

**What the engine enforces.**  Decisions go through an :class:`Actions` object:
``start(job, cap=None)``, ``kill(job)``, ``wake(time)``.  Starting a job that
is not visible (not arrived, or no job at all), is finished or already running,
killing a job that is not running (or in the round it started), a cap < 1, a
wake-up in the past, a decision after which the running set exceeds ``M`` in
the current round, and a policy that stops while jobs are unfinished all raise
:class:`~kvopt.errors.PolicyError` naming the policy, the job and the round.
A policy cannot probe with bad decisions: once a decision was refused the run
fails, even if the policy catches the error.  Nothing is repaired silently.
Every schedule is re-checked by :func:`kvopt.schedule.checked` before it is
returned.

**Adversaries.**  ``simulate(..., adversary=A)`` runs an adaptive adversary
(:class:`Adversary`) beside the policy: after every policy call it sees the
decisions of that call and may release new jobs at *future* rounds; the job set
grows during the run, and released jobs are invisible until their arrival like
any other job.  :attr:`SimulationResult.instance` is the final instance (input
jobs and released jobs), which replays as a normal instance.
"""

from __future__ import annotations

import gc
import heapq
import time as _time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from .errors import InputError, PolicyError
from .instance import Instance, Job
from .schedule import Attempt, Schedule, checked

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

    * ``memory`` — the budget ``M``;
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
    see :mod:`kvopt.policy.blackbox`) updates it between calls.
    """

    __slots__ = (
        "memory",
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

    def __init__(self, memory: int):
        self.memory = int(memory)
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
        return self._C + self._K * self.now

    @property
    def n_running(self) -> int:
        return self._K

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

    both :class:`VisibleData` with the same guard as ``prompts`` (SPEC §1: online
    clairvoyant policies such as ``mcsf`` with arrivals still see a job only from
    ``a_j`` on).  :attr:`instance` is the whole :class:`~kvopt.instance.Instance`,
    available only when every job is visible at round 0 (no arrivals, no
    adversary): the offline clairvoyant policies (restricted to such instances by
    their registry ``check``) may plan with it.
    """

    __slots__ = ("responses", "predicted", "_rs", "_pr", "_instance")

    def __init__(self, memory: int, instance: Instance | None = None):
        super().__init__(memory)
        self.responses = VisibleData(self, "response length")
        self.predicted = VisibleData(self, "predicted response length")
        self._rs = self.responses._d
        self._pr = self.predicted._d
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

    def _arrive_c(self, job: int, t: int, prompt: int, response: int, predicted: int) -> None:
        self._jobs.append(job)
        self._arrival[job] = t
        self._ps[job] = prompt
        self._rs[job] = response
        self._pr[job] = predicted
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


class _Policy(ABC):
    """Common part of both policy kinds.

    ``name`` is used in error messages; ``instrument`` is set by the engine when
    instrumentation was requested (policies may then record extra data and
    return it from :meth:`report`).
    """

    name: str = "policy"
    clairvoyant: bool = False
    instrument: bool = False

    @abstractmethod
    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        """React to the events at round ``now`` (see the module docstring for their order)."""

    def report(self, instance: Instance) -> Mapping[str, Any] | None:
        """Instrumentation after the run (the run is over, so the final instance may be used)."""
        return None


class BlindPolicy(_Policy):
    """A non-clairvoyant policy: it only ever sees a :class:`View`."""

    clairvoyant = False

    def setup(self, view: View) -> None:  # noqa: B027 - optional hook
        """Called once at round 0, after the jobs arriving at 0 became visible."""


class ClairvoyantPolicy(_Policy):
    """A clairvoyant policy: it sees a :class:`ClairvoyantView` (lengths of arrived jobs).

    ``on_events`` receives the same :class:`ClairvoyantView` as ``setup``.  An
    online clairvoyant policy learns each job's data on its arrival event
    (``view.prompts[j]``, ``view.responses[j]``, ``view.predicted[j]``); an
    offline one may plan with ``view.instance`` (instances without arrivals only).
    """

    clairvoyant = True

    def setup(self, view: ClairvoyantView) -> None:  # noqa: B027 - optional hook
        """Called once at round 0, after the jobs arriving at 0 became visible."""


Policy = BlindPolicy | ClairvoyantPolicy


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


# ---------------------------------------------------------------------------
# Results


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
    """What :func:`simulate` returns; ``schedule`` has passed :func:`~kvopt.schedule.checked`.

    ``trace`` (when requested) is a tuple of ``(time, what, job, info)`` rows:
    events (``what`` = event kind) and decisions (``start`` with ``info`` = cap or
    −1, ``kill`` with ``info`` = rounds run).  ``instrumentation`` is whatever the
    policy reported (see each policy's docstring), else ``None``.  ``instance`` is
    the final instance: the input itself, or — with an adversary — the input jobs
    followed by the released jobs (with their arrivals), against which the
    schedule was checked; it replays as a normal instance.
    """

    policy: str
    params: Mapping[str, Any]
    schedule: Schedule
    objective: Mapping[str, int]
    stats: Stats
    completion_times: tuple[int, ...]
    trace: tuple[tuple[int, str, int, int], ...] | None = None
    instrumentation: Mapping[str, Any] | None = field(default=None, compare=False)
    instance: Instance | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        o = self.objective
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
            "objective": dict(self.objective),
            "schedule": self.schedule.to_dict(n if n is not None else len(self.completion_times)),
            "stats": self.stats.to_dict(),
        }


# ---------------------------------------------------------------------------
# The engine


class _EngineActions(Actions):
    """Validates each decision at once against the view and logs it for the engine.

    It holds only the view (nothing of unarrived jobs, no response lengths of
    unfinished ones) and a log, so a policy reaches no hidden data through it.
    It cannot tell "not arrived yet" from "no such job" (the engine words the
    final error), and the first refused decision fails the run even if the
    policy catches the error, so refusals cannot be used to probe.
    """

    __slots__ = ("_view", "_pname", "_log", "_refused", "_unseen")

    def __init__(self, view: View, pname: str):
        self._view = view
        self._pname = pname
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


def _is_int(x: Any) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)


class _Engine:
    def __init__(
        self, instance: Instance, policy: _Policy, trace: bool, adversary: Adversary | None
    ):
        self.inst = instance
        self.policy = policy
        self.pname = getattr(policy, "name", type(policy).__name__)
        self.M = instance.memory
        # per-job data, growable (an adversary appends released jobs)
        self.resp: list[int] = instance.responses.tolist()
        self.prom: list[int] = instance.prompts.tolist()
        self.pred: list[int] = instance.predicted.tolist()
        self.arrq = [(a, j) for j, a in enumerate(instance.arrivals.tolist())]
        heapq.heapify(self.arrq)
        self.adversary = adversary
        self.released: list[Job] = []
        self.ids = {j.id for j in instance.jobs if j.id is not None} if adversary else set()
        self.now = 0
        self.ended = False
        if policy.clairvoyant:
            whole = instance if adversary is None and not instance.has_arrivals else None
            self.view: View = ClairvoyantView(instance.memory, whole)
        else:
            self.view = View(instance.memory)
        self.heap: list[tuple[int, int, int, int]] = []
        self.seq: dict[int, int] = {}
        self.counter = 0
        self.attempts: list[Attempt] = []
        self.trace: list[tuple[int, str, int, int]] | None = [] if trace else None
        self.n_events = 0

    def _err(self, t: int, msg: str, job: int | None = None) -> PolicyError:
        where = f"job {job}, round {t}" if job is not None else f"round {t}"
        return PolicyError(f"policy {self.pname!r}: {where}: {msg}")

    def _refusal(self, act: _EngineActions) -> PolicyError:
        """The error of the first refused decision, worded with what the engine knows."""
        err = act._refused
        assert err is not None
        j = act._unseen
        if j is None:
            return err
        if j < len(self.resp):
            return self._err(self.view.now, "started before its arrival", j)
        return self._err(self.view.now, f"start of unknown job {j}")

    # --- adversary -----------------------------------------------------------
    def release(
        self,
        prompt: int,
        response: int,
        arrival: int,
        id: str | int | None = None,
        predicted_response: int | None = None,
    ) -> int:
        """Append a job arriving at ``arrival > now`` (the adversary's ``release``)."""
        name = getattr(self.adversary, "name", type(self.adversary).__name__)
        where = f"adversary {name!r}, release at round {self.now}"
        if self.ended:
            raise InputError("the run has ended; no job can be released any more", source=where)
        for key, value, low in (
            ("prompt", prompt, 1),
            ("response", response, 1),
            ("arrival", arrival, 0),
            ("predicted_response", 1 if predicted_response is None else predicted_response, 1),
        ):
            if not _is_int(value) or value < low:
                raise InputError(
                    f"must be an integer >= {low}, got {value!r}", field=key, source=where
                )
        prompt, response, arrival = int(prompt), int(response), int(arrival)
        if arrival <= self.now:
            raise InputError(
                f"must be after the current round {self.now} (a release is for a future "
                f"round), got {arrival}",
                field="arrival",
                source=where,
            )
        if prompt + response > self.M:
            raise InputError(
                f"prompt + response = {prompt} + {response} = {prompt + response} exceeds memory {self.M}",
                field="prompt",
                source=where,
            )
        if id is not None:
            if not (isinstance(id, str) or _is_int(id)) or id in self.ids:
                raise InputError(
                    f"must be a new string or integer, got {id!r}", field="id", source=where
                )
            self.ids.add(id)
        pr = None if predicted_response is None else int(predicted_response)
        j = len(self.resp)
        self.released.append(Job(prompt, response, arrival, id, pr))
        self.resp.append(response)
        self.prom.append(prompt)
        self.pred.append(response if pr is None else pr)
        heapq.heappush(self.arrq, (arrival, j))
        return j

    def final_instance(self) -> Instance:
        if not self.released:
            return self.inst
        meta = dict(self.inst.meta)
        meta["adversary"] = str(getattr(self.adversary, "name", type(self.adversary).__name__))
        meta["released"] = len(self.released)
        return Instance(
            self.inst.memory, self.inst.jobs + tuple(self.released), name=self.inst.name, meta=meta
        )

    def _apply(self, t: int, log: list[tuple[int, int, int]]) -> int | None:
        """Turn the logged decisions into heap events and attempts; return the last started job."""
        heap, seq, resp, trace = self.heap, self.seq, self.resp, self.trace
        last = None
        for what, a, b in log:
            if what == 0:  # start job a with cap b (-1: none)
                self.counter += 1
                seq[a] = self.counter
                o = resp[a]
                if b < 0 or o <= b:
                    heapq.heappush(heap, (t + o, COMPLETION, a, self.counter))
                else:
                    heapq.heappush(heap, (t + b, EXPIRY, a, self.counter))
                last = a
                if trace is not None:
                    trace.append((t, "start", a, b))
            elif what == 1:  # kill job a that started at b
                del seq[a]
                self.attempts.append(Attempt(a, b, t - b, False))
                if trace is not None:
                    trace.append((t, "kill", a, t - b))
            else:
                heapq.heappush(heap, (a, WAKE, -1, 0))
        log.clear()
        return last

    # --- main loop ---------------------------------------------------------
    def run(self) -> int:
        v, heap, resp, prom, pred, arrq = (
            self.view,
            self.heap,
            self.resp,
            self.prom,
            self.pred,
            self.arrq,
        )
        M = self.M
        policy = self.policy
        clair = bool(policy.clairvoyant)
        adversary = self.adversary
        act = _EngineActions(v, self.pname)
        log = act._log
        trace = self.trace
        n_events = 0
        n_times = 0
        t = 0
        first = True
        while True:
            events: list[Event] = []
            has_wake = False
            while heap and heap[0][0] == t:
                _, kind, job, sq = heapq.heappop(heap)
                if kind == WAKE:
                    has_wake = True
                elif kind == OVERFLOW:
                    pass  # an engine-internal wake-up; overflow is re-evaluated below
                elif self.seq.get(job) == sq:
                    start = v._running[job]
                    del self.seq[job]
                    if kind == COMPLETION:
                        v._finish(job, t, resp[job])
                        self.attempts.append(Attempt(job, start, resp[job], True))
                        events.append(Event(t, COMPLETION, job, resp[job]))
                    else:
                        v._stop(job)
                        self.attempts.append(Attempt(job, start, t - start, False))
                        events.append(Event(t, EXPIRY, job, t - start))
            while arrq and arrq[0][0] == t:
                j = heapq.heappop(arrq)[1]
                if clair:
                    v._arrive_c(j, t, prom[j], resp[j], pred[j])  # type: ignore[attr-defined]
                else:
                    v._arrive(j, t, prom[j])
                events.append(Event(t, ARRIVAL, j))
            if len(events) > 1:
                events.sort(key=_event_key)
            if has_wake:
                events.append(Event(t, WAKE, -1))
            if v._K and v._C + v._K * t > M:
                events.append(Event(t, OVERFLOW, -1))
            if trace is not None:
                trace.extend((t, EVENT_KINDS[e.kind], e.job, e.info) for e in events)
            v.now = t
            called = first or bool(events)  # stale internal wake-ups do not call the policy
            if called:
                try:
                    if first:
                        first = False
                        policy.setup(v)  # type: ignore[call-arg]
                    policy.on_events(t, events, v, act)
                except PolicyError as err:
                    if act._refused is err:
                        raise self._refusal(act) from None
                    raise
                if act._refused is not None:  # the policy caught a refusal and went on
                    raise self._refusal(act)
                n_times += 1
            n_events += len(events)
            if adversary is not None and called:
                starts = [a for w, a, _ in log if w == 0]
                kills = [a for w, a, _ in log if w == 1]
            culprit = self._apply(t, log) if log else None
            log_started = culprit is not None
            # the decision must leave round t within memory
            if v._K and v._C + v._K * t > M:
                if culprit is None:  # name the most recently started running attempt
                    culprit = max(v._running, key=lambda j: (v._running[j], j))
                raise self._err(
                    t,
                    f"running attempts hold {v._C + v._K * t} > memory {M}"
                    + (" after this start" if log_started else " (overflow not resolved)"),
                    culprit,
                )
            if adversary is not None and called:
                self.now = t
                adversary.on_decisions(t, starts, kills, self.release, events)
            n = len(resp)
            if len(v._done) == n:
                break
            if v._K:  # first future round in which the running set overflows
                t_over = (M - v._C) // v._K + 1
                if not heap or t_over < heap[0][0]:
                    heapq.heappush(heap, (t_over, OVERFLOW, -1, 0))
            nxt = heap[0][0] if heap else None
            if arrq and (nxt is None or arrq[0][0] < nxt):
                nxt = arrq[0][0]
            if nxt is None:
                left = n - len(v._done)
                raise self._err(
                    t,
                    f"stalled: {left} unfinished job(s), nothing running and no wake-up "
                    f"(e.g. job {next(j for j in range(n) if j not in v._done)})",
                )
            t = nxt
        self.ended = True
        self.n_events = n_events
        return n_times


def _event_key(e: Event) -> tuple[int, int]:
    return (e.kind, e.job)


def _check_admits_releases(spec: Any, instance: Instance, params: Mapping[str, Any] | None) -> None:
    """With an adversary, refuse at once a policy whose class excludes later arrivals.

    The probe is the instance plus a copy of its first job arriving after every
    job: it breaks no per-job rule the instance satisfies, only "no arrivals".
    (Run anyway, an offline policy would not see released jobs at all.)
    """
    j0 = instance.jobs[0]
    later = Job(j0.prompt, j0.response, int(instance.arrivals.max()) + 1)
    try:
        spec.check_applies(instance.replace(jobs=(*instance.jobs, later)), params)
    except InputError as err:
        raise InputError(
            f"{err.rule} (an adversary releases jobs at later rounds)",
            field=err.field,
            source=err.source,
        ) from None


def simulate(
    instance: Instance,
    policy: str | _Policy,
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    trace: bool = False,
    instrument: bool = False,
    adversary: Adversary | None = None,
) -> SimulationResult:
    """Run ``policy`` (a registry name or a policy object) on ``instance``.

    ``params`` (only with a name) are the policy's parameters (see ``kvopt
    policies``); ``seed`` feeds seeded policies.  A name is checked against the
    policy's instance class first (:class:`~kvopt.errors.InputError` naming
    ``--policy`` and the rule).  ``trace=True`` records every event and
    decision; ``instrument=True`` asks the policy for its instrumentation
    (e.g. Rect's queue states, Route's per-job branch bounds).  ``adversary``
    (an :class:`Adversary`) may release jobs during the run in reaction to the
    policy's decisions; a named policy's class is then checked again on the
    final instance (``result.instance``).  The returned schedule has passed the
    checker against the final instance.
    """
    from .policy import get_policy, make_policy

    spec = None
    if isinstance(policy, str):
        spec = get_policy(policy)
        spec.check_applies(instance, params)
        if adversary is not None and instance.n:
            _check_admits_releases(spec, instance, params)
        obj = make_policy(policy, params, seed)
        used = spec.resolve_params(params)
        name = spec.name
    else:
        if params:
            raise TypeError("params are only accepted with a policy name")
        obj = policy
        name = getattr(policy, "name", type(policy).__name__)
        used = dict(getattr(policy, "params", {}) or {})
    obj.instrument = bool(instrument)
    t0 = _time.perf_counter()
    eng = _Engine(instance, obj, trace, adversary)
    if adversary is not None:
        adversary.setup(instance)
    # the run allocates many small long-lived objects; cyclic GC passes over them
    # would make the cost grow faster than the number of events
    gc_was = gc.isenabled()
    gc.disable()
    try:
        n_times = eng.run() if instance.n else 0
    finally:
        eng.ended = True
        if gc_was:
            gc.enable()
    seconds = _time.perf_counter() - t0
    final = eng.final_instance()
    if spec is not None and final is not instance:
        try:
            spec.check_applies(final, params)
        except InputError as err:
            raise InputError(
                f"{err.rule} (in the instance after the adversary's releases)",
                field=err.field,
                source=err.source,
            ) from None
    attempts = sorted(eng.attempts, key=lambda a: (a.start, a.job))
    sched = Schedule(tuple(attempts), final.memory, final.name, name)
    checked(final, sched, what=f"schedule of policy {name!r}")
    ct = sched.completion_times(final.n)
    objective = {"total_completion": int(sum(ct)), "makespan": int(max(ct, default=0))}
    kills = sum(1 for a in attempts if not a.completed)
    wasted = sum(a.rounds for a in attempts if not a.completed)
    stats = Stats(kills, wasted, getattr(eng, "n_events", 0), n_times, seconds)
    report = obj.report(final) if instrument else None
    return SimulationResult(
        policy=name,
        params=MappingProxyType(dict(used)),
        schedule=sched,
        objective=MappingProxyType(objective),
        stats=stats,
        completion_times=tuple(int(c) for c in ct),  # type: ignore[arg-type]
        trace=tuple(eng.trace) if eng.trace is not None else None,
        instrumentation=report,
        instance=final,
    )


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
    "SimulationResult",
    "Stats",
    "View",
    "VisibleData",
    "simulate",
]
