"""A small clairvoyant kill-free heuristic: the upper bound and warm start of the exact models.

Serial schedule generation (the list-scheduling scheme of project
scheduling): jobs are taken in a priority order and each starts at the
earliest round ``t ≥ a_i`` at which its staircase ``s_i + u + 1``
(``u = 0 … o_i−1``) fits under ``M`` on top of the jobs already placed
(holes left earlier are filled).  Several orders are tried (response, area,
peak, arrival + response, for makespan also the reverses), then a short
seeded local search swaps and reinserts jobs in the best order.  The
result is only an upper bound; it passes :func:`kvopt.schedule.checked`.
With a batch cap ``B`` (SPEC §10.1, ``Instance.max_batch``) the earliest start also leaves
fewer than ``B`` placed jobs in each of the job's rounds (:func:`_capped_fit`), so every
schedule it returns respects the cap.
:func:`improve_starts` continues from a schedule with the same moves,
kicked out of local optima (iterated local search; ``auto`` runs it for the
incumbent beyond the small path, ``models/bnb.md`` §9).
"""

from __future__ import annotations

import random
import time
from operator import add as _add

import numpy as np

from ..errors import InputError
from ..instance import Instance
from ..schedule import Schedule, checked
from .common import first_fit, first_fit_array
from .placement import place_events

#: the serial placement keeps the profile ``gm[τ] = used(τ) + τ`` as a Python list up to this
#: horizon (short slices: 0.044 ms per order at n = 12 and 53 rounds, numpy 0.077) …
LIST_PLACEMENT_ROUNDS = 1 << 10
#: … as a numpy array up to this one (8 bytes a round: 34 MB; 0.14 ms per order at n = 12
#: and 2,252 rounds, the list 0.50, the profile 0.19; 5.9 ms at n = 200 and 112,641 rounds,
#: the profile 65) and beyond it as the piecewise-linear profile of
#: :mod:`kvopt.exact.placement` (``models/orders.md`` §3: memory ``O(n)`` whatever the
#: horizon, time about ``n²`` per job: 1.6 s per order at n = 1,000) — the same starts
NUMPY_PLACEMENT_ROUNDS = 1 << 22
#: … and the profile also wherever the horizon exceeds this many rounds per job pair: an
#: array order costs about 52 ns a round, a profile order about 1.6 µs · n² (the figures
#: above), so with few jobs over a long horizon the profile wins (three jobs and 10⁷ rounds:
#: an 80 MB array, against a profile of six breakpoints)
PROFILE_ROUNDS_PER_PAIR = 32


def _placer(inst: Instance):
    """``place`` for this instance, as a function of a list order returning the starts (a
    list); the profile is kept as ``gm[τ] = used(τ) + τ`` so that a job fits at ``t`` iff
    ``max(gm[t : t + o]) ≤ M − s − 1 + t`` (one slice and max per test) in a list or a numpy
    array, or beyond ``NUMPY_PLACEMENT_ROUNDS`` or ``PROFILE_ROUNDS_PER_PAIR · n²`` rounds as
    the piecewise-linear profile of :func:`kvopt.exact.placement.place_events` (the same
    starts)."""
    n, M = inst.n, inst.memory
    prompts, responses, arrivals = (
        x.tolist() for x in (inst.prompts, inst.responses, inst.arrivals)
    )
    H = max(arrivals) + sum(responses) + 1 if n else 1
    array_rounds = max(LIST_PLACEMENT_ROUNDS, PROFILE_ROUNDS_PER_PAIR * n * n)
    cap = inst.max_batch
    if H > min(NUMPY_PLACEMENT_ROUNDS, array_rounds):
        return lambda order: place_events(M, prompts, responses, arrivals, order, cap)
    if cap is not None:
        return _capped_array_placer(M, prompts, responses, arrivals, H, cap)
    return _array_placer(M, prompts, responses, arrivals, H, numpy=H > LIST_PLACEMENT_ROUNDS)


def _array_placer(M: int, prompts, responses, arrivals, H: int, *, numpy: bool):
    """The array placement of :func:`_placer`: the profile in a Python list, or with ``numpy``
    in an array (the same starts; one slice maximum and one slice addition per test in C,
    8 bytes a round where a list holds about 36: at n = 3,000 with responses of 3,000-4,000
    rounds, 10⁷ rounds, an order takes 0.35 s against 2.4 s on lists; below
    ``LIST_PLACEMENT_ROUNDS`` lists win)."""
    n = len(prompts)
    size = H + max(responses, default=1) + 1
    if numpy:
        stair = lambda s, o: np.arange(s + 1, s + 1 + o, dtype=np.int64)  # noqa: E731
        fit, fresh = first_fit_array, lambda: np.arange(size, dtype=np.int64)  # noqa: E731
    else:
        stair = lambda s, o: list(range(s + 1, s + 1 + o))  # noqa: E731
        fit, fresh = first_fit, list(range(size)).copy
    stairs = {(s, o): stair(s, o) for s, o in set(zip(prompts, responses))}

    def run(order: list[int]) -> list[int]:
        gm = fresh()
        starts = [0] * n
        last: dict[tuple[int, int, int], int] = {}
        for i in order:
            s, o, a = prompts[i], responses[i], arrivals[i]
            key = (s, o, a)
            t = last.get(key, a)
            t = fit(gm, t, o, M - s - 1, H)  # found: after every placed job all is free
            if numpy:
                gm[t : t + o] += stairs[s, o]
            else:
                gm[t : t + o] = map(_add, gm[t : t + o], stairs[s, o])
            starts[i] = t
            last[key] = t
        return starts

    return run


def _capped_fit(gm: np.ndarray, cnt: np.ndarray, t: int, o: int, lim: int, H: int, cap: int):
    """The earliest start ``≥ t`` that fits the memory profile ``gm`` (:func:`first_fit_array`)
    and leaves fewer than ``cap`` jobs (counts ``cnt``) in each of the job's rounds: a start
    whose window holds a full round ``ρ`` moves to ``ρ + 1`` (every start up to ``ρ`` runs in
    it), then the memory fit again, until both hold."""
    while True:
        t = first_fit_array(gm, t, o, lim, H)
        if t < 0:  # pragma: no cover - after every placed job all is free, within H
            raise AssertionError("no start within the horizon")
        full = np.flatnonzero(cnt[t : t + o] >= cap)
        if not len(full):
            return t
        t += int(full[-1]) + 1


def _capped_array_placer(M: int, prompts, responses, arrivals, H: int, cap: int):
    """:func:`_array_placer` under the batch cap ``cap``: the numpy profile and, beside it, the
    number of placed jobs in each round (placing jobs only fills rounds, so an identical job
    still cannot start earlier than the one placed before it)."""
    n = len(prompts)
    size = H + max(responses, default=1) + 1
    stairs = {
        (s, o): np.arange(s + 1, s + 1 + o, dtype=np.int64) for s, o in set(zip(prompts, responses))
    }

    def run(order: list[int]) -> list[int]:
        gm = np.arange(size, dtype=np.int64)
        cnt = np.zeros(size, dtype=np.int64)
        starts = [0] * n
        last: dict[tuple[int, int, int], int] = {}
        for i in order:
            s, o, a = prompts[i], responses[i], arrivals[i]
            key = (s, o, a)
            t = _capped_fit(gm, cnt, last.get(key, a), o, M - s - 1, H, cap)
            gm[t : t + o] += stairs[s, o]
            cnt[t : t + o] += 1
            starts[i] = t
            last[key] = t
        return starts

    return run


def place(inst: Instance, order) -> np.ndarray:
    """Starts of the serial schedule for ``order`` (earliest feasible start, holes filled).

    A failed start jumps past the fullest round of its window, or to the first start
    at which that round could fit; a job identical to one placed before starts its
    search at that job's start: placing jobs only lowers the free memory, so an
    identical job cannot fit earlier.
    """
    order = [int(i) for i in order]
    return np.asarray(_placer(inst)(order), dtype=np.int64)


#: the position of the area order in :func:`_orders` (placed first on the clock)
_AREA_ORDER = 1


def _orders(inst: Instance, objective: str) -> list[np.ndarray]:
    s, o, a = inst.prompts, inst.responses, inst.arrivals
    idx = np.arange(inst.n)
    keys = [o, inst.areas, inst.peaks, a + o, a, s]
    if objective == "makespan":
        keys += [-inst.areas, -o, -inst.peaks]
    return [np.lexsort((idx, k)) for k in keys]


def heuristic_starts(
    inst: Instance,
    objective: str = "total",
    *,
    seed: int = 0,
    seconds: float = 0.5,
    moves: int | None = None,
) -> np.ndarray:
    """Best serial schedule found over fixed orders, then seeded local search, within
    ``seconds`` in all (at least one fixed order is placed, however long it takes).

    With ``moves`` the local search makes exactly that many moves and ignores the
    clock, so the result depends only on the instance and the seed.  Ctrl-C during the
    local search raises :class:`LocalSearchInterrupted` with the best schedule so far
    (``solve()`` then reports it, interrupted, instead of losing the Ctrl-C's work).
    """
    if inst.n == 0:
        return np.zeros(0, dtype=np.int64)
    t0 = time.monotonic()
    run = _placer(inst)
    value = _valuer(inst, objective)
    best_key, best_order, best_starts = None, None, None
    orders = _orders(inst, objective)
    # on the clock the fixed orders stop at ``seconds`` too (after the first: a schedule is
    # always returned; at n = 1,000 with responses of 10⁴-10⁵ one order takes 1.6 s), so the
    # area order, the best or near it on the long instances, goes first; the choice among
    # those placed is the same as in list order (the first of the smallest value)
    for idx in (_AREA_ORDER, *(k for k in range(len(orders)) if k != _AREA_ORDER)):
        if best_key is not None and moves is None and time.monotonic() - t0 >= seconds:
            break
        order = orders[idx].tolist()
        st = run(order)
        key = (value(st), idx)
        if best_key is None or key < best_key:
            best_key, best_order, best_starts = key, order, st
    best_val = best_key[0]
    seconds = max(seconds - (time.monotonic() - t0), 0.0)
    cap = 60 * inst.n * inst.n if moves is None else int(moves)
    found = [best_starts]
    try:
        best_starts = _local_search(
            run,
            value,
            best_order,
            best_starts,
            best_val,
            seed=seed,
            seconds=seconds,
            cap=cap,
            clock=moves is None,
            found=found,
        )
    except KeyboardInterrupt as e:
        raise LocalSearchInterrupted(np.asarray(found[0], dtype=np.int64)) from e
    return np.asarray(best_starts, dtype=np.int64)


class LocalSearchInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`improve_starts`: ``starts`` holds its best schedule so far (no
    worse than the one it was given)."""

    def __init__(self, starts: np.ndarray):
        super().__init__()
        self.starts = starts


#: :func:`improve_starts` on the clock with less time than this returns its input
MIN_IMPROVE_SECONDS = 0.1
#: the iterated local search (:func:`improve_starts`) kicks the order after this many moves
#: times ``n²`` without an improvement, …
KICK_AFTER = 4
#: … by this many random reinsertions of the best order
KICK_MOVES = 3


def improve_starts(
    inst: Instance,
    starts,
    objective: str = "total",
    *,
    seed: int = 0,
    seconds: float = 1.0,
    moves: int | None = None,
) -> np.ndarray:
    """A better schedule than ``starts`` (kill-free starts), or as good: iterated local search
    (Lourenço, Martin and Stützle, *Iterated local search*, Handbook of Metaheuristics 2003)
    over the serial schedules' orders, from the order of ``starts``.  The local search of
    :func:`heuristic_starts` (swaps and reinsertions, equal values accepted); after
    ``KICK_AFTER · n²`` moves without an improvement, ``KICK_MOVES`` random reinsertions of
    the best order so far restart it.  Runs ``seconds``, or exactly ``moves`` moves (then
    the result depends only on the input and the seed).  Used where ``auto`` climbs the
    ladder (``models/bnb.md`` §9): the heuristic's local search stops in local optima there.
    Ctrl-C raises :class:`LocalSearchInterrupted` with the best schedule so far."""
    n = inst.n
    st0 = [int(x) for x in starts]
    if len(st0) != n:
        raise InputError(f"must hold one start per job ({n}), got {len(st0)}", field="starts")
    if n < 2 or (moves is None and seconds < MIN_IMPROVE_SECONDS):
        # no time to place even one order of a long instance (1.6 s at n = 1,000, 10⁷ rounds)
        return np.asarray(st0, dtype=np.int64)
    run = _placer(inst)
    value = _valuer(inst, objective)
    # the search starts from the order of the starts (its serial schedule can be worse than
    # ``starts``: a job placed earlier holds more memory later, so ``starts`` is kept then)
    order = sorted(range(n), key=lambda j: (st0[j], j))
    st = run(order)
    found = [st]  # the local search's best so far, also when Ctrl-C stops it
    try:
        best = _local_search(
            run,
            value,
            order,
            st,
            value(st),
            seed=seed,
            seconds=seconds,
            cap=None if moves is None else int(moves),
            clock=moves is None,
            kick_after=KICK_AFTER * n * n,
            found=found,
        )
    except KeyboardInterrupt as e:
        raise LocalSearchInterrupted(_better(found[0], st0, value)) from e
    return _better(best, st0, value)


def _better(a: list[int], b: list[int], value) -> np.ndarray:
    """The better of two lists of starts (``b`` on a tie)."""
    return np.asarray(a if value(a) < value(b) else b, dtype=np.int64)


def _valuer(inst: Instance, objective: str):
    """The objective of a list of starts: total completion or makespan."""
    responses = inst.responses.tolist()
    total = objective == "total"

    def value(starts: list[int]) -> int:
        ends = list(map(_add, starts, responses))
        return sum(ends) if total else max(ends)

    return value


def _local_search(
    run, value, order, starts, val, *, seed, seconds, cap, clock, kick_after=None, found=None
) -> list[int]:
    """The best starts found by the seeded local search over orders from ``order`` (value
    ``val``): a random swap or reinsertion, kept when no worse; at most ``cap`` moves
    (``None``: no cap), and within ``seconds`` when ``clock``.  With ``kick_after``, that many
    moves without an improvement restart it from the best order kicked (``KICK_MOVES``).
    ``found[0]``, when given, holds the best starts as they improve."""
    rng = random.Random(seed)
    n = len(order)
    deadline = time.monotonic() + seconds
    best_val, best_order, best_starts = val, order, starts
    cur_val, cur_order = val, order
    tries = since = 0
    step = 0.0  # the last move's seconds: on the clock no move starts that would end past it
    while (
        n > 1 and (cap is None or tries < cap) and (not clock or time.monotonic() + step < deadline)
    ):
        tries += 1
        began = time.monotonic()
        if kick_after is not None and since >= kick_after:
            cur_order = best_order.copy()
            for _ in range(KICK_MOVES):
                i, j = rng.sample(range(n), 2)
                cur_order.insert(j, cur_order.pop(i))
            cur_val = value(run(cur_order))
            since = 0
        cand = cur_order.copy()
        i, j = rng.sample(range(n), 2)
        if rng.random() < 0.5:
            cand[i], cand[j] = cand[j], cand[i]
        else:
            cand.insert(j, cand.pop(i))
        st = run(cand)
        v = value(st)
        step = time.monotonic() - began
        since += 1
        if v <= cur_val:
            if v < cur_val:
                since = 0
            cur_val, cur_order = v, cand
            if v <= best_val:
                best_val, best_order, best_starts = v, cand, st
                if found is not None:
                    found[0] = st
    return best_starts


def heuristic_schedule(
    inst: Instance, objective: str = "total", *, seed: int = 0, seconds: float = 0.5
) -> Schedule:
    """The heuristic's kill-free schedule, checked."""
    st = heuristic_starts(inst, objective, seed=seed, seconds=seconds)
    return checked(inst, Schedule.from_starts(inst, st, producer="exact-heuristic"))
