"""``blackbox`` — BlackBoxMeta (main paper, Algorithm 3, §6.1), and the reusable slot mechanism.

**Slots.**  :class:`SlotMeta` is the stage mechanism shared by BlackBoxMeta,
Route, Route-online and ``clairvoyant-mix``: stages ``r = 0, 1, …``; in stage
``r`` each part ``ℓ = 1 … k`` in turn gets a slot of ``base^r`` rounds in
which a *fresh* sub-policy runs from its own time 0 on the part's current pool.
Jobs already finished are *dummies*: the sub-policy plans for them as if they
were there (a dummy's virtual attempt completes after its known length or
expires at its cap), but they use no memory and nothing of them is scheduled.
Everything still running when the slot ends is killed (the real attempts are
started with their cap clipped to the slot's end, so the engine ends them
exactly there).  :class:`SlotHost` is the small engine that runs one
sub-policy inside one slot: it keeps the sub-policy's own :class:`View`
(virtual time, pool, dummies), validates its decisions against that view
(virtual memory included), and forwards real starts/kills/wake-ups.

**Batch cap** (SPEC §10.1).  The sub-policy's view carries the outer ``max_batch``;
its virtual running set (dummies included) is held to it, so the real attempts, a
subset, are too.  Slots never overlap, so the cap holds for the whole run.

With a deterministic sub-policy and the same pool, a slot of length ``L``
reproduces exactly the first ``L`` rounds of the sub-policy's isolated run —
the fact behind the per-job bound ``C_i ≤ (2(k+ℓ−1)+1) C_i^ℓ ≤ (4k−1) C_i^ℓ``
(Lemma 10).

**Literal slots (default).**  A slot always lasts ``base^r`` rounds, also when
its pool has nothing left to run (SPEC §6.1 gives every part its slot).
``compact=True`` is the work-conserving variant: a slot ends as soon as its
pool has no unfinished job (so empty slots take no time).  Every completion
then happens in the same slot as in the literal run, only earlier, so all
per-job bounds still hold.

**BlackBoxMeta** itself takes the partition as given.  As a policy (``blackbox``)
it uses the three regimes of the main paper, known clairvoyantly, in the order
prompt-heavy (Rect, width ``2 s``), response-heavy (Response), large (Rect,
width ``M``); empty regimes are left out of the partition (``k`` = number of
non-empty regimes).  Instrumentation reports, per job, its part ``ℓ`` and
``C_i^ℓ`` from the isolated run of the part's sub-policy, and the Lemma 10 bound.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from ..engine.contract import (
    COMPLETION,
    EXPIRY,
    OVERFLOW,
    WAKE,
    Actions,
    ClairvoyantPolicy,
    ClairvoyantView,
    Event,
    Policy,
    RunAlone,
    View,
)
from ..errors import PolicyError
from ..instance import Instance


class _HostActions(Actions):
    __slots__ = ("h",)

    def __init__(self, host: SlotHost):
        self.h = host

    def start(self, job: int, cap: int | None = None) -> None:
        self.h._start(job, cap)

    def kill(self, job: int) -> None:
        self.h._kill(job)

    def wake(self, time: int) -> None:
        self.h._wake(time)


class SlotHost:
    """Run ``sub`` afresh on ``pool`` in the window ``[t0, end)`` of the outer run.

    ``dummies`` maps finished pool jobs to the length their virtual attempt
    needs to complete in the sub-policy's instance.  The sub-policy gets its
    own view restricted to the pool (every pool job visible at slot round 0,
    ``n`` = pool size): a :class:`View` for a blind sub-policy, a
    :class:`ClairvoyantView` (prompts, responses and predictions of the pool
    jobs, read from the outer policy's clairvoyant view; no ``instance``) for a
    clairvoyant one, which needs a clairvoyant outer policy.  Call
    :meth:`deliver` at every outer event time ``t0 ≤ now < end`` with the
    outer events of this call.
    """

    def __init__(
        self,
        sub: Policy,
        pool: Sequence[int],
        dummies: Mapping[int, int],
        t0: int,
        end: int,
        outer_view: View,
        outer_act: Actions,
    ):
        self.sub = sub
        self.t0, self.end = t0, end
        self.outer_act = outer_act
        self.dummies = dict(dummies)
        self.M = outer_view.memory
        self.pname = getattr(sub, "name", type(sub).__name__)
        v: View
        if sub.clairvoyant:
            if not isinstance(outer_view, ClairvoyantView):
                raise PolicyError(
                    f"clairvoyant sub-policy {self.pname!r} needs a clairvoyant outer policy"
                )
            v = cv = ClairvoyantView(outer_view.memory, max_batch=outer_view.max_batch)
            for j in sorted(pool):
                cv._arrive_c(
                    j,
                    0,
                    outer_view.prompts[j],
                    outer_view.responses[j],
                    outer_view.predicted[j],
                )
        else:
            v = View(outer_view.memory, outer_view.max_batch)
            for j in sorted(pool):
                v._arrive(j, 0, outer_view.prompts[j])
        self.view = v
        self.vheap: list[tuple[int, int, int, int]] = []
        self.vseq: dict[int, int] = {}
        self.counter = 0
        self.woken: set[int] = set()
        self.ends: list[tuple[int, int, int]] = []  # (slot round an attempt ends by, job, seq)
        self.aseq: dict[int, int] = {}
        self.act = _HostActions(self)
        v.now = 0
        sub.setup(v)  # type: ignore[call-arg]
        self._call(0, [])

    # --- the sub-policy's actions -------------------------------------------
    def _err(self, msg: str, job: int | None = None) -> PolicyError:
        v = self.view.now
        where = (
            f"job {job}, round {self.t0 + v} (slot round {v})"
            if job is not None
            else (f"round {self.t0 + v} (slot round {v})")
        )
        return PolicyError(f"sub-policy {self.pname!r}: {where}: {msg}")

    def _outer_wake(self, t: int) -> None:
        if t < self.end and t not in self.woken and t > self.t0 + self.view.now:
            self.woken.add(t)
            self.outer_act.wake(t)

    def _start(self, job: int, cap: int | None) -> None:
        v = self.view
        if job not in v._arrival:
            raise self._err("started but not in the pool", job)
        if job in v._done:
            raise self._err("started after it finished", job)
        if job in v._running:
            raise self._err("started while an attempt of it is running (two attempts)", job)
        if cap is not None and cap < 1:
            raise self._err(f"cap must be >= 1, got {cap}", job)
        if not v.has_slot():  # dummies count: real attempts <= virtual ones <= the cap
            raise self._err(
                f"started while {v.n_running} attempts run (dummies included): the batch cap "
                f"max_batch = {v.max_batch} allows no more (SPEC §10.1)",
                job,
            )
        now_v = v.now
        v._start(job, now_v, cap)
        self.counter += 1
        self.aseq[job] = self.counter
        if job in self.dummies:
            length = self.dummies[job]
            self.vseq[job] = self.counter
            t_end = now_v + (length if cap is None or length <= cap else cap)
            kind = COMPLETION if cap is None or length <= cap else EXPIRY
            heapq.heappush(self.vheap, (t_end, kind, job, self.counter))
            self._outer_wake(self.t0 + t_end)
        else:
            left = self.end - (self.t0 + now_v)
            c = left if cap is None or cap > left else cap
            t_end = now_v + c
            self.outer_act.start(job, c)
        heapq.heappush(self.ends, (t_end, job, self.counter))

    def _kill(self, job: int) -> None:
        v = self.view
        if job not in v._running:
            raise self._err("killed but not running", job)
        if v.now - v._running[job] < 1:
            raise self._err("killed in the round it started", job)
        v._stop(job)
        if job in self.dummies:
            self.vseq.pop(job, None)
        else:
            self.outer_act.kill(job)

    def _wake(self, time: int) -> None:
        if time <= self.view.now:
            raise self._err(f"wake-up at slot round {time} is not in the future")
        heapq.heappush(self.vheap, (int(time), WAKE, -1, 0))
        self._outer_wake(self.t0 + int(time))

    # --- events -------------------------------------------------------------
    def deliver(self, now: int, outer_events: Sequence[Event]) -> None:
        """Pass the events at outer round ``now`` (< end) to the sub-policy."""
        v = self.view
        tv = now - self.t0
        events: list[Event] = []
        for e in outer_events:
            if (e.kind == COMPLETION or e.kind == EXPIRY) and e.job in v._running:
                j = e.job
                if j in self.dummies:
                    continue
                if e.kind == COMPLETION:
                    v._finish(j, tv, e.info)
                else:
                    v._stop(j)
                events.append(Event(tv, e.kind, j, e.info))
        vheap = self.vheap
        wake = False
        while vheap and vheap[0][0] <= tv:
            t_, kind, j, sq = heapq.heappop(vheap)
            if t_ < tv:
                raise self._err(f"missed a virtual event at slot round {t_}")
            if kind == WAKE:
                wake = True
            elif kind == OVERFLOW:
                pass
            elif self.vseq.get(j) == sq:
                del self.vseq[j]
                start = v._running[j]
                if kind == COMPLETION:
                    v._finish(j, tv, self.dummies[j])
                    events.append(Event(tv, COMPLETION, j, self.dummies[j]))
                else:
                    v._stop(j)
                    events.append(Event(tv, EXPIRY, j, tv - start))
        if len(events) > 1:
            events.sort(key=lambda e: (e.kind, e.job))
        if wake:
            events.append(Event(tv, WAKE, -1))
        if v._K and v._C + v._K * tv > self.M:
            events.append(Event(tv, OVERFLOW, -1))
        if events:
            self._call(tv, events)

    def _call(self, tv: int, events: list[Event]) -> None:
        v = self.view
        v.now = tv
        self.sub.on_events(tv, events, v, self.act)
        if v._K:
            mem = v._C + v._K * tv
            if mem > self.M:
                raise self._err(f"running attempts (dummies included) hold {mem} > memory {self.M}")
            # first slot round in which the virtual running set overflows; needed only if
            # no running attempt ends before it (every attempt in a slot has an end)
            t_over = (self.M - v._C) // v._K + 1
            ends, aseq, running = self.ends, self.aseq, v._running
            while ends and (
                ends[0][0] <= tv or aseq.get(ends[0][1]) != ends[0][2] or ends[0][1] not in running
            ):
                heapq.heappop(ends)
            if not ends or t_over < ends[0][0]:
                heapq.heappush(self.vheap, (t_over, OVERFLOW, -1, 0))
                self._outer_wake(self.t0 + t_over)


class SlotMeta:
    """The stage/slot mechanism; subclasses say what the parts, pools and sub-policies are.

    Subclass hooks: :meth:`n_parts`, :meth:`pool` (jobs and dummies of part
    ``ℓ`` at a slot start), :meth:`live` (does part ``ℓ``'s current pool still
    need its slot), :meth:`make_sub`, :meth:`on_real_event` (bookkeeping for
    every outer event).

    ``online``: with arrivals the total number of jobs is not visible, so an
    online meta-policy keeps opening slots while every visible job is finished
    (the slot clock keeps running until more jobs arrive; the engine ends the
    run once all jobs are done).  An offline one (all jobs visible at round 0)
    stops opening slots when every job is finished.
    """

    name = "slots"
    kills = True  # everything still running when a slot ends is killed
    instrument = False
    online = False

    def __init__(self, base: int = 2, compact: bool = False):
        self.base = int(base)
        self.compact = bool(compact)

    # hooks -------------------------------------------------------------------
    def n_parts(self) -> int:
        raise NotImplementedError

    def pool(self, part: int, view: View) -> tuple[list[int], dict[int, int]]:
        raise NotImplementedError

    def live(self, part: int, view: View) -> bool:
        raise NotImplementedError

    def make_sub(self, part: int) -> Policy:
        raise NotImplementedError

    def on_real_event(self, e: Event, view: View) -> None:
        pass

    # mechanism ---------------------------------------------------------------
    def _init_slots(self) -> None:
        self.stage = 0
        self.part = -1  # the first call at time 0 opens slot (stage 0, part 0)
        self.slot_end = 0
        self.host: SlotHost | None = None
        self.slots: list[tuple[int, int, int, int]] = []  # (stage, part, start, end)

    def _advance(self) -> None:
        self.part += 1
        if self.part >= self.n_parts():
            self.part = 0
            self.stage += 1

    def _next_slot(self, now: int, view: View, act: Actions) -> None:
        """Open the next slot at ``now`` (compact: the next one whose pool has work)."""
        k = self.n_parts()
        saved = (self.stage, self.part)
        self.host = None
        for _ in range(k):
            self._advance()
            ell = self.part
            alive = self.live(ell, view)
            if self.compact and not alive:
                continue
            self.slot_end = now + self.base**self.stage
            self.slots.append((self.stage, ell, now, self.slot_end))
            act.wake(self.slot_end)
            if alive:
                jobs, dummies = self.pool(ell, view)
                self.host = SlotHost(
                    self.make_sub(ell), jobs, dummies, now, self.slot_end, view, act
                )
            return
        # compact and no part has work now: wait for an arrival, resume in sequence
        self.stage, self.part = saved
        self.slot_end = now

    def _meta_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        for e in events:
            if e.kind != WAKE and e.kind != OVERFLOW:
                self.on_real_event(e, view)
        if now < self.slot_end:
            if self.host is not None:
                self.host.deliver(now, events)
                if not self.live(self.part, view):
                    self.host = None
                    if self.compact:
                        self.slot_end = now
            if now < self.slot_end:
                return
        if not self.online and len(view.done) == view.n:
            return
        self._next_slot(now, view, act)


class BlackBoxMeta(SlotMeta, ClairvoyantPolicy):
    """BlackBoxMeta (Algorithm 3) with a given partition and one sub-policy factory per part.

    ``parts(instance)`` returns the partition (lists of job indices, in slot
    order); ``subs[ℓ]()`` makes a fresh sub-policy for part ``ℓ``.  A finished
    job's dummy runs its response length.  Offline: the partition is computed
    from ``view.instance``, so it needs every job visible at round 0.
    """

    name = "blackbox"

    def __init__(
        self,
        parts: Callable[[Instance], Sequence[Sequence[int]]],
        subs: Sequence[Callable[[], Policy]],
        base: int = 2,
        compact: bool = False,
        name: str | None = None,
        params: Mapping[str, Any] | None = None,
    ):
        SlotMeta.__init__(self, base, compact)
        self._parts_fn = parts
        self._subs = list(subs)
        if name:
            self.name = name
        self.params = dict(params or {"base": base, "compact": compact})

    def setup(self, view: ClairvoyantView) -> None:
        instance = view.instance
        self.instance = instance
        parts = [sorted(int(j) for j in p) for p in self._parts_fn(instance)]
        if len(parts) != len(self._subs):
            raise PolicyError(
                f"policy {self.name!r}: {len(parts)} parts but {len(self._subs)} subs"
            )
        self.parts = parts
        self.part_of = {j: ell for ell, p in enumerate(parts) for j in p}
        if len(self.part_of) != sum(map(len, parts)) or len(self.part_of) != instance.n:
            raise PolicyError(f"policy {self.name!r}: the parts do not partition the jobs")
        self.n_live = [len(p) for p in parts]
        self._init_slots()

    def n_parts(self) -> int:
        return len(self.parts)

    def pool(self, part: int, view: View):
        jobs = self.parts[part]
        done = view.done
        return jobs, {j: view.response(j) for j in jobs if j in done}

    def live(self, part: int, view: View) -> bool:
        return self.n_live[part] > 0

    def on_real_event(self, e: Event, view: View) -> None:
        if e.kind == COMPLETION:
            self.n_live[self.part_of[e.job]] -= 1

    def make_sub(self, part: int) -> Policy:
        return self._subs[part]()

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        self._meta_events(now, events, view, act)

    def report(self, instance: Instance):
        """Per job: its part ``ℓ`` (1-based), ``C_i^ℓ`` (isolated run), the Lemma 10 bound."""
        assert self.run_alone is not None  # set by the engine before report
        return blackbox_isolated(instance, self.parts, self._subs, run=self.run_alone)


def blackbox_isolated(
    instance: Instance,
    parts: Sequence[Sequence[int]],
    subs: Sequence[Callable[[], Policy]],
    *,
    run: RunAlone,
) -> dict[str, Any]:
    """Run each part's sub-policy alone on its part; per-job ``C_i^ℓ`` and Lemma 10 bounds.

    ``run`` is the engine's :func:`~kvopt.engine.core.run_alone` (in a report,
    the policy's ``run_alone``).
    """
    k = len(parts)
    n = instance.n
    part = [0] * n
    iso = [0] * n
    for ell, p in enumerate(parts):
        p = sorted(p)
        if not p:
            continue
        times = run(instance.subset(p), subs[ell]())
        for idx, j in enumerate(p):
            part[j] = ell + 1
            iso[j] = times[idx]
    bound = [(2 * (k + part[j] - 1) + 1) * iso[j] for j in range(n)]
    return {
        "k": k,
        "part": part,
        "isolated": iso,
        "bound": bound,
        "bound_4k1": [(4 * k - 1) * c for c in iso],
    }


def regime_parts(instance: Instance, lam: Fraction) -> list[list[int]]:
    """The three regimes for ``Λ = lam·M`` in slot order: prompt-heavy, response-heavy, large."""
    M = instance.memory
    P, R, L = [], [], []
    for j, (s, o) in enumerate(zip(instance.prompts.tolist(), instance.responses.tolist())):
        if s > lam * M:
            L.append(j)
        elif o <= s:
            P.append(j)
        else:
            R.append(j)
    return [P, R, L]


class RegimeBlackBox(BlackBoxMeta):
    """``blackbox``: the main paper's regimes as the (clairvoyant) partition, non-empty ones only.

    Parts in slot order: prompt-heavy (Rect), response-heavy (Response), large
    (Rect); ``Λ = lam·M``.
    """

    name = "blackbox"

    def __init__(
        self, lam: float = 0.25, base: int = 2, stagger: bool = True, compact: bool = False
    ):
        from .rect import Rect
        from .response import Response

        self.lamf = Fraction(str(lam))
        self._factories = {
            0: lambda: Rect(lam, base),
            1: lambda: Response(base, stagger),
            2: lambda: Rect(lam, base),
        }
        super().__init__(
            self._regimes,
            [],
            base=base,
            compact=compact,
            name="blackbox",
            params={"lam": lam, "base": base, "stagger": stagger, "compact": compact},
        )

    def _regimes(self, instance: Instance) -> list[list[int]]:
        return [p for p in regime_parts(instance, self.lamf) if p]

    def setup(self, view: ClairvoyantView) -> None:
        kinds = [i for i, p in enumerate(regime_parts(view.instance, self.lamf)) if p]
        self._subs = [self._factories[i] for i in kinds]
        super().setup(view)


__all__ = [
    "BlackBoxMeta",
    "SlotHost",
    "SlotMeta",
    "blackbox_isolated",
    "RegimeBlackBox",
    "regime_parts",
]
