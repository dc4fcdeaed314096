"""The event loop that runs a policy object (SPEC §1, §6); it knows nothing of the registry.

The engine never loops over rounds.  It keeps a heap of future events and jumps
from one event time to the next (event kinds: :data:`~kvopt.engine.contract.EVENT_KINDS`).
:func:`run` runs one policy *object*; running a policy by its registry name
(parameters, seed, instance-class checks) is :func:`kvopt.simulation.simulate`,
which sits above both this module and the policies.

**Order of simultaneous events** (fixed, documented, SPEC §6.1): at an event
time ``t`` the engine first ends every attempt that completes or expires at
``t`` and registers every arrival at ``t``; then it calls the policy once with
the list of events in the order *completions (by job index), expiries (by job
index), arrivals (by job index), one wake, one overflow*.  A policy that wants
"one event at a time" semantics (Rect) walks the list in that order.  The policy
is always called at time 0 (possibly with an empty list) and otherwise only when
there is at least one event.

**Visibility.**  The engine fills the policy's view
(:class:`~kvopt.engine.contract.View` or
:class:`~kvopt.engine.contract.ClairvoyantView`) on each arrival and
completion, and nothing else; see :mod:`kvopt.engine.contract` for what a
policy may know.

**What the engine enforces.**  Decisions go through an
:class:`~kvopt.engine.contract.Actions` object: ``start(job, cap=None)``,
``kill(job)``, ``wake(time)``.  Starting a job that is not visible (not
arrived, or no job at all), is finished or already running, killing a job that
is not running (or in the round it started), a kill or an expiring cap of a policy that
declares ``kills = False``, a cap < 1, a wake-up in the past,
a start beyond the batch cap (``max_batch`` attempts already running, SPEC §10.1),
a decision after which the running set exceeds ``M`` in the current round,
a policy that stops while jobs are unfinished (a *stall*: nothing running, no
wake-up, no arrival to come) and a policy that makes no progress (below) all
raise :class:`~kvopt.errors.PolicyError` naming the policy, the job and the round.

**No progress** (the stall guard's twin, for a policy that wakes forever).  A
call is *idle* when its events are at most a wake-up, the policy starts
nothing, and afterwards nothing runs and no job is left to arrive (no
adversary release either).  After an idle call the view is the same as before
it except for ``now``: only a wake-up can call the policy again, and nothing it
learns can differ.  More than :data:`IDLE_CALLS` idle calls in a row fail the
run as a stall does.  A valid policy never needs that many: one that means to
wait asks for one wake-up at the round it wants (``act.wake(t)``), not one per
round; any arrival, completion, expiry or start resets the count.
A policy cannot probe with bad decisions: once a decision was refused the run
fails, even if the policy catches the error.  Nothing is repaired silently.
Every schedule is re-checked by the checker (:func:`kvopt.schedule.check_schedule`) before it is
returned.

**Clock** (SPEC §10).  After each step the engine advances its
:class:`~kvopt.engine.clock.Clock` over the stretch of rounds until the next event in one
closed-form step.  On a timed instance under a non-unit time model the next timed arrival
is found inside that stretch (the first round whose start ``τ_t`` reaches its arrival
time) and becomes the next event; everywhere else the clock only reads the run, so under
``unit`` every schedule is the one of the round model.

**Compiled loops.**  A plain run (no trace, instrumentation, adversary or ``max_attempts``;
the ``unit`` model; no batch cap) of a built-in policy with a ``compiled_run`` method goes through
:mod:`kvopt.engine.fastpath` when that method returns a result; this loop is the reference.

**Adversaries.**  ``run(..., adversary=A)`` runs an adaptive adversary
(:class:`~kvopt.engine.contract.Adversary`) beside the policy: after every
policy call it sees the decisions of that call and may release new jobs at
*future* rounds; the job set grows during the run, and released jobs are
invisible until their arrival like any other job.
:attr:`SimulationResult.instance` is the final instance (input jobs and
released jobs), which replays as a normal instance.
"""

from __future__ import annotations

import gc
import heapq
import time as _time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from ..errors import BudgetError, InputError, PolicyError, UserCodeError
from ..instance import Instance, Job, _is_int
from ..schedule import Schedule, check_schedule
from ..serving.timemodel import TimeModel
from ..usercode import user_error
from .actions import EngineActions
from .clock import Clock
from .contract import (
    ARRIVAL,
    COMPLETION,
    EVENT_KINDS,
    EXPIRY,
    OVERFLOW,
    WAKE,
    Adversary,
    ClairvoyantView,
    Event,
    Policy,
    View,
    contract_hint,
)
from .fastpath import compiled_result
from .results import SimulationResult, Stats

#: More consecutive *idle* calls (events at most a wake-up, no start, nothing running,
#: no job left to arrive) than this fail the run as a stall (module docstring, "No
#: progress").  Not a tuning value: no valid schedule needs even two such calls in a row
#: (one ``wake(t)`` at the wanted round does); the margin lets a policy poll a while.
#: 10 000 idle calls take about 0.03 s, so a policy that only wakes ends promptly.
IDLE_CALLS = 10_000


class _Engine:
    def __init__(
        self,
        instance: Instance,
        policy: Policy,
        trace: bool,
        adversary: Adversary | None,
        max_attempts: int | None = None,
        time_model: TimeModel | None = None,
    ):
        self.max_attempts = max_attempts
        self.inst = instance
        self.policy = policy
        # code the user wrote (a class outside kvopt): what it raises is a UserCodeError
        self.user = is_user_policy(policy)
        self.pname = getattr(policy, "name", type(policy).__name__)
        if self.user:  # a class without a name of its own goes by its class name, not 'policy'
            self.pname = user_label(policy, self.pname)
        self.M = instance.memory
        # per-job data, growable (an adversary appends released jobs)
        self.resp: list[int] = instance.responses.tolist()
        self.prom: list[int] = instance.prompts.tolist()
        self.pred: list[int] = instance.predicted.tolist()
        self.clock = Clock(time_model)
        # a timed instance under a non-unit model: arrivals by the clock (SPEC §10)
        self.timed = instance.is_timed and not self.clock.model.is_unit
        if self.timed:
            if adversary is not None:
                raise InputError(
                    "an adversary releases jobs in rounds; it cannot run on a timed instance "
                    "under a non-unit time model",
                    source="adversary",
                )
            at = instance.arrival_times.tolist()  # type: ignore[union-attr]
            self.tq = sorted((a, j) for j, a in enumerate(at))
            self.arr_a: list[int] = []
            self.arr_j: list[int] = []
        else:
            self.tq = []
            # the instance's arrivals in (round, job) order, read with an index: a heap of
            # 10⁶ tuples cost a cache-missing pop per job (issue 54)
            order = np.argsort(instance.arrivals, kind="stable")
            self.arr_a = instance.arrivals[order].tolist()
            self.arr_j = order.tolist()
        # the adversary's releases (jobs after the instance's, so after them at one round)
        self.arrq: list[tuple[int, int]] = []
        self.arrival_rounds: list[int] = [0] * instance.n
        self.pfill = 0  # Σ s and Σ s² of the attempts started in the current round
        self.qfill = 0
        self.adversary = adversary
        self.released: list[Job] = []
        self.ids = {j.id for j in instance.jobs if j.id is not None} if adversary else set()
        self.now = 0
        self.ended = False
        if policy.clairvoyant:
            whole = instance if adversary is None and not instance.has_arrivals else None
            self.view: View = ClairvoyantView(instance.memory, whole, instance.max_batch)
        else:
            self.view = View(instance.memory, instance.max_batch)
        self.heap: list[tuple[int, int, int, int]] = []
        self.seq: dict[int, int] = {}
        self.counter = 0
        # the ended attempts, flat: start, job, rounds, completed (0/1) of each, _PER_ATTEMPT
        # integers (cheaper than an Attempt; the schedule is built from columns, issue 54)
        self.attempts: list[int] = []
        self.trace: list[tuple[int, str, int, int]] | None = [] if trace else None
        self.n_events = 0

    def never_kills(self) -> bool:
        """Whether the policy declared ``kills = False`` for this run (SPEC §4: the engine holds
        it to that).  A policy that plans with ``predicted_response`` declares
        ``kills_when_mispredicted = True``: on an instance (adversary releases included) where
        some prediction differs from the true length it may kill."""
        if getattr(self.policy, "kills", True) is not False:
            return False
        if getattr(self.policy, "kills_when_mispredicted", False):
            return self.pred == self.resp
        return True

    def over_budget(self, t: int) -> None:
        raise BudgetError(
            f"{self.pname} made more than {self.max_attempts} attempts by round {t} "
            f"(max_attempts); the run was stopped"
        )

    def _err(self, t: int, msg: str, job: int | None = None) -> PolicyError:
        where = f"job {job}, round {t}" if job is not None else f"round {t}"
        return PolicyError(f"policy {self.pname!r}: {where}: {msg}")

    def _user(
        self, err: BaseException, t: int, phase: str, traceback_of: BaseException | None = None
    ) -> BaseException:
        """``err``, raised while the policy ran ``phase`` at round ``t``: for a user's policy,
        the :class:`~kvopt.errors.UserCodeError` naming its reference, the round, the user's
        frames and the contract's rule (:func:`~kvopt.engine.contract.contract_hint`)."""
        if not self.user:
            return err
        return user_error(err, user_label(self.policy, self.pname), where=f"round {t}, in {phase}",
                          hint=contract_hint(err, self.policy), traceback_of=traceback_of)  # fmt: skip

    def _refusal(self, act: EngineActions) -> PolicyError:
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
        if self.timed:
            return self.inst.realized(self.arrival_rounds)
        if not self.released:
            return self.inst
        meta = dict(self.inst.meta)
        meta["adversary"] = str(getattr(self.adversary, "name", type(self.adversary).__name__))
        meta["released"] = len(self.released)
        return Instance(
            self.inst.memory,
            self.inst.jobs + tuple(self.released),
            name=self.inst.name,
            meta=meta,
            max_batch=self.inst.max_batch,
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
                s = self.prom[a]
                self.pfill += s
                self.qfill += s * s
                if b < 0 or o <= b:
                    heapq.heappush(heap, (t + o, COMPLETION, a, self.counter))
                else:
                    heapq.heappush(heap, (t + b, EXPIRY, a, self.counter))
                last = a
                if trace is not None:
                    trace.append((t, "start", a, b))
            elif what == 1:  # kill job a that started at b
                del seq[a]
                self.attempts.extend((b, a, t - b, 0))
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
        arr_a, arr_j, ai, na = self.arr_a, self.arr_j, 0, len(self.arr_a)
        M = self.M
        policy = self.policy
        clair = bool(policy.clairvoyant)
        adversary = self.adversary
        # a policy declaring ``kills = False`` is held to it: no kill, no cap that expires
        # (``kills_when_mispredicted``: except on instances whose predictions are not exact)
        no_kills = getattr(policy, "kills", True) is False
        act = EngineActions(v, self.pname, self.never_kills if no_kills else None)
        log = act._log
        trace = self.trace
        clock = self.clock
        tq, ti = self.tq, 0
        n_events = 0
        n_times = 0
        idle = 0  # consecutive idle calls (module docstring, "No progress")
        t = 0
        first = True
        budget = self.max_attempts
        while True:
            if budget is not None and len(self.attempts) > _PER_ATTEMPT * budget:
                self.over_budget(t)
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
                        self.attempts.extend((start, job, resp[job], 1))
                        events.append(Event(t, COMPLETION, job, resp[job]))
                    else:
                        if no_kills and self.never_kills():
                            raise self._err(
                                t,
                                f"its attempt reached its cap of {t - start} rounds before "
                                "completing (an expiry is a kill), but the policy declares "
                                "kills = False",
                                job,
                            )
                        v._stop(job)
                        self.attempts.extend((start, job, t - start, 0))
                        events.append(Event(t, EXPIRY, job, t - start))
            while True:  # arrivals at t in job order: the instance's, then released ones
                if ai < na and arr_a[ai] == t:
                    j = arr_j[ai]
                    ai += 1
                elif arrq and arrq[0][0] == t:
                    j = heapq.heappop(arrq)[1]
                else:
                    break
                if clair:
                    v._arrive_c(j, t, prom[j], resp[j], pred[j])  # type: ignore[attr-defined]
                else:
                    v._arrive(j, t, prom[j])
                events.append(Event(t, ARRIVAL, j))
            if tq and tq[ti][0] <= clock.tau_now:  # timed: the first round with τ_t ≥ α_j
                first_new = ti
                while ti < len(tq) and tq[ti][0] <= clock.tau_now:
                    ti += 1
                for _, j in sorted(tq[first_new:ti], key=lambda x: x[1]):
                    self.arrival_rounds[j] = t
                    if clair:
                        v._arrive_c(j, t, prom[j], resp[j], pred[j])  # type: ignore[attr-defined]
                    else:
                        v._arrive(j, t, prom[j])
                    events.append(Event(t, ARRIVAL, j))
                if ti == len(tq):
                    tq = []
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
                phase = "on_events"
                try:
                    if first:
                        first = False
                        phase = "setup"
                        policy.setup(v)  # type: ignore[call-arg]
                        phase = "on_events"
                    policy.on_events(t, events, v, act)
                except PolicyError as err:
                    if act._refused is err:
                        raise self._user(self._refusal(act), t, phase, err) from None
                    raise self._user(err, t, phase) from None
                except Exception as err:  # a user's policy may raise anything (UserCodeError)
                    if self.user:
                        raise self._user(err, t, phase) from err
                    raise
                if act._refused is not None:  # the policy caught a refusal and went on
                    raise self._user(self._refusal(act), t, phase, act._refused)
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
                self.pfill = self.qfill = 0
                break
            if called:
                if (log_started or v._running or ai < na or arrq or tq
                        or any(e.kind != WAKE for e in events)):  # fmt: skip
                    idle = 0
                else:
                    idle += 1
                    if idle > IDLE_CALLS:
                        left = n - len(v._done)
                        raise self._err(
                            t,
                            f"no progress: called {idle} times in a row with nothing running, "
                            f"no job left to arrive and no start, while {left} job(s) are "
                            f"unfinished (e.g. job {next(j for j in range(n) if j not in v._done)}); "
                            "a wake-up alone changes nothing (to wait, wake once at the round "
                            "you want)",
                        )
            if v._K:  # first future round in which the running set overflows
                t_over = (M - v._C) // v._K + 1
                if not heap or t_over < heap[0][0]:
                    heapq.heappush(heap, (t_over, OVERFLOW, -1, 0))
            nxt = heap[0][0] if heap else None
            if ai < na and (nxt is None or arr_a[ai] < nxt):
                nxt = arr_a[ai]
            if arrq and (nxt is None or arrq[0][0] < nxt):
                nxt = arrq[0][0]
            k0 = v._C + v._K * t
            pf, qf = self.pfill, self.qfill
            self.pfill = self.qfill = 0
            if tq:  # the round at which the next timed arrival is reached, if before nxt
                ta = clock.first_round_reaching(tq[ti][0], v._K, k0, pf, qf, nxt)
                if ta is not None:
                    nxt = ta
            if nxt is not None:
                clock.advance(nxt, v._K, k0, pf, qf)
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


#: integers the engine records per ended attempt (start, job, rounds, completed)
_PER_ATTEMPT = 4


def _schedule(flat: list[int], final: Instance, name: str) -> Schedule:
    """The schedule of the engine's ended attempts (``flat``: start, job, rounds, completed
    of each), ordered by start, then job."""
    rows = np.array(flat, dtype=np.int64).reshape(-1, _PER_ATTEMPT)
    order = np.lexsort((rows[:, 1], rows[:, 0]))
    start, job, rounds, done = (rows[order, c] for c in range(_PER_ATTEMPT))
    return Schedule.from_columns(
        job, start, rounds, done.astype(bool), memory=final.memory, instance=final.name,
        producer=name,
    )  # fmt: skip


def _event_key(e: Event) -> tuple[int, int]:
    return (e.kind, e.job)


def is_user_policy(policy: Policy) -> bool:
    """Whether ``policy`` is an object of a class written outside kvopt (a user's code)."""
    module = type(policy).__module__ or ""
    return not (module == "kvopt" or module.startswith("kvopt."))


def user_label(policy: Policy, name: str | None = None) -> str:
    """The name a user's policy goes by in errors: its reference (set by
    :func:`kvopt.policy.make_policy`), else its class's name."""
    name = name or getattr(policy, "name", None)
    return name if name and name != Policy.name else type(policy).__qualname__


def run(
    instance: Instance,
    policy: Policy,
    *,
    trace: bool = False,
    instrument: bool = False,
    adversary: Adversary | None = None,
    name: str | None = None,
    params: Mapping[str, Any] | None = None,
    check_final: Callable[[Instance], None] | None = None,
    max_attempts: int | None = None,
    time_model: TimeModel | None = None,
) -> SimulationResult:
    """Run the policy object ``policy`` on ``instance``; the schedule has passed the checker.

    ``max_attempts``: stop with :class:`~kvopt.errors.BudgetError` once the run has made
    more attempts (starts that completed or were killed) than this.

    ``trace=True`` records every event and decision; ``instrument=True`` asks
    the policy for its instrumentation (:meth:`~kvopt.engine.contract.Policy.report`,
    with ``policy.run_alone`` set to :func:`run_alone`).  ``adversary`` may
    release jobs during the run in reaction to the policy's decisions.  The
    result is labelled ``name`` with the parameters ``params`` (default: the
    object's ``name`` and ``params`` attributes).  ``check_final`` is called
    with the final instance when the adversary released jobs, before the
    schedule is checked (the registry's class check).

    ``time_model`` (default ``unit``, SPEC §10) times the rounds: the result's ``clock``
    gives ``τ_t``.  On a timed instance (jobs with ``arrival_time``) under a non-unit
    model a job arrives at the first round whose start ``τ_t`` is at or after its arrival
    time, and the result's ``instance`` is the realized round instance the schedule was
    checked against.  Under ``unit`` (and on round instances under any model) the
    schedule is the one of the round model: the clock only reads it.
    """
    if max_attempts is not None and (
        isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1
    ):
        raise InputError(f"must be an integer >= 1, got {max_attempts!r}", source="max_attempts")
    if name is None:
        name = getattr(policy, "name", type(policy).__name__)
    used = dict(getattr(policy, "params", {}) or {}) if params is None else dict(params)
    policy.instrument = bool(instrument)
    fast = compiled_result(instance, policy, trace=trace, instrument=instrument,
                           adversary=adversary, max_attempts=max_attempts, time_model=time_model,
                           user=is_user_policy(policy), name=name, params=used,
                           idle_calls=IDLE_CALLS)  # fmt: skip
    if fast is not None:  # a built-in policy's compiled loop (kvopt.engine.fastpath)
        return fast
    t0 = _time.perf_counter()
    eng = _Engine(instance, policy, trace, adversary, max_attempts, time_model)
    if adversary is not None:
        adversary.setup(instance)
    # the run allocates many small long-lived objects; cyclic GC passes over them
    # would make the cost grow faster than the number of events
    gc_was = gc.isenabled()
    gc.disable()
    try:
        n_times = eng.run() if instance.n else 0
        if max_attempts is not None and len(eng.attempts) > _PER_ATTEMPT * max_attempts:
            eng.over_budget(eng.now)
    except PolicyError as err:  # the engine's refusal of a user's decision (overflow, stall)
        if eng.user and not isinstance(err, UserCodeError):
            raise user_error(err, user_label(policy, name)) from None
        raise
    finally:
        eng.ended = True
        if gc_was:
            gc.enable()
    seconds = _time.perf_counter() - t0
    final = eng.final_instance()
    if check_final is not None and final is not instance:
        check_final(final)
    sched = _schedule(eng.attempts, final, name)
    check = check_schedule(final, sched)  # kvopt.schedule.checked, keeping the result
    check.raise_if_invalid(f"schedule of policy {name!r}")
    ct = check.completion_times  # every job completes once in a valid schedule
    objective = {"total_completion": int(sum(ct)), "makespan": int(max(ct, default=0))}
    kills, wasted = sched.kills, sched.wasted_rounds
    stats = Stats(kills, wasted, getattr(eng, "n_events", 0), n_times, seconds)
    report = None
    if instrument:
        policy.run_alone = run_alone
        try:
            report = policy.report(final)
        except Exception as err:  # a user's report may raise anything (UserCodeError)
            if not eng.user:
                raise
            raise user_error(err, user_label(policy, name), where="in report") from err
    return SimulationResult(
        policy=name,
        params=MappingProxyType(used),
        schedule=sched,
        objectives=MappingProxyType(objective),
        stats=stats,
        completion_times=tuple(int(c) for c in ct),  # type: ignore[arg-type]
        trace=tuple(eng.trace) if eng.trace is not None else None,
        instrumentation=report,
        instance=final,
        clock=eng.clock,
    )


def run_alone(instance: Instance, policy: Policy) -> tuple[int, ...]:
    """Completion times of ``policy`` run alone on ``instance`` (:data:`.contract.RunAlone`)."""
    return run(instance, policy).completion_times


__all__ = ["IDLE_CALLS", "is_user_policy", "run", "run_alone", "user_label"]
