"""Response (main paper, Algorithm 2): a worked example and Lemma 15 (subset monotonicity)."""

from __future__ import annotations

import json

from hypothesis import given, note, settings
from hypothesis import strategies as st

from kvopt.instance import Instance, Job
from kvopt.simulation import simulate


def test_worked_example():
    # M = 16; jobs (s, o): 0 (1,3), 1 (2,5), 2 (1,2).
    # Phase 0, τ=1: eligible s <= 1: jobs 0, 2; proxy min(1,15)=1; 2·(1+1) <= 16, all at 0,
    #   cap 1: both expire at 1.
    # Phase 1, τ=2 (t=1): jobs 0,1,2, proxy 2, 3·4 <= 16: all at 1, cap 2: job 2 completes at 3,
    #   jobs 0, 1 expire at 3.
    # Phase 2, τ=4 (t=3): jobs 0,1, proxy 4, 2·8 <= 16: job 0 completes at 6, job 1 expires at 7.
    # Phase 3, τ=8 (t=7): τ = M/2 is not > M/2, so SPS with proxy 8: job 1 completes at 12.
    inst = Instance.from_arrays(16, [1, 2, 1], [3, 5, 2])
    res = simulate(inst, "response")
    assert [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts] == [
        (0, 0, 1, False),
        (2, 0, 1, False),
        (0, 1, 2, False),
        (1, 1, 2, False),
        (2, 1, 2, True),
        (0, 3, 3, True),
        (1, 3, 4, False),
        (1, 7, 5, True),
    ]


def test_staggered_and_sequential_phases():
    # M = 12; jobs (1, 9), (1, 8).
    # τ=1: proxy 1, 2·2 <= 12: both at 0, expire at 1.  τ=2: proxy 2, 2·4 <= 12: both at 1,
    # expire at 3.  τ=4: proxy 4, 2·8 > 12; per-job peaks d=1: 26, d=2: 14, d=3: 13, d=4: 8,
    # so only d=4 fits (g=1): job 0 at 3, job 1 at 7, both expire (at 7, 11).
    # τ=8 > M/2: one after another: job 0 at 11 (expires at 19), job 1 at 19 (completes at 27).
    # τ=16: job 0 at 27, completes at 36.
    inst = Instance.from_arrays(12, [1, 1], [9, 8])
    res = simulate(inst, "response", instrument=True)
    assert [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts] == [
        (0, 0, 1, False),
        (1, 0, 1, False),
        (0, 1, 2, False),
        (1, 1, 2, False),
        (0, 3, 4, False),
        (1, 7, 4, False),
        (0, 11, 8, False),
        (1, 19, 8, True),
        (0, 27, 9, True),
    ]
    plans = [ph["plan"] for ph in res.instrumentation["phases"]]
    assert plans == [[2, 1], [2, 2], [1, 4], None, None]


@st.composite
def response_instance_and_subset(draw):
    M = draw(st.integers(4, 80))
    n = draw(st.integers(1, 8))
    jobs = []
    for _ in range(n):
        s = draw(st.integers(1, (M - 1) // 2))
        jobs.append(Job(s, draw(st.integers(s + 1, M - s))))
    keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    sub = [j for j in range(n) if keep[j]] or [0]
    return Instance(M, tuple(jobs)), sub


@settings(max_examples=150, deadline=None)
@given(data=response_instance_and_subset())
def test_subset_monotonicity_lemma15(data):
    inst, sub = data
    note(json.dumps(inst.to_dict()))
    note(f"subset {sub}")
    full = simulate(inst, "response").completion_times
    part = simulate(inst.subset(sub), "response").completion_times
    for k, j in enumerate(sub):
        assert part[k] <= full[j], (j, part[k], full[j])
