"""Approximation guarantees against exact Opt on small instances (SPEC §7 claims):
``greedy-area ≤ (1 + 2/(1−α))·Opt`` (α = max(s+o)/M < 1), ``pack-and-schedule ≤ 16·Opt``,
``clairvoyant-mix ≤ 28·Opt``."""

from __future__ import annotations

import numpy as np
import pytest

from kvopt.exact import solve
from kvopt.instance import Instance
from kvopt.simulation import simulate


def _instances() -> list[Instance]:
    rng = np.random.default_rng(2026)
    out = []
    for k in range(24):
        M = int(rng.integers(6, 26))
        n = int(rng.integers(1, 7))
        kind = k % 4
        if kind == 0:  # anything
            s = rng.integers(1, M, n)
        elif kind == 1:  # narrow jobs only
            s = rng.integers(1, max(2, M // 4), n)
        elif kind == 2:  # wide prompts
            s = rng.integers(M // 2, M, n)
        else:  # identical prompts
            s = np.full(n, int(rng.integers(1, M // 2 + 1)))
        o = np.array([rng.integers(1, min(12, M - int(si)) + 1) for si in s])
        out.append(Instance.from_arrays(M, s, o, name=f"r{k}"))
    return out


@pytest.fixture(scope="module")
def solved():
    res = []
    for inst in _instances():
        r = solve(inst, objective="total", solver="cpsat", time_limit=20, threads=1)
        assert r.status.value == "optimal", inst.name
        res.append((inst, r.objective))
    return res


def _total(inst: Instance, policy: str, **params) -> int:
    return simulate(inst, policy, params=params or None).total_completion


def test_greedy_area_bound(solved):
    checked = 0
    for inst, opt in solved:
        alpha = max(int(x) for x in inst.peaks) / inst.memory
        if alpha >= 1:
            continue
        bound = (1 + 2 / (1 - alpha)) * opt
        for backfill in (False, True):
            assert _total(inst, "greedy-area", backfill=backfill) <= bound + 1e-9, inst.name
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("packer", ["steinberg", "nfdh"])
def test_pack_and_schedule_16(solved, packer):
    for inst, opt in solved:
        alg = _total(inst, "pack-and-schedule", packer=packer)
        assert opt <= alg, inst.name  # Opt is optimal, the policy's schedule is feasible
        if packer == "steinberg":
            assert alg <= 16 * opt, inst.name


def test_clairvoyant_mix_28(solved):
    for inst, opt in solved:
        alg = _total(inst, "clairvoyant-mix")
        assert opt <= alg <= 28 * opt, inst.name


def test_every_policy_at_least_opt(solved):
    for inst, opt in solved[:8]:
        for name in ("svf", "mcsf", "mc-benchmark", "gba", "fcfs", "sjf", "alpha-protect"):
            assert _total(inst, name) >= opt, (inst.name, name)
