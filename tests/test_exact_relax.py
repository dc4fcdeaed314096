"""Reduced-cost fixing and conflict cliques (kvopt/exact/bounds/relax.py, models/time-indexed.md §9)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_exact import brute_force

from kvopt.exact import solve, typed_bound
from kvopt.exact.backends.highs_matrix import build_matrix
from kvopt.exact.bounds.relax import clique_lp, conflicts, lagrange_fix, lagrange_value, solve_lp
from kvopt.exact.common import spec_horizon, start_windows
from kvopt.instance import Instance
from kvopt.schedule import Schedule, check_schedule


def schedules(inst: Instance, ub: int):
    """Every kill-free feasible schedule of value ``≤ ub`` as (starts, Σ C) (pruned search)."""
    H = spec_horizon(inst)
    M = inst.memory
    mem = np.zeros(H + 1, dtype=np.int64)
    st = np.zeros(inst.n, dtype=np.int64)
    least = np.cumsum((inst.arrivals + inst.responses)[::-1])[::-1]  # Σ_{j ≥ i} (a_j + o_j)
    out = []

    def rec(i, acc):
        if i == inst.n:
            out.append((st.copy(), acc))
            return
        s, o, a = int(inst.prompts[i]), int(inst.responses[i]), int(inst.arrivals[i])
        need = s + 1 + np.arange(o)
        rest = int(least[i + 1]) if i + 1 < inst.n else 0
        for t in range(a, H - o + 1):
            if acc + t + o + rest > ub:
                break
            if np.all(mem[t : t + o] + need <= M):
                mem[t : t + o] += need
                st[i] = t
                rec(i + 1, acc + t + o)
                mem[t : t + o] -= need

    rec(0, 0)
    for starts, _ in out:
        assert check_schedule(inst, Schedule.from_starts(inst, starts)).valid
    return out


def opt_of(inst: Instance) -> int:
    return brute_force(inst, "total")


def small(rng, n=4, M=12, identical=False):
    o = rng.integers(1, 4, n)
    s = rng.integers(1, M - o + 1)
    a = rng.integers(0, 3, n)
    if identical:  # two copies of job 0
        o[1], s[1], a[1] = o[0], s[0], a[0]
    return Instance.from_arrays(M, s, o, a)


@pytest.mark.parametrize("identical", [False, True])
def test_fixing_keeps_every_schedule_up_to_the_bound(identical):
    """After fixing with an upper bound ``ub``, every schedule of value ≤ ub is in the windows,
    and the fixing removes something on some instance (so the test can fail both ways)."""
    rng = np.random.default_rng(5)
    shrunk = 0
    for _ in range(15):
        inst = small(rng, identical=identical)
        opt = opt_of(inst)
        every = schedules(inst, opt + 1)
        for ub in (opt, opt + 1):
            lo, hi = start_windows(inst, "total", ub)
            flo, fhi, stats = lagrange_fix(inst, lo, hi, ub)
            assert stats["lagrange"] <= opt + 1e-6
            shrunk += stats["window_columns"] < int((hi - lo + 1).sum())
            for st, v in every:
                if v <= ub:
                    assert np.all(st >= flo) and np.all(st <= fhi), (st, flo, fhi)
    assert shrunk > 0


def test_lagrange_value_is_the_lp_at_its_duals():
    rng = np.random.default_rng(8)
    inst = small(rng, n=5, M=14)
    lo, hi = start_windows(inst, "total")
    lp = solve_lp(build_matrix(inst, "total", lo, hi), 10.0)
    value, _ = lagrange_value(lp.model, lp.row_dual)
    assert value == pytest.approx(lp.value, abs=1e-6)
    # any dual vector (here: zero) gives a valid, weaker bound
    weaker, _ = lagrange_value(lp.model, np.zeros_like(lp.row_dual))
    assert weaker <= lp.value + 1e-9


def test_conflicts_is_the_pairwise_memory_test():
    """Two columns conflict exactly when their staircases alone exceed M in a common round."""
    M = 10
    for s1, o1, t1, s2, o2, t2 in itertools.product(range(1, 5), range(1, 4), range(3), repeat=2):
        mem = np.zeros(8, dtype=int)
        mem[t1 : t1 + o1] += s1 + 1 + np.arange(o1)
        mem[t2 : t2 + o2] += s2 + 1 + np.arange(o2)
        want = bool(mem.max() > M)
        got = bool(conflicts(s1, o1, t1, True, s2, o2, t2, True, M, False))
        assert got == want


def test_cliques_keep_the_optimum_and_raise_the_lp():
    """The LP with cliques is ≤ Opt (brute force) on small instances, and above the LP on some."""
    rng = np.random.default_rng(3)
    raised = 0
    for k in range(12):
        inst = small(rng, n=5, M=10, identical=k % 3 == 0)
        opt = opt_of(inst)
        lo, hi = start_windows(inst, "total", opt)
        lp, stats = clique_lp(inst, lo, hi, rounds=10)
        assert lp.value <= opt + 1e-6
        raised += stats["value"] > stats["lp"] + 1e-6
    assert raised > 0


def test_separated_cliques_are_pairwise_conflicting():
    """Every separated clique: any two of its columns cannot run together (memory profile),
    and a column of a group of several jobs cannot run twice.  (Round 3's first extension
    step added columns that conflicted with the members but not with each other: a typed
    instance's clique LP exceeded Opt.)"""
    from kvopt.exact.bounds.relax import separate_cliques

    rng = np.random.default_rng(2)
    checked = 0
    for k in range(6):
        n, M = 8, 12
        o = rng.integers(2, 5, n)
        s = rng.integers(1, M - o + 1)
        if k % 2:  # typed: two groups of four identical jobs
            o[:4], s[:4], o[4:], s[4:] = o[0], s[0], o[4], s[4]
        inst = Instance.from_arrays(M, s, o)
        lo, hi = start_windows(inst, "total")
        model = build_matrix(inst, "total", lo, hi)
        lp = solve_lp(model, 10.0)
        for clique in separate_cliques(model, inst, lp.x):
            for a, b in itertools.combinations(clique.tolist(), 2):
                ga, gb = model.col_group[a], model.col_group[b]
                ja, jb = model.groups[ga][0], model.groups[gb][-1]
                if ga == gb and len(model.groups[ga]) == 1:
                    continue  # two starts of one job
                mem = np.zeros(int(model.horizon) + 2, dtype=int)
                for j, t in ((ja, model.col_start[a]), (jb, model.col_start[b])):
                    sj, oj = int(inst.prompts[j]), int(inst.responses[j])
                    mem[t : t + oj] += sj + 1 + np.arange(oj)
                assert mem.max() > M, (a, b)
                checked += 1
    assert checked > 0


@pytest.mark.slow
def test_auto_with_fixing_agrees_with_brute_force():
    rng = np.random.default_rng(21)
    for _ in range(8):
        inst = small(rng, n=5, M=12)
        opt = opt_of(inst)
        res = solve(inst, solver="highs", time_limit=20, threads=1)
        assert res.optimal and res.objective == opt


def test_typed_bound_is_a_lower_bound():
    from kvopt.space import TypedSpace

    space = TypedSpace(types_max=2, n_min=6, n_max=8, memory_min=8, memory_max=12, max_response=3)
    rng = np.random.default_rng(4)
    for _ in range(3):
        inst = space.sample(rng)
        res = solve(inst, time_limit=20, threads=1)
        assert res.optimal
        assert typed_bound(inst, time_limit=5.0) <= res.objective
