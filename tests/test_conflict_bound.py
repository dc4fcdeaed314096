"""The rank bound (issue 46, ``kvopt.exact.bounds.conflict``, ``models/orders.md`` §9): each
family a dual feasible function, each rank below every feasible schedule's, the value below
Opt, and stronger than the area and LP bounds where the jobs cannot share memory."""

from __future__ import annotations

import glob
import itertools
import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_exact import SETTINGS, brute_force, instances

from kvopt.bound import area_bound, lower_bounds, processing_bound
from kvopt.exact import lp_bound, solve
from kvopt.exact.bounds.conflict import (
    family_weights,
    never_together,
    rank_bound,
)
from kvopt.exact.common import lower_bound, root_lower_bound
from kvopt.exact.heuristic import heuristic_schedule
from kvopt.instance import Instance, load_instance
from kvopt.schedule import Schedule, check_schedule

ROOT = os.path.join(os.path.dirname(__file__), "..")


def feasible_starts(inst: Instance):
    """Every kill-free feasible start vector inside the SPEC §1 horizon (tiny instances)."""
    h = int(inst.arrivals.max() + inst.responses.sum())
    ranges = [range(int(a), h - int(o) + 1) for a, o in zip(inst.arrivals, inst.responses)]
    for starts in itertools.product(*ranges):
        mem = np.zeros(h + 1, dtype=np.int64)
        for s, o, t in zip(inst.prompts, inst.responses, starts):
            mem[t : t + o] += s + 1 + np.arange(o)
        if mem.max() <= inst.memory:
            yield np.array(starts)


@given(
    memory=st.integers(2, 60),
    data=st.data(),
)
@settings(max_examples=200, deadline=None)
def test_every_family_is_dual_feasible(memory, data):
    """Items that fit in one round (sum ≤ M) weigh at most the family's capacity."""
    sizes = []
    room = memory
    while room >= 1 and len(sizes) < 8:
        h = data.draw(st.integers(1, room))
        sizes.append(h)
        room -= h
        if data.draw(st.booleans()):
            break
    s = np.array([h - 1 for h in sizes], dtype=np.int64)  # one item of size h per job
    o = np.ones(len(sizes), dtype=np.int64)
    names, w, caps = family_weights(memory, s, o)
    total = w.sum(axis=1)
    bad = [(nm, int(t), int(c)) for nm, t, c in zip(names, total, caps) if t > c]
    assert not bad, (sizes, bad)


@given(inst=instances(max_n=3, max_o=3, max_memory=10))
@settings(max_examples=60, **SETTINGS)
def test_every_rank_is_below_every_schedule(inst):
    """``c_(k)`` of every feasible schedule is at least the bound's rank ``k`` (and so the
    makespan and the total)."""
    rb = rank_bound(inst)
    assert len(rb.ranks) == inst.n
    seen = 0
    for starts in feasible_starts(inst):
        c = np.sort(starts + inst.responses)
        assert np.all(c >= np.array(rb.ranks)), (starts.tolist(), rb.ranks, rb.families)
        seen += 1
    assert seen  # SPEC §1: one job after another always fits


@given(inst=instances(max_n=5, max_o=4, max_memory=14))
@settings(max_examples=60, **SETTINGS)
def test_rank_bound_never_above_opt(inst):
    rb = rank_bound(inst)
    assert rb.value <= brute_force(inst, "total")
    assert rb.makespan <= brute_force(inst, "makespan")
    assert rb.value >= max(area_bound(inst), processing_bound(inst))


@given(inst=instances(max_n=4, max_o=3, max_memory=12), windows=st.integers(1, 6))
@settings(max_examples=40, **SETTINGS)
def test_windows_never_above_opt(inst, windows):
    rb = rank_bound(inst, windows=windows)
    assert rb.value <= brute_force(inst, "total")
    assert rb.value >= rank_bound(inst).value


def test_two_jobs_that_never_share_memory_are_one_machine():
    # s = 1, o = M − 1: each holds M in its last round, the other at least 2
    m = 10
    inst = Instance.from_arrays(m, [1, 1], [m - 1, m - 1])
    assert never_together(inst)[0, 1]
    assert brute_force(inst, "total") == 27
    rb = rank_bound(inst)
    assert rb.ranks == (9, 18) and rb.value == 27
    assert area_bound(inst) < 27


def test_a_large_int_instance_takes_python_integers():
    big = 10**7
    inst = Instance.from_arrays(3 * big, [big] * 3 + [1], [big] * 3 + [big])
    rb = rank_bound(inst)
    assert rb.value >= processing_bound(inst)
    sched = heuristic_schedule(inst, "total", seconds=0.01)
    assert rb.value <= check_schedule(inst, sched).total_completion


def bundled():
    """The bundled instances, and those embedded in the bundled records."""
    out = []
    for p in sorted(glob.glob(os.path.join(ROOT, "instances", "**", "*.json"), recursive=True)):
        with open(p) as f:
            data = json.load(f)
        if data.get("format") == "kvopt.instance":
            out.append(load_instance(p))
        elif "instance" in data:
            out.append(Instance.from_dict(data["instance"]))
    return out


def known_optima():
    """``(instance, objective, Opt)`` of every bundled record whose bracket is closed."""
    out = []
    for p in sorted(glob.glob(os.path.join(ROOT, "instances", "worst", "*", "*.json"))):
        with open(p) as f:
            data = json.load(f)
        if "instance" in data and data.get("opt_status") == "optimal":
            assert data["lb"] == data["ub"]
            out.append((Instance.from_dict(data["instance"]), data["objective"], data["ub"]))
    return out


@pytest.mark.parametrize("inst", bundled(), ids=lambda i: f"{i.name}-n{i.n}")
def test_bundled_instances_below_a_schedule(inst):
    rb = rank_bound(inst)
    for objective, value in (("total", rb.value), ("makespan", rb.makespan)):
        sched = heuristic_schedule(inst, objective, seconds=0.01)
        key = "total_completion" if objective == "total" else "makespan"
        assert value <= check_schedule(inst, sched).objectives[key]


@pytest.mark.parametrize("case", known_optima(), ids=lambda c: f"{c[0].name}-{c[1]}")
def test_bundled_records_below_their_proven_opt(case):
    inst, objective, opt = case
    rb = rank_bound(inst)
    assert (rb.value if objective == "total" else rb.makespan) <= opt


def test_some_bundled_records_are_there():
    assert len(known_optima()) >= 20


def test_stronger_than_area_and_lp_where_jobs_conflict():
    """The paper's Proposition 1 instance (n = 12): the LP lets the large jobs share rounds."""
    inst = load_instance(os.path.join(ROOT, "instances", "paper", "prop1-L3-case2.json"))
    rb = rank_bound(inst)
    lp = lp_bound(inst)
    assert rb.value > lp + 1 and rb.value > area_bound(inst)
    res = solve(inst, time_limit=60, threads=1)
    assert res.optimal and rb.value <= res.objective


def test_the_exact_routes_start_from_it():
    inst = load_instance(os.path.join(ROOT, "instances", "paper", "prop1-L3-case2.json"))
    assert root_lower_bound(inst, "total") == rank_bound(inst).value > lower_bound(inst, "total")
    assert root_lower_bound(inst, "makespan") >= rank_bound(inst).makespan
    b = lower_bounds(inst, rank=rank_bound(inst))
    assert b.best_name == "rank" and b.best == rank_bound(inst).value


@pytest.mark.slow
@pytest.mark.parametrize("inst", [i for i in bundled() if i.n <= 12], ids=lambda i: i.name)
def test_bundled_instances_below_opt(inst):
    rb = rank_bound(inst)
    for objective, value in (("total", rb.value), ("makespan", rb.makespan)):
        res = solve(inst, objective=objective, time_limit=600, threads=2)
        # against Opt where proved (all totals here, well inside the limit, which only has to
        # be out of reach: issue 56; a few makespans of the eight-job records stay open for
        # minutes), else against a checked schedule
        assert res.objective is not None and value <= res.objective
        assert res.optimal or objective == "makespan", res.status


def test_schedule_helper_is_consistent():
    inst = Instance.from_arrays(10, [1, 2], [3, 2])
    starts = next(iter(feasible_starts(inst)))
    assert check_schedule(inst, Schedule.from_starts(inst, starts.tolist())).valid


def test_a_solve_reports_at_least_the_rank_bound():
    """``finish`` reports at least ``root_lower_bound``: on the sf-family record (n = 11) the
    rank bound is Opt (84; SPEC §2's bound is 56), so a solve proves it however it ends."""
    path = os.path.join(ROOT, "instances", "worst", "typed", "sf-family-sjf.json")
    with open(path) as f:
        inst = Instance.from_dict(json.load(f)["instance"])
    rb = rank_bound(inst)
    assert rb.value == 84 > lower_bound(inst, "total")
    res = solve(inst, time_limit=20, threads=1)
    assert res.bound >= rb.value and res.optimal and res.objective == 84
