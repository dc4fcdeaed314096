"""Route (main paper, Algorithm 4) and Route-online: a worked example and the per-job bounds."""

from __future__ import annotations

import json

from hypothesis import given, note, settings
from hypothesis import strategies as st

from kvopt.engine import run_alone
from kvopt.instance import Instance, Job
from kvopt.policy.route import route_bounds
from kvopt.simulation import simulate


def attempts(res):
    return [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts]


def test_worked_example():
    # M = 16, Λ = 4.  Jobs (s, o): 0 (2,1) prompt-heavy, 1 (1,6) response-heavy, 2 (5,3) large,
    # 3 (2,2) prompt-heavy.  Stage r: slots P, R, L of 2^r rounds each.
    # Stage 0 [0,3): P: capped Rect on {0,1,3} (widths 4,2,4, caps min(1, s)): all start at 0;
    #   job 0 completes at 1; job 1 reaches s=1 -> certified, moves to R; job 3 expires.
    #   R [1,2): Response τ=1 on {1}: 1 round.  L [2,3): Rect on {2}, cap 1.
    # Stage 1 [3,9): P [3,5): pool {0 (dummy), 3}: both "start" at 3; job 3 expires at 4,
    #   restarts with cap 2, killed at the slot end 5.  R [5,7): τ=1 [5,6), τ=2 cut to [6,7).
    #   L [7,9): cap 1 [7,8), cap 2 cut to [8,9).
    # Stage 2 [9,21): P [9,13): job 3: cap 1 [9,10), cap 2 [10,12) completes.  R [13,17):
    #   τ=1, τ=2, τ=4 cut to 1 round.  L [17,21): caps 1, 2, then 4 cut to 1.
    # Stage 3 [21,45): P [21,29) only dummies: idle.  R [29,37): 1, 2, 4, then τ=8 cut to 1.
    #   L [37,45): 1, 2, then cap 4 completes job 2 at 43.
    # Stage 4: P [45,61) idle; R [61,77): 1, 2, 4, then τ=8: job 1 completes at 74.
    inst = Instance.from_arrays(16, [2, 1, 5, 2], [1, 6, 3, 2])
    res = simulate(inst, "route")
    assert attempts(res) == [
        (0, 0, 1, True), (1, 0, 1, False), (3, 0, 1, False), (1, 1, 1, False),
        (2, 2, 1, False), (3, 3, 1, False), (3, 4, 1, False), (1, 5, 1, False),
        (1, 6, 1, False), (2, 7, 1, False), (2, 8, 1, False), (3, 9, 1, False),
        (3, 10, 2, True), (1, 13, 1, False), (1, 14, 2, False), (1, 16, 1, False),
        (2, 17, 1, False), (2, 18, 2, False), (2, 20, 1, False), (1, 29, 1, False),
        (1, 30, 2, False), (1, 32, 4, False), (1, 36, 1, False), (2, 37, 1, False),
        (2, 38, 2, False), (2, 40, 3, True), (1, 61, 1, False), (1, 62, 2, False),
        (1, 64, 4, False), (1, 68, 6, True),
    ]  # fmt: skip
    assert res.completion_times == (1, 74, 43, 12)


@st.composite
def any_instance(draw, arrivals=False):
    M = draw(st.integers(4, 96))
    n = draw(st.integers(1, 9))
    jobs = []
    for _ in range(n):
        s = draw(st.integers(1, M - 1))
        o = draw(st.integers(1, M - s))
        jobs.append(Job(s, o, draw(st.integers(0, 3 * M)) if arrivals else 0))
    return Instance(M, tuple(jobs))


@settings(max_examples=150, deadline=None)
@given(inst=any_instance())
def test_per_job_bounds(inst):
    """C_i <= 7 C^P_i (prompt-heavy), 11 C^L_i (large), max(8 C^P_i + C^R_i, 9 C^R_i)."""
    note(json.dumps(inst.to_dict()))
    res = simulate(inst, "route")
    b = route_bounds(inst, run=run_alone)
    for i, c in enumerate(res.completion_times):
        assert c <= b["bound"][i], (i, c, b["C_P"][i], b["C_L"][i], b["C_R"][i])


@settings(max_examples=60, deadline=None)
@given(inst=any_instance())
def test_compact_never_later(inst):
    note(json.dumps(inst.to_dict()))
    lit = simulate(inst, "route").completion_times
    com = simulate(inst, "route", {"compact": True}).completion_times
    assert all(c <= d for c, d in zip(com, lit))


def test_route_online_waits_for_arrivals():
    # job 1 arrives at 5, during stage 1 (slots [3,5) P, [5,7) R, [7,9) L): it joins P at 5 and
    # is first run in the next P slot, stage 2 [9,13).
    inst = Instance.from_arrays(16, [2, 2], [1, 2], [0, 5])
    res = simulate(inst, "route-online")
    assert attempts(res) == [(0, 0, 1, True), (1, 9, 1, False), (1, 10, 2, True)]
    # without arrivals route-online equals route with finished jobs dropped from pools
    inst0 = Instance.from_arrays(16, [2, 2], [1, 2])
    assert simulate(inst0, "route-online").completion_times == (1, 12)


@settings(max_examples=60, deadline=None)
@given(inst=any_instance(arrivals=True))
def test_route_online_starts_after_arrival(inst):
    note(json.dumps(inst.to_dict()))
    res = simulate(inst, "route-online")
    assert all(a.start >= inst.arrivals[a.job] for a in res.schedule.attempts)
