"""``clairvoyant-mix`` (Appendix A.2) and ``gba`` (SPEC §6.2)."""

from __future__ import annotations

import numpy as np

from kvopt.instance import Instance
from kvopt.policy.clairvoyant_mix import mix_parts
from kvopt.policy.gba import gba_classes
from kvopt.simulation import simulate


def test_parts_split_at_half_memory():
    inst = Instance.from_arrays(10, [1, 2, 5, 3], [4, 3, 1, 5])  # peaks 5, 5, 6, 8
    assert mix_parts(inst) == [[0, 1], [2, 3]]


def test_mix_slots_hand_example():
    # M = 10; narrow: job 0 = (1, 2) (peak 3); wide: job 1 = (5, 1) (peak 6).
    # stage 0: narrow slot [0, 1): job 0 runs 1 round and is killed; wide slot [1, 2):
    # job 1 completes at 2.  stage 1: narrow slot [2, 4): job 0 completes at 4.
    inst = Instance.from_arrays(10, [1, 5], [2, 1])
    res = simulate(inst, "clairvoyant-mix")
    rows = sorted((a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts)
    assert rows == [(0, 0, 1, False), (0, 2, 2, True), (1, 1, 1, True)]


def test_wide_jobs_one_at_a_time():
    rng = np.random.default_rng(8)
    for _ in range(20):
        M = int(rng.integers(10, 60))
        n = int(rng.integers(1, 10))
        s = rng.integers(M // 2, M, n)
        o = np.array([rng.integers(1, M - si + 1) for si in s])
        inst = Instance.from_arrays(M, s, o)  # all wide (peak > M/2)
        res = simulate(inst, "clairvoyant-mix")
        att = sorted(res.schedule.attempts, key=lambda a: a.start)
        for a, b in zip(att, att[1:]):
            assert a.start + a.rounds <= b.start  # never two at once


def test_gba_classes_and_order():
    inst = Instance.from_arrays(40, [2, 2, 2, 2, 2], [1, 2, 3, 4, 5])
    assert gba_classes(inst) == [[0], [1], [2, 3], [4]]
    res = simulate(inst, "gba")
    ct = res.completion_times
    # shortest class first, each class after the previous one ended
    assert ct[0] == 1 and ct[1] == 3 and max(ct[2], ct[3]) <= ct[4] - 5
    assert res.stats.kills == 0


def test_gba_identical_prompts_batches():
    # M = 40, prompt 3, eight jobs of response 4: one class; SPS budget 3+4 = 7 per job
    inst = Instance.from_arrays(40, [3] * 8, [4] * 8)
    res = simulate(inst, "gba")
    assert res.stats.kills == 0
    assert len({a.start for a in res.schedule.attempts}) >= 2  # not all at once (8·7 > 40)


def test_gba_one_at_a_time_when_proxy_too_big():
    # class (4, 8]: largest prompt 6 + largest response 5 = 11 > M = 10 -> one at a time
    inst = Instance.from_arrays(10, [6, 1], [4, 5])
    res = simulate(inst, "gba")
    att = sorted(res.schedule.attempts, key=lambda a: a.start)
    assert att[0].start + att[0].rounds <= att[1].start
