"""SPS (the toolkit's reconstruction, SPEC §6.1): plan choice and a worked example."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.instance import Instance
from kvopt.policy.sps import peak_one, sps_plan
from kvopt.simulation import simulate


def brute_peak(p, tau, d, g=1):
    """Peak proxy memory of the infinite pattern, by summing over a long window."""
    best = 0
    for t in range(4 * tau + 4 * d):
        mem = 0
        for j in range(0, t // d + 1):
            u = t - j * d
            if 0 <= u < tau:
                mem += g * (p + u + 1)
        best = max(best, mem)
    return best


@settings(max_examples=150, deadline=None)
@given(p=st.integers(1, 12), tau=st.integers(1, 12), data=st.data())
def test_peak_formula_matches_pattern(p, tau, data):
    d = data.draw(st.integers(1, tau))
    assert peak_one(p, tau, d) == brute_peak(p, tau, d)


@settings(max_examples=150, deadline=None)
@given(p=st.integers(1, 10), tau=st.integers(1, 10), k=st.integers(1, 12), M=st.integers(2, 80))
def test_plan_is_feasible_and_best(p, tau, k, M):
    plan = sps_plan(p, tau, k, M)
    if p + tau > M:
        assert plan is None
        return
    g, d = plan
    if k * (p + tau) <= M:
        assert (g, d) == (k, tau)
        return
    assert 1 <= g <= k and 1 <= d <= tau
    assert g * peak_one(p, tau, d) <= M
    for d2 in range(1, tau + 1):
        g2 = min(k, M // peak_one(p, tau, d2))
        # nothing has a higher throughput; equal throughput only with a larger d
        assert g2 * d <= g * d2
        if g2 * d == g * d2:
            assert d2 >= d


def test_plan_by_hand():
    # p = 2, τ = 4, M = 30, k = 6 jobs (6·6 = 36 > 30, so not all at once).
    # Peaks per job: d=1: 3+4+5+6 = 18 (g=1, g/d=1); d=2: max(3+5, 4+6) = 10 (g=3, 3/2);
    # d=3: max(3+6, 4, 5) = 9 (g=3, 1); d=4: 2+4 = 6 (g=5, 5/4).  Best: g=3, d=2.
    assert sps_plan(2, 4, 6, 30) == (3, 2)
    # all fit together: 4·(2+4) = 24 <= 30
    assert sps_plan(2, 4, 4, 30) == (4, 4)


def test_worked_example():
    # Standalone sps: proxy = largest prompt 2, cap = largest response 4, plan (3, 2):
    # jobs 0,1,2 start at 0 and jobs 3,4,5 at 2; each runs to its own length (<= 4).
    inst = Instance.from_arrays(30, [2, 1, 2, 2, 1, 2], [4, 2, 4, 3, 4, 1])
    res = simulate(inst, "sps")
    assert [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts] == [
        (0, 0, 4, True),
        (1, 0, 2, True),
        (2, 0, 4, True),
        (3, 2, 3, True),
        (4, 2, 4, True),
        (5, 2, 1, True),
    ]


def test_plain_batches_option():
    # stagger=false: d = τ, g = ⌊30 / 6⌋ = 5: jobs 0..4 at 0, job 5 at 4
    inst = Instance.from_arrays(30, [2, 1, 2, 2, 1, 2], [4, 2, 4, 3, 4, 1])
    res = simulate(inst, "sps", {"stagger": False})
    assert [a.start for a in res.schedule.attempts] == [0, 0, 0, 0, 0, 4]
