"""The shared exact future-memory check against a round-by-round count."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.futurememory import FutureMemory, fits_future, future_peak


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


def test_peak_not_at_start():
    # one long job and one short fat job: the peak is in the short job's last round
    assert future_peak([1, 10], [0, 0], [10, 3]) == _count([1, 10], [0, 0], [10, 3])
    assert future_peak([], [], []) == 0
