"""``pack-and-schedule`` (SPEC §6.2; main paper Appendix A.3) — windows, prefix rule, packers."""

from __future__ import annotations

import numpy as np
import pytest

from kvopt.errors import InputError
from kvopt.instance import Instance
from kvopt.policy import make_policy
from kvopt.policy.pack_and_schedule import pack_and_schedule_starts
from kvopt.simulation import simulate


def test_hand_example():
    # M = 10, unit responses, rectangle areas 2, 4, 9.  Stage 0 (L=1, window [0, 2)):
    # prefix 2 + 4 <= 10 (adding 9 exceeds M·L); stage 1 (window [2, 6)) takes the last.
    inst = Instance.from_arrays(10, [1, 3, 8], [1, 1, 1])
    assert simulate(inst, "pack-and-schedule").completion_times == (1, 1, 3)
    # NFDH: windows of 3L, stage 1 starts at 3
    res = simulate(inst, "pack-and-schedule", params={"packer": "nfdh"})
    assert res.completion_times == (1, 1, 4)


def test_arrivals_wait_for_the_next_window():
    inst = Instance.from_arrays(10, [1, 3, 8], [1, 1, 1], [0, 1, 0])
    starts = pack_and_schedule_starts(inst)
    assert starts[0] == 0 and starts[1] >= 2 and starts[2] >= 2


@pytest.mark.parametrize("packer,factor", [("steinberg", 2), ("nfdh", 3)])
def test_every_job_inside_one_window(packer, factor):
    rng = np.random.default_rng(4)
    for _ in range(40):
        M = int(rng.integers(5, 120))
        n = int(rng.integers(1, 30))
        s = rng.integers(1, M, n)
        o = np.array([rng.integers(1, M - si + 1) for si in s])
        inst = Instance.from_arrays(M, s, o)
        res = simulate(inst, "pack-and-schedule", params={"packer": packer})
        assert res.stats.kills == 0
        for a in res.schedule.attempts:
            r = max(0, (a.rounds - 1).bit_length())  # first stage with o <= 2^r
            # find the window holding the start; it must be stage >= r and hold the end too
            q = 0
            while factor * ((1 << (q + 1)) - 1) <= a.start:
                q += 1
            lo, hi = factor * ((1 << q) - 1), factor * ((1 << (q + 1)) - 1)
            assert q >= r
            assert lo <= a.start and a.start + a.rounds <= hi


def test_prefix_by_rectangle_area():
    # stage 0 (L = 1): rectangle areas (s+o)·o = 5, 3, 8 -> order 1, 0, 2; M·L = 10 takes
    # 3 + 5 and not 8; job 2 goes to stage 1
    inst = Instance.from_arrays(10, [4, 2, 7], [1, 1, 1])
    starts = pack_and_schedule_starts(inst)
    assert starts[0] < 2 and starts[1] < 2 and starts[2] >= 2


def test_bad_packer():
    with pytest.raises(InputError):
        make_policy("pack-and-schedule", {"packer": "ffdh"})
