"""Lower bounds (SPEC §2) against direct computation and against valid schedules."""

from __future__ import annotations

import itertools
from fractions import Fraction

from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.bound import (
    area_bound,
    area_bound_fraction,
    lower_bounds,
    makespan_bounds,
    processing_bound,
)
from kvopt.instance import Instance
from kvopt.schedule import Schedule, check_schedule


def serial_schedules(inst: Instance):
    """All one-at-a-time schedules (every order): valid, hence upper bounds on Opt."""
    for order in itertools.permutations(range(inst.n)):
        t, starts = 0, [0] * inst.n
        for j in order:
            t = max(t, int(inst.arrivals[j]))
            starts[j] = t
            t += int(inst.responses[j])
        yield Schedule.from_starts(inst, starts)


def test_area_bound_by_hand():
    inst = Instance.from_arrays(64, [5, 3], [12, 40])
    # areas 138 and 940: (2*138 + 940) / 64 = 19
    assert area_bound_fraction(inst) == Fraction(1216, 64)
    assert area_bound(inst) == 19
    inst = Instance.from_arrays(10, [1, 1, 2], [1, 2, 1])  # areas 2, 5, 3
    assert area_bound_fraction(inst) == Fraction(3 * 2 + 2 * 3 + 5, 10)
    assert area_bound(inst) == 2  # ceiling of 1.7


@settings(max_examples=150, deadline=None)
@given(instances(max_n=5, max_memory=16, arrivals=True))
def test_bounds_below_every_valid_schedule(inst):
    b = lower_bounds(inst)
    assert b.best == max(b.area, b.processing)
    assert b.best_name in ("area", "processing")
    assert b.area <= b.best and b.processing <= b.best
    assert b.area == area_bound(inst) and b.processing == processing_bound(inst)
    ms = makespan_bounds(inst)
    for sched in serial_schedules(inst):
        res = check_schedule(inst, sched)
        assert res.valid
        assert res.total_completion >= b.best
        assert res.makespan >= max(ms.values())


@settings(max_examples=100, deadline=None)
@given(instances(max_n=6, max_memory=30), st.integers(0, 10**6))
def test_lp_value_enters_best_consistently(inst, lp):
    b = lower_bounds(inst, lp=float(lp) + 0.3)
    assert b.best == max(b.area, b.processing, lp + 1)
    if b.best_name == "lp":
        assert lp + 1 > max(b.area, b.processing)
    assert b.to_dict()["lp"] == lp + 0.3
