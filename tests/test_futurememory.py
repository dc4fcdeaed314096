"""The shared exact future-memory check against a round-by-round count."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.futurememory import (
    FutureMemory,
    RunningSet,
    _future_peak_small,
    _next_fit_round_small,
    fits_future,
    future_peak,
    next_fit_round,
    next_fit_round_sorted,
    peak_sorted,
)


def _count(prompts, progress, remaining) -> int:
    """Memory in every future round, summed job by job (the definition, SPEC §1)."""
    horizon = max(remaining, default=0)
    peak = 0
    for k in range(horizon):
        m = sum(s + g + k + 1 for s, g, r in zip(prompts, progress, remaining) if k < r)
        peak = max(peak, m)
    return peak


jobs = st.lists(
    st.tuples(st.integers(1, 30), st.integers(0, 20), st.integers(1, 40)), min_size=0, max_size=12
)


@settings(max_examples=400, deadline=None)
@given(jobs, st.integers(1, 400))
def test_agrees_with_round_by_round(js, M):
    s = [j[0] for j in js]
    g = [j[1] for j in js]
    r = [j[2] for j in js]
    assert future_peak(s, g, r) == _count(s, g, r)
    assert fits_future(M, s, g, r) == (_count(s, g, r) <= M)


@settings(max_examples=100, deadline=None)
@given(jobs, st.lists(st.tuples(st.integers(1, 30), st.integers(1, 40)), max_size=6))
def test_incremental_scan(js, cands):
    M = 150
    fm = FutureMemory(M, [j[0] for j in js], [j[1] for j in js], [j[2] for j in js])
    s, g, r = list(fm.prompts), list(fm.progress), list(fm.remaining)
    for cs, cr in cands:
        ok = _count(s + [cs], g + [0], r + [cr]) <= M
        assert fm.try_add(cs, cr) == ok
        if ok:
            s, g, r = s + [cs], g + [0], r + [cr]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 3000), st.integers(0, 3000), st.integers(1, 9)),
        min_size=0,
        max_size=150,
    )
)
def test_plain_python_and_numpy_agree(js):
    # lists up to _SMALL jobs take the plain-Python path, arrays always numpy (issue 54);
    # remaining lengths from a small range make many ties
    s = [j[0] for j in js]
    g = [j[1] for j in js]
    r = [j[2] for j in js]
    want = future_peak(np.array(s, dtype=np.int64), np.array(g), np.array(r))
    assert future_peak(s, g, r) == want
    assert _future_peak_small(s, g, r) == want


def test_peak_not_at_start():
    # one long job and one short fat job: the peak is in the short job's last round
    assert future_peak([1, 10], [0, 0], [10, 3]) == _count([1, 10], [0, 0], [10, 3])
    assert future_peak([], [], []) == 0


running = st.lists(
    st.tuples(st.integers(1, 12), st.integers(0, 15), st.integers(1, 25)), min_size=0, max_size=6
)


@settings(max_examples=400, deadline=None)
@given(running, st.integers(1, 12), st.integers(1, 25), st.integers(2, 120))
def test_next_fit_round_is_the_first_round_that_fits(js, prompt, rounds, M):
    # running job (s, decoded by now, estimated length e); try every later start round u:
    # at u it has decoded g + (u - now) and is expected to run max(e - g', 1) more rounds
    now = 30
    s = [j[0] for j in js]
    starts = [now - j[1] for j in js]
    est = [j[2] for j in js]

    def fits(u):
        g = [u - st for st in starts]
        r = [max(e - gg, 1) for e, gg in zip(est, g)]
        return _count(s + [prompt], g + [0], r + [rounds]) <= M

    # beyond every expected end the check only gets harder (or stays): this range decides
    last = max([now + 1] + [st + e for st, e in zip(starts, est)])
    brute = next((u for u in range(now + 1, last + 2) if fits(u)), None)
    assert next_fit_round(M, s, starts, est, now, prompt, rounds) == brute
    # numpy arrays take the numpy form, lists the plain-Python one (issue 54)
    arrays = (np.array(s, dtype=np.int64), np.array(starts), np.array(est, dtype=np.int64))
    assert next_fit_round(M, *arrays, now, prompt, rounds) == brute


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 400), st.integers(0, 300), st.integers(1, 400)),
        min_size=0,
        max_size=80,
    ),
    st.integers(1, 400),
    st.integers(1, 400),
    st.integers(1, 40000),
)
def test_next_fit_round_plain_python_and_numpy_agree(js, prompt, rounds, M):
    now = 300
    s = [j[0] for j in js]
    starts = [now - j[1] for j in js]
    est = [j[2] for j in js]
    arrays = (np.array(s, dtype=np.int64), np.array(starts, dtype=np.int64), np.array(est))
    want = next_fit_round(M, *arrays, now, prompt, rounds)
    assert _next_fit_round_small(M, s, starts, est, now, prompt, rounds) == want
    assert next_fit_round(M, s, starts, est, now, prompt, rounds) == want


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 300), st.integers(0, 40), st.integers(1, 12), st.booleans()),
        min_size=0,
        max_size=40,
    ),
    st.lists(st.tuples(st.integers(1, 300), st.integers(1, 12)), max_size=5),
    st.integers(1, 3000),
)
def test_running_set_scan_is_the_future_memory_scan(js, cands, M):
    """Issue 54: the scan of ``FutureCheckGreedy`` over a :class:`RunningSet` (kept in
    ``L`` order, updated on start and end) with :func:`peak_sorted` and
    :func:`next_fit_round_sorted` gives what the rebuilt lists gave (FutureMemory and
    next_fit_round, the reference) — also for jobs past their estimate and many ties."""
    now = 50
    rs = RunningSet()
    s, starts, est = [], [], []
    for k, (p, g, e, _gone) in enumerate(js):
        rs.add(k, p, now - g, e)
        s.append(p), starts.append(now - g), est.append(e)
    for k, (*_, gone) in enumerate(js):  # some end again: the set forgets them
        if gone:
            rs.remove(k)
    keep = [k for k, j in enumerate(js) if not j[3]]
    s, starts, est = [s[k] for k in keep], [starts[k] for k in keep], [est[k] for k in keep]
    assert rs.Ls == sorted(rs.Ls) and len(rs) == len(keep)
    fm = FutureMemory(M, s, [now - x for x in starts],
                      [max(e - (now - x), 1) for e, x in zip(est, starts)])  # fmt: skip
    for k, (p, e) in enumerate(cands):
        assert next_fit_round_sorted(M, rs.Ls, rs.cs, now, p, e) == next_fit_round(
            M, s, starts, est, now, p, e
        )
        i = np.searchsorted(rs.Ls, now + e - 1, side="right")
        Ls, cs = list(rs.Ls), list(rs.cs)
        Ls.insert(i, now + e - 1), cs.insert(i, p + 1 - now)
        ok = peak_sorted(Ls, cs, now) <= M
        assert peak_sorted(Ls, cs, now) == fm.peak_with(p, e)
        assert fm.try_add(p, e) == ok
        if ok:
            rs.add(100 + k, p, now, e)
            s, starts, est = s + [p], starts + [now], est + [e]
