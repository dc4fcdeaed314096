"""The schedule checker (SPEC §1) against a naive round-by-round reference."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.instance import Instance
from kvopt.schedule import (
    Attempt,
    Schedule,
    ScheduleInvalid,
    check_schedule,
    checked,
    load_schedule,
    memory_profile,
    save_schedule,
)


def naive_rules(inst: Instance, sched: Schedule) -> tuple[set[str], set[int]]:
    """Reference: every rule, memory counted round by round. Returns (rules broken, rounds over M)."""
    broken: set[str] = set()
    usage: dict[int, int] = defaultdict(int)
    by_job: dict[int, list[Attempt]] = defaultdict(list)
    for a in sched.attempts:
        if not 0 <= a.job < inst.n:
            broken.add("job-index")
            continue
        s, o, arr = inst.jobs[a.job].prompt, inst.jobs[a.job].response, inst.jobs[a.job].arrival
        if a.start < 0:
            broken.add("start")
        if a.rounds < 1:
            broken.add("rounds")
        if 0 <= a.start < arr:
            broken.add("arrival")
        if a.rounds > o:
            broken.add("rounds-exceed-response")
        if 1 <= a.rounds <= o and a.completed != (a.rounds == o):
            broken.add("completed-flag")
        by_job[a.job].append(a)
        if a.rounds >= 1 and a.start >= 0:
            for u in range(a.rounds):
                usage[a.start + u] += s + u + 1
    for j in range(inst.n):
        atts = sorted(by_job[j], key=lambda a: a.start)
        for x, y in zip(atts, atts[1:]):
            if y.start < x.start + x.rounds:
                broken.add("overlap")
            if x.completed and x.rounds == inst.jobs[j].response:
                broken.add("attempt-after-completion")
        done = sum(1 for a in atts if a.completed)
        if done == 0:
            broken.add("no-completion")
        if done > 1:
            broken.add("multiple-completions")
    over = {t for t, m in usage.items() if m > inst.memory}
    if over:
        broken.add("memory")
    return broken, over


@st.composite
def schedules(draw):
    inst = draw(instances(max_n=4, max_memory=20, arrivals=True))
    attempts = []
    for _ in range(draw(st.integers(0, 8))):
        job = (
            draw(st.integers(-1, inst.n))
            if draw(st.booleans()) and inst.n
            else draw(st.integers(0, max(inst.n - 1, 0)))
        )
        if inst.n == 0:
            job = draw(st.integers(0, 2))
        o = inst.jobs[job].response if 0 <= job < inst.n else 3
        start = draw(st.integers(-1, 25))
        rounds = draw(st.integers(0, o + 1))
        completed = rounds == o if draw(st.integers(0, 9)) else draw(st.booleans())
        attempts.append(Attempt(job, start, rounds, completed))
    return inst, Schedule(tuple(attempts), inst.memory)


@settings(max_examples=400, deadline=None)
@given(schedules())
def test_checker_agrees_with_naive_count(case):
    inst, sched = case
    res = check_schedule(inst, sched)
    rules, over = naive_rules(inst, sched)
    assert {e.rule for e in res.errors} == rules
    assert res.valid == (not rules)
    # every reported memory stretch starts at a round that is over, right after one that is not
    for e in res.errors:
        if e.rule == "memory" and e.round is not None:
            assert e.round in over and e.round - 1 not in over
            # the job named runs in that round, and it is the last started of those that do
            # (issue 55: the exit-status page promises job, round and rule)
            live = [a for a in sched.attempts if a.start <= e.round < a.start + a.rounds
                    and 0 <= a.job < inst.n]  # fmt: skip
            assert e.job is not None and e.job in {a.job for a in live}
            assert max(a.start for a in live if a.job == e.job) == max(a.start for a in live)
            assert e.message.startswith(f"job {e.job}, round {e.round}: ")
    assert len([e for e in res.errors if e.rule == "memory" and e.round is not None]) == len(
        {t for t in over if t - 1 not in over}
    )


@settings(max_examples=200, deadline=None)
@given(instances(max_n=5, max_memory=20, arrivals=True), st.randoms(use_true_random=False))
def test_valid_serial_schedules_and_profile(inst, rnd):
    """Jobs one after another (random order) always form a valid schedule; the profile matches."""
    order = list(range(inst.n))
    rnd.shuffle(order)
    t, starts = 0, [0] * inst.n
    for j in order:
        t = max(t, inst.jobs[j].arrival)
        starts[j] = t
        t += inst.jobs[j].response
    sched = Schedule.from_starts(inst, starts)
    res = check_schedule(inst, sched)
    assert res.valid, res.errors
    assert res.objectives == {
        "total_completion": sum(res.completion_times),
        "makespan": max(res.completion_times, default=0),
    }
    prof = memory_profile(inst, sched)
    naive = np.zeros(len(prof), dtype=np.int64)
    for j in range(inst.n):
        for u in range(inst.jobs[j].response):
            naive[starts[j] + u] += inst.jobs[j].prompt + u + 1
    assert (prof == naive).all()
    assert res.peak_memory == (int(prof.max()) if len(prof) else 0)


INST = Instance.from_arrays(10, [2, 3, 1], [3, 2, 4], [0, 0, 5])


@pytest.mark.parametrize(
    "attempts, rule, job, round_",
    [
        ([(0, 0, 3, True), (1, 0, 2, True), (2, 4, 4, True)], "arrival", 2, 4),
        ([(0, 0, 3, True), (1, 0, 2, True)], "no-completion", 2, None),
        (
            [(0, 0, 3, True), (0, 3, 3, True), (1, 0, 2, True), (2, 5, 4, True)],
            "multiple-completions",
            0,
            None,
        ),
        (
            [(0, 0, 3, True), (0, 4, 1, False), (1, 0, 2, True), (2, 5, 4, True)],
            "attempt-after-completion",
            0,
            4,
        ),
        ([(0, 0, 2, False), (0, 1, 3, True), (1, 5, 2, True), (2, 5, 4, True)], "overlap", 0, 1),
        (
            [(0, 0, 3, False), (1, 0, 2, True), (2, 5, 4, True), (0, 9, 3, True)],
            "completed-flag",
            0,
            0,
        ),
        ([(0, 0, 4, True), (1, 0, 2, True), (2, 5, 4, True)], "rounds-exceed-response", 0, 0),
        ([(0, 0, 3, True), (1, 0, 2, True), (2, 5, 4, True), (7, 0, 1, False)], "job-index", 7, 0),
        ([(0, 0, 3, True), (1, 0, 2, True), (2, 5, 4, True), (1, -2, 1, False)], "start", 1, -2),
        ([(0, 0, 3, True), (1, 0, 2, True), (2, 5, 4, True), (1, 3, 0, False)], "rounds", 1, 3),
    ],
)
def test_each_rule_is_reported_with_job_and_round(attempts, rule, job, round_):
    sched = Schedule(tuple(Attempt(*a) for a in attempts), 10)
    res = check_schedule(INST, sched)
    assert not res.valid
    hits = [e for e in res.errors if e.rule == rule]
    assert hits, res.errors
    assert hits[0].job == job and hits[0].round == round_
    assert str(job) in hits[0].message


def test_memory_violation_names_round_and_amount():
    # jobs 0 and 1 together: rounds 0,1 hold 3+4=7, 4+5=9; round 2 job 0 alone holds 5
    inst = Instance.from_arrays(8, [2, 3], [3, 2])
    res = check_schedule(inst, Schedule.from_starts(inst, [0, 0]))
    mem = [e for e in res.errors if e.rule == "memory"]
    assert len(mem) == 1 and mem[0].round == 1 and mem[0].amount == 1
    assert mem[0].job == 1  # of the two started at round 0, the larger index is named
    assert mem[0].message.startswith("job 1, round 1: the running attempts of jobs 0, 1 hold 9 >")
    with pytest.raises(ScheduleInvalid):
        checked(inst, Schedule.from_starts(inst, [0, 0]))


def test_memory_budget_and_stated_fields(tmp_path):
    inst = Instance.from_arrays(8, [2, 3], [3, 2])
    good = Schedule.from_starts(inst, [0, 3])
    save_schedule(good, tmp_path / "s.json", inst.n)
    assert check_schedule(inst, load_schedule(tmp_path / "s.json")).valid
    d = json.loads((tmp_path / "s.json").read_text())
    d["objective"]["total_completion"] += 1
    d["completion_times"][1] = 4
    d["memory"] = 9
    (tmp_path / "t.json").write_text(json.dumps(d))
    rules = {e.rule for e in check_schedule(inst, load_schedule(tmp_path / "t.json")).errors}
    assert rules == {"memory-budget", "stated-objective", "stated-completion-times"}


def test_large_schedule_is_checked_without_per_round_loop():
    """100,000 attempts over 10^7 rounds (the speed goal itself is in benchmarks/checker.py)."""
    n = 100_000
    inst = Instance.from_arrays(1000, np.full(n, 10), np.full(n, 100))
    starts = np.arange(n) * 100
    res = check_schedule(inst, Schedule.from_starts(inst, starts))
    assert res.valid and res.peak_memory == 110
    assert res.makespan == 10**7
