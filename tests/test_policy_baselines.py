"""Practical baselines (SPEC §6.3): fcfs, sjf, alpha-protect, beta-clear — hand-computed traces."""

from __future__ import annotations

import pytest

from kvopt.engine import BlindPolicy, ClairvoyantPolicy
from kvopt.errors import InputError
from kvopt.instance import Instance
from kvopt.policy import get_policy, make_policy
from kvopt.simulation import simulate


def _rows(res):
    return sorted((a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts)


@pytest.fixture
def three():
    # M = 10; (s, o) = (3, 4), (2, 5), (4, 2); all at time 0
    return Instance.from_arrays(10, [3, 2, 4], [4, 5, 2])


def test_fcfs_hand_trace(three):
    # t=0: admit 0 (4), 1 (7); 2 needs 12 > 10.  Memory 7+2t overflows at t=2:
    # kill the newest (tie on start: later in queue order = job 1), requeue at front,
    # readmit 1 (6+3=9).  Overflow at t=3: kill 1 again, readmit (7+3=10).  t=4: job 0
    # completes, admit 2 (4+5=9); overflow at t=5: kill 2, readmit (10); overflow at
    # t=6: kill 2, 6+5 > 10 so it waits for job 1 (t=8).
    res = simulate(three, "fcfs")
    assert _rows(res) == sorted(
        [
            (0, 0, 4, True),
            (1, 0, 2, False),
            (1, 2, 1, False),
            (1, 3, 5, True),
            (2, 4, 1, False),
            (2, 5, 1, False),
            (2, 8, 2, True),
        ]
    )
    assert res.completion_times == (4, 8, 10)


def test_sjf_hand_trace(three):
    # queue by response: 2, 0, 1.  t=0: admit 2, 0; overflow at t=1: both started at 0,
    # the later in queue order (job 0) is killed and readmitted (6+4=10).  t=2: job 2
    # done, admit 1.  Overflow at t=4: kill 1 (newest), readmit it (7+3=10).
    res = simulate(three, "sjf")
    assert _rows(res) == sorted(
        [(2, 0, 2, True), (0, 0, 1, False), (0, 1, 4, True), (1, 2, 2, False), (1, 4, 5, True)]
    )


def test_sjf_uses_predictions():
    inst = Instance.from_arrays(10, [1, 1], [5, 1], predicted_response=[1, 5])
    # predicted order: job 0 first; both fit (2 + 2 <= 10) and run at once
    res = simulate(inst, "sjf")
    assert res.completion_times == (5, 1)
    inst2 = Instance.from_arrays(4, [2, 2], [1, 2], predicted_response=[3, 1])
    # 2+1 then 3+3 > 4: only the predicted-shorter job 1 starts at 0
    assert simulate(inst2, "sjf").completion_times == (3, 2)


def test_sjf_killed_jobs_wait_in_policy_order():
    # M = 9; (s, o, a) = (1, 7, 0), (2, 4, 0), (1, 2, 1); sjf order: 2, 1, 0.
    # t=0: admit 1, 0 (3 + 2).  t=1: job 2 arrives, 7 + 2 <= 9: admit.  t=2: 12 > 9: kill
    # the newest (job 2); 9 + 2 > 9, it waits.  t=3: 11 > 9: kill job 0 (tie on start,
    # later in sjf order).  Both killed jobs wait ahead of new ones, in sjf order — job 2
    # (killed earlier) before job 0: 6 + 2 <= 9 starts job 2, job 0 (8 + 2) waits for t=4.
    inst = Instance.from_arrays(9, [1, 2, 1], [7, 4, 2], [0, 0, 1])
    res = simulate(inst, "sjf")
    assert _rows(res) == [
        (0, 0, 3, False),
        (0, 4, 7, True),
        (1, 0, 4, True),
        (2, 1, 1, False),
        (2, 3, 2, True),
    ]


def test_alpha_protect_hand_trace(three):
    # limit (1-0.2)·10 = 8: admit 0 (4), 1 (7); overflow at t=2 kills both; only the head
    # (job 0) restarts at t=2 (termination rule); at t=6 admit 1 (3) and 2 (8).
    res = simulate(three, "alpha-protect")
    assert _rows(res) == sorted(
        [(0, 0, 2, False), (1, 0, 2, False), (0, 2, 4, True), (1, 6, 5, True), (2, 6, 2, True)]
    )


def test_alpha_protect_threshold():
    # alpha = 0.5: the second job would take memory to 2+2 = 4 > 0.5·6 = 3, so it waits
    inst = Instance.from_arrays(6, [1, 1], [2, 2])
    assert simulate(inst, "alpha-protect", params={"alpha": 0.5}).completion_times == (2, 4)
    assert simulate(inst, "alpha-protect", params={"alpha": 0.0}).completion_times == (2, 2)


def test_alpha_threshold_is_exact():
    # (1 - 0.8)·20 = 4 and (1 - 0.3)·90 = 63 exactly; in floating point 3.9999999999999996
    # and 62.99999999999999, which would start the second job one round late
    for M, alpha, prompts in ((20, 0.8, [1, 1]), (90, 0.3, [1, 60])):
        inst = Instance.from_arrays(M, prompts, [1, 1])
        params = {"alpha": alpha}
        assert simulate(inst, "alpha-protect", params=params).completion_times == (1, 1)
        assert simulate(inst, "beta-clear", params=params, seed=0).completion_times == (1, 1)
    # one token more and the second job waits
    inst = Instance.from_arrays(20, [1, 2], [1, 1])
    assert simulate(inst, "alpha-protect", params={"alpha": 0.8}).completion_times == (1, 2)


def test_alpha_protect_kill_all_restarts_only_the_head():
    # SPEC §6.3: two (1, 2) jobs in M = 5 are admitted together (2 + 2 <= 4), overflow at
    # t=1 (3 + 3 > 5) and are both killed; readmitted together they would overflow
    # forever.  Only the head restarts at 1; job 1 waits for the next event (t=3).
    inst = Instance.from_arrays(5, [1, 1], [2, 2])
    res = simulate(inst, "alpha-protect")
    assert _rows(res) == [(0, 0, 1, False), (0, 1, 2, True), (1, 0, 1, False), (1, 3, 2, True)]


def test_large_prompt_does_not_stall():
    # s + 1 = 9 > (1-0.2)·10: admitted anyway when nothing runs
    inst = Instance.from_arrays(10, [8, 1], [2, 1])
    res = simulate(inst, "alpha-protect")
    assert res.completion_times[0] == 2


def test_beta_clear_seeded_and_reproducible():
    inst = Instance.from_arrays(20, [2, 3, 1, 4, 2, 1], [9, 8, 10, 6, 7, 12])
    a = simulate(inst, "beta-clear", seed=5)
    b = simulate(inst, "beta-clear", seed=5)
    assert _rows(a) == _rows(b)
    assert a.stats.kills > 0
    outcomes = {tuple(_rows(simulate(inst, "beta-clear", seed=s))) for s in range(8)}
    assert len(outcomes) > 1  # the seed matters
    with pytest.raises(InputError):
        make_policy("beta-clear")  # randomised: needs a seed


def test_beta_one_equals_alpha_protect(three):
    # beta = 1 kills every running attempt at once, exactly like alpha-protect
    a = simulate(three, "beta-clear", params={"beta": 1.0}, seed=0)
    b = simulate(three, "alpha-protect")
    assert _rows(a) == _rows(b)


def test_policy_kinds():
    assert isinstance(make_policy("fcfs"), BlindPolicy)
    assert isinstance(make_policy("alpha-protect"), BlindPolicy)
    assert isinstance(make_policy("beta-clear", seed=1), BlindPolicy)
    assert isinstance(make_policy("sjf"), ClairvoyantPolicy)  # oracle SJF without predictions
    assert not get_policy("fcfs").clairvoyant


def test_param_errors():
    with pytest.raises(InputError, match="alpha"):
        make_policy("alpha-protect", {"alpha": "1.5"})
    with pytest.raises(InputError, match="beta"):
        make_policy("beta-clear", {"beta": "0"}, seed=1)
