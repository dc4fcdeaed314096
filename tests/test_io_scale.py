"""The fast paths of loading and writing at 10⁶ jobs (issue 54) against the forms they replace.

* :func:`kvopt.instance._columns_if_valid` (the whole-column validation) accepts an
  instance only when the job-by-job checks accept it, and gives the same columns;
* :func:`kvopt.schedule.save_schedule` writes the bytes of ``write_json_atomic(to_dict())``;
* :meth:`Schedule.from_dict` gives the same schedule and the same errors on any attempt.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from kvopt.errors import InputError
from kvopt.fileio import write_json_atomic
from kvopt.instance import Instance, Job, _columns_if_valid, load_instance, save_instance
from kvopt.schedule import Attempt, Schedule, load_schedule, save_schedule


def _slow_accepts(memory, jobs) -> bool:
    """The job-by-job checks alone (the reference): does the instance pass?"""
    import kvopt.instance as mod

    keep = mod._columns_if_valid
    mod._columns_if_valid = lambda m, j: None
    try:
        Instance(memory, tuple(jobs))
        return True
    except InputError:
        return False
    finally:
        mod._columns_if_valid = keep


def _random_jobs(rng, n, memory):
    jobs = []
    for i in range(n):
        s = int(rng.integers(1, memory))
        o = int(rng.integers(1, memory - s + 1))
        a = int(rng.integers(0, 50)) if rng.random() < 0.7 else 0
        jid = rng.choice([None, f"r{i}", i])
        pr = int(rng.integers(1, 20)) if rng.random() < 0.3 else None
        jobs.append(Job(s, o, a, None if jid is None else jid, pr))
    return jobs


#: One defect each; the fast test must refuse every one (the slow checks then decide).
DEFECTS = [
    lambda j: Job(0, j.response, j.arrival),
    lambda j: Job(j.prompt, 0, j.arrival),
    lambda j: Job(j.prompt, j.response, -1),
    lambda j: Job(True, j.response, j.arrival),
    lambda j: Job(j.prompt, j.response, False),
    lambda j: Job(float(j.prompt), j.response, j.arrival),
    lambda j: Job(j.prompt, j.response, j.arrival, predicted_response=0),
    lambda j: Job(j.prompt, j.response, j.arrival, predicted_response=2.0),
    lambda j: Job(j.prompt, j.response, j.arrival, id=1.5),
    lambda j: Job(j.prompt, 10**6, j.arrival),
    lambda j: Job(np.int64(j.prompt), j.response, j.arrival),  # valid, but not plain int
    lambda j: Job(2**70, j.response, j.arrival),
    lambda j: Job(j.prompt, j.response, 0, arrival_time=1.5),
]


@pytest.mark.parametrize("seed", range(30))
def test_columns_agree_with_the_job_by_job_checks(seed):
    rng = np.random.default_rng(seed)
    memory = int(rng.integers(2, 60))
    jobs = _random_jobs(rng, int(rng.integers(1, 40)), memory)
    if seed % 3 == 0:  # a duplicate id
        jobs.append(Job(1, 1, 0, "dup"))
        jobs.append(Job(1, 1, 0, "dup"))
    elif seed % 3 == 1:  # a defect at a random place
        k = int(rng.integers(len(jobs)))
        jobs[k] = DEFECTS[seed % len(DEFECTS)](jobs[k])
    cols = _columns_if_valid(memory, tuple(jobs))
    slow = _slow_accepts(memory, jobs)
    if cols is not None:
        assert slow
        s, o, a, p = cols
        assert s == [j.prompt for j in jobs] and o == [j.response for j in jobs]
        assert a == [j.arrival for j in jobs]
        assert p == [j.response if j.predicted_response is None else j.predicted_response
                     for j in jobs]  # fmt: skip
    if slow and seed % 3 != 1:
        assert cols is not None  # plain valid instances take the fast path


@pytest.mark.parametrize("defect", range(len(DEFECTS)))
def test_every_defect_goes_to_the_job_by_job_checks(defect):
    jobs = [Job(3, 4, 0), Job(2, 2, 5, "x")]
    jobs[1] = DEFECTS[defect](jobs[1])
    assert _columns_if_valid(16, tuple(jobs)) is None
    bad_memory = [16.0, True, 0, 2**70]
    for m in bad_memory:
        assert _columns_if_valid(m, (Job(1, 1),)) is None


def test_loaded_instance_is_the_same(tmp_path):
    rng = np.random.default_rng(5)
    inst = Instance(64, tuple(_random_jobs(rng, 200, 64)), name="x", meta={"k": 1})
    save_instance(inst, tmp_path / "i.json")
    back = load_instance(tmp_path / "i.json")
    assert back == inst and back.name == "x"
    for name in ("prompts", "responses", "arrivals", "predicted", "areas", "peaks", "regimes"):
        assert np.array_equal(getattr(back, name), getattr(inst, name))
        assert getattr(back, name).dtype == getattr(inst, name).dtype
    # an unnamed file is named after the file; a non-string name is still refused
    d = inst.to_dict()
    del d["name"]
    (tmp_path / "plain.json").write_text(json.dumps(d))
    assert load_instance(tmp_path / "plain.json").name == "plain"
    d["name"] = 3
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(InputError, match="name"):
        load_instance(tmp_path / "bad.json")


def _random_schedule(rng, k, numpy_ints=False):
    att = []
    for _ in range(k):
        job, start, rounds = (int(x) for x in rng.integers(0, 1000, 3))
        done = bool(rng.random() < 0.5)
        if numpy_ints:
            job = np.int64(job)
        att.append(Attempt(job, start, rounds + 1, done))
    return Schedule(tuple(att), 77, "inst", "prod", meta={"m": [1, 2]} if k % 2 else {})


@pytest.mark.parametrize("k", [0, 1, 2, 17, 500])
@pytest.mark.parametrize("numpy_ints", [False, True])
def test_saved_schedule_bytes_are_the_dict_encoding(tmp_path, k, numpy_ints):
    rng = np.random.default_rng(k)
    sched = _random_schedule(rng, k, numpy_ints)
    for n in (None, 1000):
        save_schedule(sched, tmp_path / "fast.json", n)
        write_json_atomic(tmp_path / "ref.json", sched.to_dict(n))
        assert (tmp_path / "fast.json").read_bytes() == (tmp_path / "ref.json").read_bytes()
        back = load_schedule(tmp_path / "fast.json")
        assert back == sched


ODD_ATTEMPTS = [
    {"job": 0, "start": 0, "rounds": 1},
    {"job": 0, "start": 0, "rounds": 1, "completed": 1},
    {"job": 0.0, "start": 0, "rounds": 1, "completed": True},
    {"job": True, "start": 0, "rounds": 1, "completed": True},
    {"job": 0, "start": 0, "rounds": 1, "completed": True, "x": 1},
    [0, 0, 1, True],
]


@pytest.mark.parametrize("odd", range(len(ODD_ATTEMPTS)))
def test_odd_attempts_get_the_field_by_field_errors(odd):
    d = {"format": "kvopt.schedule", "version": 1, "memory": 5,
         "attempts": [{"job": 0, "start": 0, "rounds": 1, "completed": True},
                      ODD_ATTEMPTS[odd]]}  # fmt: skip
    with pytest.raises(InputError, match=r"attempts\[1\]"):
        Schedule.from_dict(d)


@pytest.mark.parametrize("seed", range(40))
def test_checker_completion_times_match_the_attempt_loop(seed):
    """The vectorised ``C_i`` of the checker against the loop it replaced: the last completing
    attempt of each job in file order, ``None`` for a job without one (also on schedules
    that break rules: twice completed, negative starts, unknown jobs)."""
    from kvopt.schedule import check_schedule

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 8))
    inst = Instance(100, tuple(Job(int(rng.integers(1, 10)), int(rng.integers(1, 10)))
                               for _ in range(n)))  # fmt: skip
    att = []
    for _ in range(int(rng.integers(0, 15))):
        j = int(rng.integers(-1, n + 1))
        o = int(inst.responses[j]) if 0 <= j < n else 3
        r = o if rng.random() < 0.6 else int(rng.integers(0, o + 2))
        att.append(Attempt(j, int(rng.integers(-2, 30)), r, bool(rng.random() < 0.8)))
    sched = Schedule(tuple(att), 100)
    ref: list[int | None] = [None] * n
    for a in att:
        if 0 <= a.job < n and a.completed and a.rounds == inst.responses[a.job]:
            ref[a.job] = a.start + a.rounds
    res = check_schedule(inst, sched)
    assert list(res.completion_times) == ref
    assert all(c is None or type(c) is int for c in res.completion_times)
