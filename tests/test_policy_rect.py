"""Rect (main paper, Algorithm 1): a worked example, Lemma 4 and Lemma 5 as properties."""

from __future__ import annotations

import json
from fractions import Fraction

from hypothesis import given, note, settings
from hypothesis import strategies as st

from kvopt.instance import Instance, Job
from kvopt.policy.rect import lemma5_bounds, widths
from kvopt.simulation import simulate


def attempts(res):
    return [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts]


def test_worked_example():
    # M = 16, Λ = 4.  Widths: job 0 (s=2) 4, job 1 (s=3) 6, job 2 (s=5, large) 16, job 3 (s=2) 4.
    # Level-0 budgets 4, 6, 16, 4 -> queue (4,0) (4,3) (6,1) (16,2).
    # t=0: scan starts 0, 3, 1 (widths 14); job 2 does not fit -> stop.  Caps 1.
    # t=1: completion 0 (o=1): scan, (16,2) does not fit (10+16).  Expiry 1: push (12,1,1),
    #      scan starts job 1 (cap 2).  Expiry 3: push (8,3,1), scan starts job 3 (cap 2).
    # t=3: completion 3 (o=2, started at 1); scan: job 2 does not fit (6+16).  Expiry 1:
    #      push (24,1,2); scan starts job 2 (cap 1), then (24,1) does not fit.
    # t=4: expiry 2 -> push (32,2,1); scan starts job 1 (cap 4), completes at 7 (o=3).
    # t=7: scan starts job 2 (cap 2), expires at 9; t=9: job 2 (cap 4) completes at 12.
    inst = Instance.from_arrays(16, [2, 3, 5, 2], [1, 3, 3, 2])
    res = simulate(inst, "rect")
    assert attempts(res) == [
        (0, 0, 1, True),
        (1, 0, 1, False),
        (3, 0, 1, False),
        (1, 1, 2, False),
        (3, 1, 2, True),
        (2, 3, 1, False),
        (1, 4, 3, True),
        (2, 7, 2, False),
        (2, 9, 3, True),
    ]


@st.composite
def rect_instances(draw):
    M = draw(st.integers(4, 96))
    n = draw(st.integers(1, 9))
    large_only = draw(st.sampled_from(["mixed", "large", "small"]))
    jobs = []
    for _ in range(n):
        lo, hi = 1, M - 1
        if large_only == "large":
            lo = M // 4 + 1
        elif large_only == "small":
            hi = max(1, M // 4)
        s = draw(st.integers(lo, hi))
        top = M - s if 4 * s > M else min(s, M - s)
        jobs.append(Job(s, draw(st.integers(1, top))))
    return Instance(M, tuple(jobs))


@settings(max_examples=120, deadline=None)
@given(inst=rect_instances())
def test_queue_monotonicity_lemma4(inst):
    note(json.dumps(inst.to_dict()))
    states = simulate(inst, "rect", instrument=True).instrumentation["queue_states"]
    last_min = None
    for t, min_pending, max_active in states:
        if min_pending is not None:
            if last_min is not None:
                assert min_pending >= last_min, (t, states)
            last_min = min_pending
            if max_active is not None:
                assert max_active <= min_pending, (t, states)


@settings(max_examples=120, deadline=None)
@given(inst=rect_instances())
def test_per_job_bound_lemma5(inst):
    note(json.dumps(inst.to_dict()))
    res = simulate(inst, "rect")
    w = widths(inst.prompts.tolist(), inst.memory, Fraction(1, 4))
    bounds, U = lemma5_bounds(inst.memory, w, inst.responses.tolist())
    for i, c in enumerate(res.completion_times):
        assert c <= bounds[i], (i, c, bounds[i], U)


def test_lemma5_bound_values():
    # widths 4, 6, 16 (δ=4, Δ=16, U = max(4, 0) = 4); p = 1, 3, 3; A = 4, 18, 48
    bounds, U = lemma5_bounds(16, [4, 6, 16], [1, 3, 3])
    assert U == 4
    # job 0: 4·1 + (4/4)(4+4+4) = 16; job 1: 12 + (4+18+18) = 52; job 2: 12 + (4+18+48) = 82
    assert bounds == [16, 52, 82]
