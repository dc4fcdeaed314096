"""``greedy-area`` (SPEC §6.2; main paper Appendix A.1) — hand-computed traces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.instance import Instance
from kvopt.schedule import memory_profile
from kvopt.simulation import simulate


def _starts(res):
    return {a.job: a.start for a in res.schedule.attempts}


def test_area_order_and_stop_at_first_misfit():
    # M = 10; (s, o): areas 12, 5, 22, 2; peaks 5, 3, 7, 2.  Order 3, 1, 0, 2.
    # t=0: 3 (2), 1 (5), 0 (10) fit; 2 would need 17.  It fits only when job 0 ends (t=3).
    inst = Instance.from_arrays(10, [2, 1, 3, 1], [3, 2, 4, 1])
    res = simulate(inst, "greedy-area")
    assert _starts(res) == {3: 0, 1: 0, 0: 0, 2: 3}
    assert res.completion_times == (3, 2, 7, 1)


def test_backfill():
    # A = (2,1): area 3 peak 3; B = (7,1): area 8 peak 8; C = (1,3): area 9 peak 4.
    inst = Instance.from_arrays(10, [2, 7, 1], [1, 1, 3])
    plain = simulate(inst, "greedy-area")
    assert _starts(plain) == {0: 0, 1: 1, 2: 2}  # B blocks C at t=0
    back = simulate(inst, "greedy-area", params={"backfill": True})
    assert _starts(back) == {0: 0, 2: 0, 1: 3}  # C skips ahead of B


def test_arrivals_join_in_area_order():
    inst = Instance.from_arrays(6, [1, 1, 1], [4, 1, 2], [0, 1, 1])
    # t=0: job 0 (peak 5); t=1: jobs 1 (peak 2) and 2 (peak 3) wait; t=4: 1 then 2 (2+3 <= 6)
    res = simulate(inst, "greedy-area")
    assert _starts(res) == {0: 0, 1: 4, 2: 4}


@settings(max_examples=80, deadline=None)
@given(
    st.integers(4, 40).flatmap(
        lambda M: st.tuples(
            st.just(M),
            st.lists(
                st.integers(1, M - 1).flatmap(
                    lambda s: st.tuples(st.just(s), st.integers(1, M - s))
                ),
                min_size=1,
                max_size=12,
            ),
        )
    )
)
def test_reserved_peaks_never_exceed_memory(data):
    M, jobs = data
    inst = Instance.from_arrays(M, [s for s, _ in jobs], [o for _, o in jobs])
    res = simulate(inst, "greedy-area")
    assert res.stats.kills == 0
    # at every round the running jobs' peaks sum to at most M (stronger than memory <= M)
    horizon = max(res.completion_times)
    peaks = [0] * horizon
    for a in res.schedule.attempts:
        for t in range(a.start, a.start + a.rounds):
            peaks[t] += int(inst.peaks[a.job])
    assert max(peaks) <= M
    assert memory_profile(inst, res.schedule).max() <= M
