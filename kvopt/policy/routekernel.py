"""``route-online`` compiled (Numba, the ``fast`` extra): the engine, the slots and the sub-policies
of a plain run as one loop (issue 54).

:func:`run_kernel` computes what :func:`kvopt.engine.core.run` computes for a
:class:`~kvopt.policy.route.RouteOnline` object with literal slots (``compact=False``): the
same attempts (in the schedule's order), the same engine statistics (events and event
times) and the same unit-model clock sums, from flat arrays instead of the engine's view,
:class:`~kvopt.policy.blackbox.SlotHost`, :class:`~kvopt.policy.rect.Rect` and
:class:`~kvopt.policy.response.Response`.  The pure-Python classes stay **the reference**:
every step below names the step of theirs it copies, ``tests/test_route_kernel.py`` compares
both on random, generated and bundled instances, and any run the kernel is not sure to copy
(a memory overflow, a stall, an idle run, a number past int64) stops it with a status other
than :data:`OK`, after which the reference runs and raises or decides as it always did.
Only :meth:`RouteOnline.compiled_run <kvopt.policy.route.RouteOnline.compiled_run>`
imports this module, lazily (``kvopt.layers.NUMBA_MODULES``).

What the loop copies, per event time ``t`` (``kvopt.engine.core``): the attempts ending at
``t`` in the engine heap's order (completions by job, then expiries by job), the arrivals
at ``t`` by job, one wake; the meta-policy's bookkeeping (``Route.on_real_event``); the
slot host's delivery of the completions and expiries to the slot's sub-policy (Rect walks
them one at a time, Response ends them in its SPS run and advances); a new slot when
``t`` reaches the slot's end (``SlotMeta._next_slot``: its pool is the unfinished members
of the part; the sub-policy starts afresh at once).  Every start is clipped to the slot's
end (``SlotHost._start``).  Wake-ups the host asks for (Response's groups, and its overflow
watch: the first round the running set would overflow if no attempt ended before its
cap) reach the engine only inside the slot, as in ``SlotHost._outer_wake``.  An attempt is
written out when it starts (its end is known then: its cap or its response length), the
starts of one call by job: the schedule's order, with no sort afterwards.
"""

from __future__ import annotations

import heapq

import numpy as np

from . import kernelheaps
from .kernelheaps import HN, _grow, _hpop, _hpush, _ipush, _iremove

try:  # the optional ``fast`` extra
    import numba as _numba
except ImportError:  # pragma: no cover - exercised where numba is not installed
    _numba = None

#: the kernel's statuses: OK, or why it stopped and left the run to the reference
OK, OVERFLOW, STALL, IDLE, RANGE = 0, 1, 2, 3, 4
#: the branches (``kvopt.policy.route``)
_P, _R, _L = 0, 1, 2
#: slots of the scalar state array ``S``
_C, _K, _USED, _NATT, _STATUS, _NS, _HN, _AN, _CN = 0, 1, 2, 3, 4, 5, HN, 7, 8
#: an expiry's second key in the engine's heap (after every completion's: the job index)
_EXPIRY = 1 << 40
#: the sub-policy of the current slot
_NONE, _RECT, _RECT_CAPPED, _RESPONSE = 0, 1, 2, 3
#: a limit on every product the kernel forms (budgets, times); past it: RANGE
_BIG = 1 << 62
#: sentinels at the bottom of each list heap
_PAD = 16


def _peak_one(p, tau, d):
    """:func:`kvopt.policy.sps.peak_one`."""
    best = 0
    for k in range(2):
        x = (tau - 1) % d if k == 0 else d - 1
        if x >= tau:
            continue
        m = (tau - x + d - 1) // d
        v = m * (p + x + 1) + d * m * (m - 1) // 2
        if v > best:
            best = v
    return best


def _sps_plan(p, tau, k, memory, stagger):
    """:func:`kvopt.policy.sps.sps_plan` as ``(g, d)``; ``g = 0`` for ``None``."""
    if k <= 0:
        return 0, 0
    if k * (p + tau) <= memory:
        return k, tau
    if p + tau > memory:
        return 0, 0
    if not stagger:
        return min(k, memory // (p + tau)), tau
    best_g, best_d = 0, 1
    for d in range(1, tau + 1):
        g = memory // _peak_one(p, tau, d)
        if g > k:
            g = k
        if g and g * best_d > best_g * d:
            best_g, best_d = g, d
    return best_g, best_d


def _start(j, cap, t, end, S, ah, ch, prompts, responses, rstart, sbuf):
    """``SlotHost._start`` (the cap clipped to the slot's end) then the engine's ``_apply``."""
    left = end - t
    c = left if cap > left else cap
    o = responses[j]
    if o <= c:
        _ipush(ah, rstart, 2, S, _AN, t + o, j, j)
    else:
        _ipush(ah, rstart, 2, S, _AN, t + c, _EXPIRY + j, j)
    rstart[0, j] = t
    rstart[1, j] = t + c  # where the host expects it to end (it knows no response length)
    _ipush(ch, rstart, 3, S, _CN, t + c, j, j)
    sbuf[S[_NS]] = j  # the starts of this call, written out after it by job
    S[_NS] += 1
    S[_C] += prompts[j] + 1 - t
    S[_K] += 1


def _rect_scan(
    t, end, capped, M, S, hk, hj, w, rlv, alv, pows, ah, ch, prompts, responses, rstart, sbuf
):
    """``Rect._scan``: start the smallest budgets while they fit, stop at the first that does not."""
    while S[_HN] > 0:
        j = hj[0]
        wj = w[j]
        if S[_USED] + wj > M:
            break
        _hpop(hk, hj, S)
        S[_USED] += wj
        lv = rlv[j]
        alv[j] = lv
        cap = pows[lv]
        if capped and cap > prompts[j]:
            cap = prompts[j]
        _start(j, cap, t, end, S, ah, ch, prompts, responses, rstart, sbuf)


def _wake(due, t, end, wh, vh, woken):
    """``SlotHost._wake``: the host's wake-up, and the engine's one inside the slot."""
    heapq.heappush(vh, due)
    if due < end and due > t and due != woken[0]:
        woken[0] = due
        heapq.heappush(wh, due)


def _overflow_wake(t, end, M, S, ch, rstart, wh, woken):
    """The end of ``SlotHost._call``: if the running set would overflow before the first
    round at which the host expects one of its attempts to end (their caps, clipped to the
    slot), the host asks to be woken then (an engine wake-up, inside the slot).  Without an
    overflow the wake-up finds nothing to do, but it is an event of the run all the same."""
    K = S[_K]
    if K == 0:
        return
    t_over = (M - S[_C]) // K + 1
    if t_over < ch[0, 0]:  # ch holds the running attempts (K > 0)
        if t_over < end and t_over > t and t_over != woken[0]:
            woken[0] = t_over
            heapq.heappush(wh, t_over)


def _response_call(t, end, M, stagger, S, R, pool, npool, order, inrun, done, pows, maxphase,
                   wh, vh, woken, ah, ch, prompts, responses, rstart, sbuf):  # fmt: skip
    """``PhasedSPS.on_events`` after the ends were recorded (``SPSRun.ended``), with
    ``SPSRun.advance`` and ``Response.next_phase``.  ``R``: phase, has_run, sequential,
    g, d, t0, cap, next_idx, live, run_len, pool_done."""
    while True:
        if R[1]:  # run.advance(now)
            if R[2]:
                if R[8] == 0 and R[7] < R[9]:
                    j = order[R[7]]
                    R[7] += 1
                    inrun[j] = True
                    R[8] += 1
                    _start(j, R[6], t, end, S, ah, ch, prompts, responses, rstart, sbuf)
            else:
                g, d = R[3], R[4]
                while R[7] < R[9]:
                    due = R[5] + (R[7] // g) * d
                    if due > t:
                        _wake(due, t, end, wh, vh, woken)
                        break
                    hi = min(R[9], R[7] + g)
                    for i in range(R[7], hi):
                        j = order[i]
                        inrun[j] = True
                        R[8] += 1
                        _start(j, R[6], t, end, S, ah, ch, prompts, responses, rstart, sbuf)
                    R[7] = hi
            if not (R[7] >= R[9] and R[8] == 0):
                return
        if R[10] == npool:
            R[1] = 0
            return
        R[1] = 0
        while R[1] == 0:
            R[0] += 1
            if R[0] > maxphase:
                S[_STATUS] = RANGE
                return
            tau = pows[R[0]]
            k = 0
            for i in range(npool):
                j = pool[i]
                if not done[j] and prompts[j] <= tau:
                    order[k] = j
                    k += 1
            if k == 0:
                continue
            if 2 * tau > M:
                R[2], R[3], R[4] = 1, 0, 0
            else:
                g, d = _sps_plan(tau, tau, k, M, stagger)
                if g == 0:  # never for Response (2 tau <= M); the reference words the error
                    S[_STATUS] = RANGE
                    return
                R[2], R[3], R[4] = 0, g, d
            R[5], R[6], R[7], R[8], R[9] = t, tau, 0, 0, k
            R[1] = 1


def _kernel(n, M, prompts, responses, large, worder, arr_a, arr_j, base, stagger, idle_calls, cap0):
    """The run; see the module docstring.  Returns ``(status, job, start, rounds, completed,
    n_events, n_times, busy_seconds, memory_seconds, last round)``."""
    S = np.zeros(9, np.int64)
    sbuf = np.empty(n, np.int64)
    # base^k below _BIG: Rect's caps and budgets, Response's phases, slot lengths
    npow = 1
    while npow < 63 and (base ** (npow - 1)) < _BIG // base:
        npow += 1
    pows = np.empty(npow, np.int64)
    pows[0] = 1
    for i in range(1, npow):
        pows[i] = pows[i - 1] * base
    maxphase = npow - 1
    w = np.empty(n, np.int64)
    for j in range(n):
        w[j] = M if large[j] else 2 * prompts[j]
    done = np.zeros(n, np.bool_)
    entered = np.zeros(n, np.bool_)
    certified = np.zeros(n, np.bool_)
    inrun = np.zeros(n, np.bool_)
    # start, end as the host expects it, places in the heaps ah and ch
    rstart = np.zeros((4, n), np.int64)
    rlv = np.zeros(n, np.int64)
    alv = np.zeros(n, np.int64)
    pool = np.empty(n, np.int64)
    order = np.empty(n, np.int64)
    cj = np.empty(n, np.int64)
    ej = np.empty(n, np.int64)
    einfo = np.empty(n, np.int64)
    a_job = np.empty(cap0, np.int64)
    a_start = np.empty(cap0, np.int64)
    a_rounds = np.empty(cap0, np.int64)
    a_comp = np.empty(cap0, np.bool_)
    # the wake-up heaps as lists, each with _PAD sentinels (_BIG, never reached) at the
    # bottom: a Numba list reallocates whenever it shrinks below a quarter of its room, so a
    # heap of one or two entries would reallocate at every push and pop
    ah = np.empty((3, n), np.int64)  # the engine's heap of attempt ends: (round, kind, job)
    ch = np.empty((3, n), np.int64)  # the host's expected ends (SlotHost.ends): (round, job)
    wh = [_BIG] * _PAD  # the engine's wake-ups
    vh = [_BIG] * _PAD  # the slot host's wake-ups (Response's), slot rounds as rounds
    hk = np.empty(n, np.int64)  # Rect's pending attempts, a 4-ary heap of (budget, job)
    hj = np.empty(n, np.int64)
    woken = np.zeros(1, np.int64)
    R = np.zeros(11, np.int64)
    n_live = np.zeros(3, np.int64)
    stage, part, slot_end, host = 0, -1, 0, _NONE
    npool = 0
    ndone = 0
    ai, na = 0, arr_a.shape[0]
    n_events, n_times, idle = 0, 0, 0
    busy, memsec = 0.0, 0.0
    t = 0
    first = True
    while True:
        # --- the engine: ends at t (completions by job, then expiries by job) ---------
        nc, ne = 0, 0
        while S[_AN] > 0 and ah[0, 0] == t:
            j = ah[2, 0]
            kind = 0 if ah[1, 0] < _EXPIRY else 1
            _iremove(ah, rstart, 2, S, _AN, j)
            _iremove(ch, rstart, 3, S, _CN, j)
            st = rstart[0, j]
            rstart[1, j] = -1
            S[_C] -= prompts[j] + 1 - st
            S[_K] -= 1
            if kind == 0:
                done[j] = True
                ndone += 1
                cj[nc] = j
                nc += 1
            else:
                ej[ne] = j
                einfo[ne] = t - st
                ne += 1
        a0 = ai
        while ai < na and arr_a[ai] == t:
            ai += 1
        has_wake = False
        while wh[0] == t:
            heapq.heappop(wh)
            has_wake = True
        nev = nc + ne + (ai - a0) + (1 if has_wake else 0)
        if S[_K] and S[_C] + S[_K] * t > M:
            S[_STATUS] = OVERFLOW
            break
        called = first or nev > 0
        S[_NS] = 0
        if called:
            first = False
            # --- Route.on_real_event -------------------------------------------
            for i in range(nc):
                j = cj[i]
                b = _L if large[j] else (_R if certified[j] else _P)
                n_live[b] -= 1
            for i in range(ne):
                j = ej[i]
                if not large[j] and not certified[j] and einfo[i] >= prompts[j]:
                    certified[j] = True
                    n_live[_P] -= 1
                    n_live[_R] += 1
            for i in range(a0, ai):
                j = arr_j[i]
                if not entered[j]:
                    entered[j] = True
                    n_live[_L if large[j] else _P] += 1
            # --- SlotMeta._meta_events: deliver inside the slot -------------------
            # Rect's steps of this call (below, one place: the kernel compiles Rect once):
            # -1 its first scan in a new slot, 0 … nc+ne-1 the ends it is delivered
            rlo, rhi, rcapped = 0, 0, host == _RECT_CAPPED
            if t < slot_end:
                if host == _RECT or host == _RECT_CAPPED:
                    rhi = nc + ne
                elif host == _RESPONSE:
                    wake = False
                    while vh[0] <= t:
                        heapq.heappop(vh)
                        wake = True
                    if nc + ne > 0 or wake:
                        for i in range(nc):
                            j = cj[i]
                            R[10] += 1
                            if inrun[j]:
                                inrun[j] = False
                                R[8] -= 1
                        for i in range(ne):
                            j = ej[i]
                            if inrun[j]:
                                inrun[j] = False
                                R[8] -= 1
                        _response_call(t, slot_end, M, stagger, S, R, pool, npool, order, inrun,
                                       done, pows, maxphase, wh, vh, woken, ah, ch, prompts,
                                       responses, rstart, sbuf)  # fmt: skip
                        _overflow_wake(t, slot_end, M, S, ch, rstart, wh, woken)
                if host != _NONE and n_live[part] == 0:
                    host = _NONE
            else:  # --- SlotMeta._next_slot (literal slots) ------------------------
                part += 1
                if part >= 3:
                    part = 0
                    stage += 1
                if stage >= npow or pows[stage] > _BIG - t:
                    S[_STATUS] = RANGE
                else:
                    slot_end = t + pows[stage]
                    heapq.heappush(wh, slot_end)
                    host = _NONE
                    if n_live[part] > 0:
                        woken[0] = -1
                        if part == _R:  # Response's pool, by job
                            npool = 0
                            for j in range(n):
                                if entered[j] and not done[j] and certified[j]:
                                    pool[npool] = j
                                    npool += 1
                            host = _RESPONSE
                            R[:] = 0
                            R[0] = -1
                            for i in range(npool):
                                inrun[pool[i]] = False
                            while vh[0] < _BIG:
                                heapq.heappop(vh)
                            _response_call(t, slot_end, M, stagger, S, R, pool, npool, order,
                                           inrun, done, pows, maxphase, wh, vh, woken, ah, ch,
                                           prompts, responses, rstart, sbuf)  # fmt: skip
                        else:
                            # Rect's heap: the pool by (width, job) = (level-0 budget, job),
                            # sorted, hence a heap (the order of heapq.heapify's pops)
                            host = _RECT_CAPPED if part == _P else _RECT
                            h = 0
                            for i in range(n):
                                j = worder[i]
                                if entered[j] and not done[j]:
                                    if (part == _L) == large[j] and not certified[j]:
                                        hk[h] = w[j]
                                        hj[h] = j
                                        rlv[j] = 0
                                        h += 1
                            S[_HN] = h
                            S[_USED] = 0
                            rlo, rhi, rcapped = -1, 0, part == _P
                        if host == _RESPONSE:
                            _overflow_wake(t, slot_end, M, S, ch, rstart, wh, woken)
            for idx in range(rlo, rhi):  # Rect.on_events: each end, then the scan
                if 0 <= idx < nc:
                    S[_USED] -= w[cj[idx]]
                elif idx >= nc:
                    i = idx - nc
                    j = ej[i]
                    S[_USED] -= w[j]
                    if not (rcapped and einfo[i] >= prompts[j]):
                        lv = alv[j] + 1
                        if lv >= npow or w[j] > _BIG // pows[lv]:
                            S[_STATUS] = RANGE
                            break
                        rlv[j] = lv
                        _hpush(hk, hj, S, w[j] * pows[lv], j)
                _rect_scan(t, slot_end, rcapped, M, S, hk, hj, w, rlv, alv, pows, ah, ch, prompts,
                           responses, rstart, sbuf)  # fmt: skip
            if rhi > rlo:
                _overflow_wake(t, slot_end, M, S, ch, rstart, wh, woken)
            if S[_STATUS] != OK:
                break
            n_times += 1
            # the attempts started in this call, by job: the schedule's order (start, job),
            # each known in full at its start (the engine records it at its end)
            k = S[_NS]
            if k:
                if k > 16:
                    sbuf[:k].sort()
                else:  # insertion sort, no allocation
                    for i in range(1, k):
                        x = sbuf[i]
                        h = i - 1
                        while h >= 0 and sbuf[h] > x:
                            sbuf[h + 1] = sbuf[h]
                            h -= 1
                        sbuf[h + 1] = x
                m = S[_NATT]
                if m + k > a_job.shape[0]:
                    a_job = _grow(a_job, m + k)
                    a_start = _grow(a_start, m + k)
                    a_rounds = _grow(a_rounds, m + k)
                    a_comp = _grow(a_comp, m + k)
                for i in range(k):
                    j = sbuf[i]
                    c = rstart[1, j] - t
                    a_job[m + i] = j
                    a_start[m + i] = t
                    if responses[j] <= c:
                        a_rounds[m + i] = responses[j]
                        a_comp[m + i] = True
                    else:
                        a_rounds[m + i] = c
                        a_comp[m + i] = False
                S[_NATT] = m + k
        n_events += nev
        C, K = S[_C], S[_K]
        if K and C + K * t > M:
            S[_STATUS] = OVERFLOW
            break
        if ndone == n:
            break
        if called:
            if S[_NS] or K or ai < na or nc + ne + (ai - a0) > 0:
                idle = 0
            else:
                idle += 1
                if idle > idle_calls:
                    S[_STATUS] = IDLE
                    break
        nxt = -1
        if S[_AN] > 0:
            nxt = ah[0, 0]
        if wh[0] < _BIG and (nxt < 0 or wh[0] < nxt):
            nxt = wh[0]
        if ai < na and (nxt < 0 or arr_a[ai] < nxt):
            nxt = arr_a[ai]
        if nxt < 0:
            S[_STATUS] = STALL
            break
        if K:  # the engine's overflow wake-up: a running set that overflows before any end
            if (M - C) // K + 1 < ah[0, 0]:
                S[_STATUS] = OVERFLOW
                break
        # Clock.advance under ``unit``, term for term
        r = nxt - t
        if K:
            k0 = C + K * t
            busy += float(r)
            memsec += r * k0 * 1.0 + K * 1.0 * (r * (r - 1) / 2)
        t = nxt
    m = S[_NATT]
    return (S[_STATUS], a_job[:m], a_start[:m], a_rounds[:m], a_comp[:m], n_events, n_times,
            busy, memsec, t)  # fmt: skip


# the helpers of the hot path are inlined in Numba's IR: a call passes its arrays and lists
# with an atomic reference count each, a fifth of the run before (issue 54)
_INLINE = ("_isift", "_ipush", "_iremove", "_start", "_hpush", "_hpop", "_rect_scan", "_wake",
           "_overflow_wake")  # fmt: skip
_CALLED = ("_peak_one", "_sps_plan", "_grow", "_response_call", "_kernel")
#: the helpers that live in :mod:`kvopt.policy.kernelheaps` (their calls to each other
#: resolve in that module's namespace, so they are compiled there too)
_HEAPS = ("_isift", "_ipush", "_iremove", "_hpush", "_hpop", "_grow")
_PY = {
    name: getattr(kernelheaps, name) if name in _HEAPS else globals()[name]
    for name in _INLINE + _CALLED
}


def _compile(cache: bool) -> None:
    assert _numba is not None
    g = globals()
    for name in _INLINE:
        g[name] = _numba.njit(cache=cache, inline="always")(_PY[name])
    for name in _CALLED:
        g[name] = _numba.njit(cache=cache)(_PY[name])
    for name in _HEAPS:
        setattr(kernelheaps, name, g[name])


if _numba is not None:
    # compiled at the first run (about 35 s of CPU) and cached next to this file, or in Numba's
    # user-wide cache; without any writable cache, once per process (as kvopt.exact.bnb)
    try:
        _compile(cache=True)
    except RuntimeError:  # pragma: no cover - "no locator available": nowhere to cache
        _compile(cache=False)


def available() -> bool:
    """Is Numba installed (``pip install kvopt[fast]``)?"""
    return _numba is not None


def run_kernel(n, memory, prompts, responses, large, arrivals, base, stagger, idle_calls):
    """Run the loop on int64 arrays (its Python source with ``NUMBA_DISABLE_JIT=1``)."""
    order = np.argsort(arrivals, kind="stable")
    arr_a = np.ascontiguousarray(arrivals[order], np.int64)
    arr_j = np.ascontiguousarray(order, np.int64)
    prompts = np.ascontiguousarray(prompts, np.int64)
    large = np.ascontiguousarray(large, np.bool_)
    width = np.where(large, np.int64(memory), 2 * prompts)
    worder = np.lexsort((np.arange(n), width)).astype(np.int64)  # by (width, job)
    return _kernel(
        int(n), int(memory), prompts, np.ascontiguousarray(responses, np.int64), large,
        worder, arr_a, arr_j, int(base), bool(stagger), int(idle_calls), int(40 * n + 1024),
    )  # fmt: skip


def run_compiled(n, memory, prompts, responses, large, arrivals, base, stagger, idle_calls):
    """What :meth:`RouteOnline.compiled_run <kvopt.policy.route.RouteOnline.compiled_run>`
    returns (:mod:`kvopt.engine.fastpath`): the attempts in the schedule's order (start,
    then job) and the run's counts; ``None`` unless the kernel ran to the end (:data:`OK`)."""
    out = run_kernel(n, memory, prompts, responses, large, arrivals, base, stagger, idle_calls)
    status, job, start, rounds, completed, n_events, n_times, busy, memsec, last = out
    if status != OK:
        return None
    return {
        "job": job, "start": start, "rounds": rounds, "completed": completed,
        "n_events": int(n_events), "n_times": int(n_times),
        "busy_seconds": float(busy), "memory_seconds": float(memsec), "now": int(last),
    }  # fmt: skip


__all__ = ["IDLE", "OK", "OVERFLOW", "RANGE", "STALL", "available", "run_compiled", "run_kernel"]
