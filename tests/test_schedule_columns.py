"""Columnar schedules (issue 54): :meth:`Schedule.from_columns` against the same schedule
built from :class:`Attempt` objects.

Equal, same hash, same checker result (valid schedules and ones that break a rule), the
same file bytes as the writer of attempt-built schedules (``write_json_atomic`` of the
dict), the round trip through ``save_schedule`` / ``load_schedule`` (columns again), and
the errors of bad arguments.  No Attempt object is built on the way of ``kvopt simulate
--out`` / ``--json`` and of ``kvopt check``.
"""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvopt.attempts import ROWS, attempts_text, parse_attempts_text
from kvopt.errors import InputError
from kvopt.fileio import read_json, write_json_atomic
from kvopt.instance import Instance, Job
from kvopt.schedule import (
    Attempt,
    Schedule,
    check_schedule,
    load_schedule,
    read_columnar,
    save_schedule,
)
from kvopt.simulation import simulate

INT64 = st.integers(-(2**63), 2**63 - 1)


def _columnar(sched: Schedule) -> Schedule:
    a = sched.attempts
    return Schedule.from_columns(
        np.array([x.job for x in a], dtype=np.int64),
        np.array([x.start for x in a], dtype=np.int64),
        np.array([x.rounds for x in a], dtype=np.int64),
        np.array([x.completed for x in a], dtype=bool),
        memory=sched.memory,
        instance=sched.instance,
        producer=sched.producer,
        meta=sched.meta,
    )


def _built(sched: Schedule) -> bool:
    return "attempts" in sched.__dict__


@st.composite
def instance_and_schedule(draw):
    """A small instance and a schedule for it: valid (a serial run with kills) or with one
    defect (overlap, memory overflow, a wrong completion flag, a job twice, …)."""
    n = draw(st.integers(1, 6))
    memory = draw(st.integers(8, 40))
    jobs = []
    for _ in range(n):
        s = draw(st.integers(1, memory - 2))
        o = draw(st.integers(1, memory - s))
        jobs.append(Job(s, o, draw(st.integers(0, 5))))
    inst = Instance(memory, tuple(jobs), name="h")
    attempts, t = [], 0
    for i, j in enumerate(jobs):
        t = max(t, j.arrival)
        if j.response > 1 and draw(st.booleans()):  # a killed attempt first
            r = draw(st.integers(1, j.response - 1))
            attempts.append(Attempt(i, t, r, False))
            t += r
        attempts.append(Attempt(i, t, j.response, True))
        t += j.response
    defect = draw(st.sampled_from(["none", "overlap", "memory", "flag", "twice", "job", "drop"]))
    k = draw(st.integers(0, len(attempts) - 1))
    a = attempts[k]
    if defect == "overlap":
        attempts.append(Attempt(a.job, a.start, 1, a.rounds == 1))
    elif defect == "memory":
        attempts.append(Attempt(0, attempts[0].start, jobs[0].response, True))
        attempts.append(Attempt(a.job, a.start, a.rounds, a.completed))
    elif defect == "flag":
        attempts[k] = Attempt(a.job, a.start, a.rounds, not a.completed)
    elif defect == "twice":
        attempts.append(Attempt(a.job, t + 3, jobs[a.job].response, True))
    elif defect == "job":
        attempts.append(Attempt(n + 2, 0, 1, False))
    elif defect == "drop":
        del attempts[k]
    if draw(st.booleans()):
        attempts.sort(key=lambda x: (x.start, x.job))
    return inst, Schedule(tuple(attempts), memory, "h", "test")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance_and_schedule())
def test_columnar_and_attempt_schedules_agree(case):
    inst, ref = case
    col = _columnar(ref)
    assert not _built(col)
    assert check_schedule(inst, col) == check_schedule(inst, ref)
    assert col.completion_times(inst.n) == ref.completion_times(inst.n)
    assert (col.kills, col.wasted_rounds) == (ref.kills, ref.wasted_rounds)
    assert col.to_dict(inst.n) == ref.to_dict(inst.n) and col.to_dict() == ref.to_dict()
    assert not _built(col)  # none of the above built the attempts
    assert col == ref and ref == col and hash(col) == hash(ref)
    assert col.attempts == ref.attempts and repr(col) == repr(ref)
    assert col.attempts is col.attempts  # built once, kept


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(case=instance_and_schedule())
def test_file_bytes_and_round_trip(tmp_path, case):
    inst, ref = case
    col = _columnar(ref)
    for n in (inst.n, None):
        write_json_atomic(tmp_path / "dict.json", ref.to_dict(n))
        save_schedule(ref, tmp_path / "ref.json", n)
        save_schedule(col, tmp_path / "col.json", n)
        want = (tmp_path / "dict.json").read_bytes()
        assert (tmp_path / "ref.json").read_bytes() == want
        assert (tmp_path / "col.json").read_bytes() == want
    back = load_schedule(tmp_path / "col.json")
    if ref.attempts:  # read as columns ("attempts": [] takes the general path)
        assert back._columns() is not None
        assert back == col and not _built(back)  # both columnar: compared as columns
    assert back == ref
    assert back.stated_completion_times == (
        tuple(ref.to_dict(None)["completion_times"])
        if "completion_times" in ref.to_dict()
        else None
    )
    assert check_schedule(inst, back) == check_schedule(inst, Schedule.from_dict(json.loads(want)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(INT64, INT64, INT64, st.booleans()), min_size=1, max_size=40))
def test_text_of_any_int64_is_the_encoders(rows):
    """Every int64 (the extremes, negatives) is written as ``json`` writes it and read back."""
    cols = tuple(
        np.array([r[c] for r in rows], dtype=bool if c == 3 else np.int64) for c in range(4)
    )
    text = b"".join(attempts_text(cols))
    items = [{"job": j, "start": s, "rounds": r, "completed": c} for j, s, r, c in rows]
    enc = json.JSONEncoder(separators=(", ", ": "))
    assert text == ",\n".join("  " + enc.encode(d) for d in items).encode()
    back = parse_attempts_text(text)
    assert back is not None and all(np.array_equal(a, b) for a, b in zip(back, cols, strict=True))


def test_large_schedule_bytes_with_numpy_ints_and_kills(tmp_path):
    """More rows than one block of the writer, widths changing between blocks, numpy
    integers in the attempt-built form (its dict path)."""
    rng = np.random.default_rng(5)
    k = 3 * ROWS + 17
    job = rng.integers(0, 10**6, k)
    start = np.sort(rng.integers(0, 10**9, k))
    start[: ROWS // 2] = rng.integers(0, 10, ROWS // 2)
    rounds = rng.integers(1, 10**5, k)
    done = rng.random(k) < 0.2
    col = Schedule.from_columns(job, start, rounds, done, memory=7, instance="x", producer="p")
    ref = Schedule(tuple(map(Attempt, job, start, rounds, done)), 7, "x", "p")  # numpy ints
    write_json_atomic(tmp_path / "dict.json", ref.to_dict(10**6))
    save_schedule(col, tmp_path / "col.json", 10**6)
    assert (tmp_path / "col.json").read_bytes() == (tmp_path / "dict.json").read_bytes()
    back = load_schedule(tmp_path / "dict.json")
    assert back._columns() is not None and back == col


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace(b'"job": 1,', b'"job": 01,'),
        lambda t: t.replace(b'"completed": true', b'"completed": 1', 1),
        lambda t: t.replace(b'"rounds": 3', b'"rounds": 3.0', 1),
        lambda t: t.replace(b'"start": 0', b'"start":0', 1),
        lambda t: t.replace(b', "completed"', b', "extra": 1, "completed"', 1),
        lambda t: t.replace(b'"memory": 10', b'"memory": 0'),
        lambda t: t.replace(b'"memory": 10', b'"memory": 10, "attempts": []'),
        lambda t: t.replace(b'"job": 1,', b'"job": 99999999999999999999,'),
        lambda t: t.replace(b'"producer": "p"', b'"producer": 5'),
        lambda t: t.replace(
            b'"producer": "p"', b'"producer": "kvopt.schedule: attempts read as columns"'
        ),
    ],
)
def test_unusual_files_read_and_fail_as_before(tmp_path, edit):
    """A file not exactly in the writer's form takes the general path: the same schedule or
    the same error (file, field and rule) as ``from_dict`` of the parsed JSON."""
    sched = Schedule(
        (Attempt(0, 0, 2, False), Attempt(1, 0, 3, True), Attempt(0, 3, 4, True)), 10, "i", "p"
    )
    save_schedule(sched, tmp_path / "s.json", 2)
    path = tmp_path / "s.json"
    path.write_bytes(edit(path.read_bytes()))
    try:
        want = Schedule.from_dict(read_json(path), source=str(path))
    except InputError as err:
        with pytest.raises(InputError) as got:
            load_schedule(path)
        assert str(got.value) == str(err)
    else:
        assert load_schedule(path) == want


def test_read_columnar_only_for_the_writers_form(tmp_path):
    sched = Schedule((Attempt(0, 0, 2, True),), 10, "i", "p")
    save_schedule(sched, tmp_path / "s.json", 1)
    assert read_columnar(tmp_path / "s.json") is not None
    write_json_atomic(tmp_path / "one.json", sched.to_dict(1), indent=None)
    assert read_columnar(tmp_path / "one.json") is None
    assert load_schedule(tmp_path / "one.json") == sched
    assert read_columnar(tmp_path / "missing.json") is None


def test_simulate_builds_a_columnar_schedule(tmp_path):
    """The engine's schedule is columnar: checking, writing, ``--json``'s dict and the
    stats read the columns (no Attempt objects), with the same results as before."""
    inst = Instance(20, tuple(Job(3 + i % 4, 2 + i % 5, i // 2) for i in range(30)), name="t")
    res = simulate(inst, "fcfs")
    sched = res.schedule
    assert sched._columns() is not None
    assert check_schedule(inst, sched).valid
    save_schedule(sched, tmp_path / "s.json", inst.n)
    d = res.to_dict(inst.n)
    assert (res.stats.kills, res.stats.wasted_rounds) == (sched.kills, sched.wasted_rounds)
    assert not _built(sched)
    ref = Schedule(sched.attempts, sched.memory, sched.instance, sched.producer)
    assert d["schedule"] == ref.to_dict(inst.n)
    write_json_atomic(tmp_path / "ref.json", ref.to_dict(inst.n))
    assert (tmp_path / "s.json").read_bytes() == (tmp_path / "ref.json").read_bytes()
    assert [(a.start, a.job) for a in sched.attempts] == sorted(
        (a.start, a.job) for a in ref.attempts
    )


def test_immutable():
    job = np.array([0, 1])
    s = Schedule.from_columns(job, [0, 0], [1, 2], [True, True], memory=9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.memory = 3  # type: ignore[misc]
    for col in s.columns():
        with pytest.raises(ValueError):
            col[0] = 5
    with pytest.raises(ValueError):
        job[0] = 7  # taken without a copy: read-only now
    assert pickle.loads(pickle.dumps(s)) == s
    assert s.attempts and "attempts" not in pickle.loads(pickle.dumps(s)).__dict__
    assert dataclasses.replace(s, memory=4) == Schedule(s.attempts, 4)


@pytest.mark.parametrize(
    ("args", "field", "rule"),
    [
        (([0.5], [0], [1], [True]), "job", "must be an integer array, got dtype float64"),
        (([0], [[0]], [1], [True]), "start", "must be a 1-D array, got 2 dimensions"),
        (([0], [0], ["1"], [True]), "rounds", "must be an integer array"),
        (([0], [0], [1], [1]), "completed", "must be a boolean array, got dtype int64"),
        (([0, 1], [0], [1], [True]), "start", "must have the same length as job"),
        (
            (np.array([2**64 - 1], dtype=np.uint64), [0], [1], [True]),
            "job",
            "values must fit int64",
        ),
    ],
)
def test_bad_arguments_name_the_argument_and_the_rule(args, field, rule):
    with pytest.raises(InputError) as err:
        Schedule.from_columns(*args, memory=5)
    assert err.value.field == field and rule in err.value.rule
    with pytest.raises(InputError, match="memory: must be an integer"):
        Schedule.from_columns([0], [0], [1], [True], memory=5.0)


def test_empty_and_other_integer_dtypes():
    s = Schedule.from_columns([], [], [], [], memory=3)
    assert s == Schedule((), 3) and s.attempts == ()
    u = Schedule.from_columns(np.array([1], np.uint8), np.array([2], np.int32), [3], [False],
                              memory=3)  # fmt: skip
    assert u.attempts == (Attempt(1, 2, 3, False),) and type(u.attempts[0].job) is int
    big = Schedule.from_columns(np.array([2**63 - 1], np.uint64), [0], [1], [True], memory=3)
    assert all(c.dtype in (np.int64, np.bool_) for c in big.columns() + u.columns())


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 30), st.integers(1, 9)), max_size=30),
    st.booleans(),
)
def test_memory_segments_are_the_round_by_round_memory(rows, by_start):
    """The checker's piecewise-linear memory (a stable sort and int64 sums since issue 54)
    equals the memory summed round by round, on schedules in any order."""
    from kvopt.memory import memory_segments

    if by_start:
        rows = sorted(rows, key=lambda r: (r[1], r[0]))
    prompts = np.array([3, 1, 7, 2, 5], dtype=np.int64)
    job, start, rounds = (np.array([r[c] for r in rows], dtype=np.int64) for c in range(3))
    bounds, C, K = memory_segments(prompts, job, start, rounds)
    held = {}
    for j, s, r in rows:
        for t in range(s, s + r):
            held[t] = held.get(t, 0) + int(prompts[j]) + t - s + 1
    assert list(bounds) == sorted({*start.tolist(), *(start + rounds).tolist()})
    for k in range(len(bounds) - 1):
        for t in range(int(bounds[k]), int(bounds[k + 1])):
            assert C[k] + K[k] * t == held.get(t, 0)
    assert not len(bounds) or (C[-1], K[-1]) == (0, 0)


def test_simulate_out_json_and_check_build_no_attempt_objects(tmp_path, monkeypatch, capsys):
    """``kvopt simulate --out --json`` (with a time model) and ``kvopt check`` of the file
    never build the attempts of the schedule (issue 54: 35 M of them)."""
    import kvopt.schedule as schedule_module
    from kvopt.cli import main
    from kvopt.instance import save_instance

    inst = Instance(20, tuple(Job(3 + i % 4, 2 + i % 5, i // 2) for i in range(30)), name="t")
    save_instance(inst, tmp_path / "i.json")

    def refuse(cols):
        raise AssertionError("attempts built")

    monkeypatch.setattr(schedule_module, "attempts_of", refuse)
    out = tmp_path / "s.json"
    args = ["simulate", str(tmp_path / "i.json"), "--policy", "route-online", "--out", str(out)]
    assert main([*args, "--json", "--time-model", "llama2-70b-a100-tp2"]) == 0
    assert json.loads(capsys.readouterr().out)["schedule"]["attempts"]
    assert main(["check", str(tmp_path / "i.json"), str(out)]) == 0
    assert "valid" in capsys.readouterr().out
