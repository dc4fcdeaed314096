"""GSA (Geometric Slicing, Feng, Yang, Zhang 2026; SPS reconstructed): worked example."""

from __future__ import annotations

from kvopt.instance import Instance
from kvopt.simulation import simulate


def test_worked_example_identical_prompts():
    # M = 12, prompt 2 for all; responses 1, 3, 6.  P = 2, τ_p = min(2^p, 10).
    # p=0, τ=1: 3·(2+1) = 9 <= 12, all at 0: job 0 completes at 1, jobs 1, 2 expire at 1.
    # p=1, τ=2 (t=1): jobs 1, 2: 2·4 = 8 <= 12: both at 1, expire at 3.
    # p=2, τ=4 (t=3): 2·6 = 12 <= 12: both at 3: job 1 completes at 6, job 2 expires at 7.
    # p=3, τ=8 (t=7): job 2 alone (1·10 <= 12): completes at 13.
    inst = Instance.from_arrays(12, [2, 2, 2], [1, 3, 6])
    res = simulate(inst, "gsa")
    assert [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts] == [
        (0, 0, 1, True),
        (1, 0, 1, False),
        (2, 0, 1, False),
        (1, 1, 2, False),
        (2, 1, 2, False),
        (1, 3, 3, True),
        (2, 3, 4, False),
        (2, 7, 6, True),
    ]


def test_cap_limited_by_memory_minus_prompt():
    # M = 10, prompt 4: τ_p = min(2^p, 6); job (4, 6) completes in the phase with τ = 6.
    inst = Instance.from_arrays(10, [4], [6])
    res = simulate(inst, "gsa", instrument=True)
    assert [ph["cap"] for ph in res.instrumentation["phases"]] == [1, 2, 4, 6]
    assert res.completion_times == (1 + 2 + 4 + 6,)
