"""Every issue-5 policy gives a checked schedule on random instances (with and without
arrivals, with and without predictions, where the policy applies)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvopt.instance import Instance
from kvopt.policy import POLICIES, get_policy
from kvopt.schedule import check_schedule
from kvopt.simulation import simulate

MINE = [
    "greedy-area",
    "svf",
    "svf-1bit",
    "mcsf",
    "mc-benchmark",
    "clairvoyant-mix",
    "pack-and-schedule",
    "gba",
    "fcfs",
    "alpha-protect",
    "beta-clear",
    "sjf",
]
#: with exact lengths these never kill (SPEC §6.2: non-preemptive / reservation / packing)
KILL_FREE = ["greedy-area", "svf", "svf-1bit", "mcsf", "mc-benchmark", "pack-and-schedule", "gba"]
OFFLINE = {"clairvoyant-mix", "gba"}


@st.composite
def instances(draw, arrivals: bool, predictions: bool):
    M = draw(st.integers(4, 60))
    n = draw(st.integers(1, 14))
    s = [draw(st.integers(1, M - 1)) for _ in range(n)]
    o = [draw(st.integers(1, M - si)) for si in s]
    a = [draw(st.integers(0, 25)) for _ in range(n)] if arrivals else None
    pr = [draw(st.integers(1, 2 * M)) for _ in range(n)] if predictions else None
    return Instance.from_arrays(M, s, o, a, predicted_response=pr)


def test_all_registered():
    for name in MINE:
        assert name in POLICIES


def _run_all(inst: Instance, params=None):
    for name in MINE:
        spec = get_policy(name)
        if spec.check and spec.check(inst, spec.resolve_params(None)):
            assert name in OFFLINE and inst.has_arrivals
            continue
        res = simulate(inst, name, params=(params or {}).get(name), seed=3)
        r = check_schedule(inst, res.schedule)
        assert r.valid and r.objectives is not None
        assert len(res.completion_times) == inst.n
        if name in KILL_FREE and not inst.has_predictions:
            assert res.stats.kills == 0, name


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(arrivals=False, predictions=False))
def test_offline_exact_lengths(inst):
    _run_all(inst)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(arrivals=True, predictions=False))
def test_with_arrivals(inst):
    _run_all(inst, {"pack-and-schedule": {"packer": "nfdh"}})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(arrivals=True, predictions=True))
def test_with_wrong_predictions(inst):
    _run_all(inst)


@pytest.mark.parametrize("packer", ["steinberg", "nfdh"])
def test_larger_random_instances(packer):
    rng = np.random.default_rng(11)
    for _ in range(4):
        M = int(rng.integers(200, 2000))
        n = 60
        s = rng.integers(1, M // 3, n)
        o = np.array([rng.integers(1, M - si) for si in s])
        inst = Instance.from_arrays(M, s, o)
        _run_all(inst, {"pack-and-schedule": {"packer": packer}})
