"""Typed campaigns (``--space kind=typed``, SPEC §4 and §9; issue 16): search, resume, workers,
bad input, shrink, and the typed cheap upper bound."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kvopt.campaign import read_log, search
from kvopt.certify import cheap_ub
from kvopt.exact.heuristic import _orders
from kvopt.record import load_record, verify_record
from kvopt.space import Space, TypedSpace
from kvopt.upper import place

SMALL = {"kind": "typed", "types_max": 3, "n_min": 2, "n_max": 12, "memory_min": 8,
         "memory_max": 16, "max_response": 6}  # fmt: skip


def run(tmp_path, name, **kw):
    kw.setdefault("space", SMALL)
    kw.setdefault("exact_time_limit", 20.0)
    kw.setdefault("certify_seconds", 5.0)  # the certify stage's default (60 s) is for real runs
    return search("fcfs", out=tmp_path / name, progress=False, **kw)


def _lines(folder):
    log = read_log(folder / "evaluations.jsonl")
    return {k: (r.key, r.ratio_certified, r.ratio_optimistic, r.ub, r.lb) for k, r in log.items()}


def test_typed_campaign_end_to_end(tmp_path, cli):
    # up to 24 jobs: the large-typed path (LP screen, HiGHS) runs too
    res = run(tmp_path, "t", budget=16, seed=1, space={**SMALL, "n_max": 24},
              exact_time_limit=2.0)  # fmt: skip
    assert res.evaluations == 16 and res.best is not None and res.best.ratio_certified >= 1
    head = json.loads((tmp_path / "t" / "campaign.json").read_text())
    assert head["space"]["kind"] == "typed" and head["space"]["types_max"] == 3
    sp = TypedSpace.from_dict(head["space"])
    for r in read_log(tmp_path / "t" / "evaluations.jsonl").values():
        assert sp.rule(r.to_instance()) is None
    rec = load_record(res.best.record)
    assert verify_record(rec) == []
    assert rec.found_by["types"] == [list(t) for t in TypedSpace.types(rec.instance)]
    assert cli("check", res.best.record).code == 0


def test_typed_resume_and_workers_give_the_same_records(tmp_path):
    one = run(tmp_path, "one", budget=24, seed=2, batch=6)
    part = run(tmp_path, "two", budget=10, seed=2, batch=6)  # cut inside a batch
    assert part.evaluations == 10
    rest = run(tmp_path, "two", budget=24, seed=2, batch=6)
    assert rest.new_evaluations == 14
    pool = run(tmp_path, "pool", budget=24, seed=2, batch=6, workers=2)
    a, b, c = (_lines(tmp_path / d) for d in ("one", "two", "pool"))
    assert a == b == c and sorted(a) == list(range(24))
    best = [json.loads(open(r.best.record).read()) for r in (one, rest, pool)]
    for rec in best:
        rec.pop("found_by")
    assert best[0] == best[1] == best[2]


def test_old_folder_without_kind_resumes_as_jobs(tmp_path):
    out = tmp_path / "old"
    first = search("fcfs", budget=8, seed=1, out=out, progress=False)
    head = json.loads((out / "campaign.json").read_text())
    assert head["space"].pop("kind") == "jobs"
    (out / "campaign.json").write_text(json.dumps(head))
    again = search("fcfs", budget=8, seed=1, out=out, progress=False)
    assert again.new_evaluations == 0 and again.best.ratio_certified == first.best.ratio_certified


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--space", "kind=bogus"], "kind"),
        (["--space", "kind=typed", "--space", "types_max=0"], "types_max"),
        (["--space", "kind=typed", "--space", "count_max=0"], "count_max"),
        (["--space", "kind=typed", "--strategy", "cma"], "--strategy"),
        (["--space", "kind=jobs", "--space", "types_max=2"], "types_max"),
    ],
)
def test_bad_typed_input_exit_2_one_line(tmp_path, cli, argv, needle):
    r = cli("search", "--policy", "fcfs", *argv, "--budget", "2", "--out", tmp_path / "o",
            "--no-progress")  # fmt: skip
    assert r.code == 2, (r.out, r.err)
    assert needle in r.err and len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err


@pytest.mark.parametrize("argv", [["--space", "kind=bogus"], ["--space", "types_max=0",
                                                              "--space", "kind=typed"]])  # fmt: skip
def test_bad_typed_input_validate_and_shrink(tmp_path, cli, argv):
    r = cli("validate", "--claims", "area-lb", "--out", tmp_path / "v", *argv, "--no-progress")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1, r.err


def test_shrink_typed_record_reduces_types_and_counts(tmp_path, cli):
    # greedy-area with arrivals: a typed instance with many copies
    res = search("greedy-area", space={**SMALL, "n_min": 8, "n_max": 24}, budget=8, seed=4,
                 out=tmp_path / "g", progress=False, exact_time_limit=2.0,
                 certify_seconds=2.0)  # fmt: skip
    rec = load_record(res.best.record)
    target = max(1.0, rec.ratio_certified * 0.95)
    out = tmp_path / "small.json"
    r = cli("shrink", res.best.record, "--min-ratio", f"{target:.6f}", "--out", out,
            "--space", "kind=typed", "--time-limit", "2", "--seconds", "20", "--json")  # fmt: skip
    assert r.code == 0, r.err
    small = load_record(out)
    assert verify_record(small) == []
    assert small.ratio_certified >= target - 1e-9
    assert small.instance.n <= rec.instance.n
    assert small.found_by["types"] == [list(t) for t in TypedSpace.types(small.instance)]
    types_before, types_after = TypedSpace.types(rec.instance), TypedSpace.types(small.instance)
    assert sum(t.count for t in types_after) <= sum(t.count for t in types_before)
    bad = cli("shrink", res.best.record, "--min-ratio", "1", "--space", "kind=nope")
    assert bad.code == 2 and "kind" in bad.err


def reference_place(inst, order):
    """The serial schedule by definition: each job at its earliest feasible start, every round
    from its arrival to the SPEC horizon scanned (the heuristic's code before it was sped up)."""
    from numpy.lib.stride_tricks import sliding_window_view

    H = int(inst.arrivals.max() + inst.responses.sum()) + 1
    slack = np.full(H + int(inst.responses.max(initial=1)) + 1, inst.memory, dtype=np.int64)
    starts = np.zeros(inst.n, dtype=np.int64)
    for i in order:
        s, o, a = int(inst.prompts[i]), int(inst.responses[i]), int(inst.arrivals[i])
        need = s + 1 + np.arange(o, dtype=np.int64)
        t = a + int(np.flatnonzero((sliding_window_view(slack[a:], o) >= need).all(axis=1))[0])
        slack[t : t + o] -= need
        starts[i] = t
    return starts


def test_fast_place_equals_the_serial_schedule():
    rng = np.random.default_rng(0)
    spaces = (Space(arrivals=True, max_arrival=10), TypedSpace(n_max=40, arrivals=True))
    for sp in spaces:
        for _ in range(40):
            inst = sp.sample(rng)
            for order in _orders(inst, "total") + [rng.permutation(inst.n)]:
                assert (place(inst, order) == reference_place(inst, order)).all()


@pytest.mark.parametrize("objective", ["total", "makespan"])
def test_typed_cheap_ub_is_never_worse(objective):
    rng = np.random.default_rng(1)
    sp = TypedSpace(n_max=60, memory_max=64, max_response=16, arrivals=True, max_arrival=20)
    better = 0
    for _ in range(25):
        inst = sp.sample(rng)
        _, plain, _ = cheap_ub(inst, objective)
        _, typed, src = cheap_ub(inst, objective, typed=True)
        assert typed <= plain
        better += typed < plain
    _, screen, _ = cheap_ub(inst, objective, typed=True, full=False)
    assert screen >= typed


def test_typed_anneal_restarts_chains_from_motifs(tmp_path):
    """Typed campaigns walk in four chains and restart them from structural motifs (issue 32);
    ``chains=1,motifs=0`` is the single walk of kvopt 0.2."""
    res = run(tmp_path, "m", budget=48, seed=3, space={**SMALL, "n_max": 24}, batch=8,
              options={"patience": 1})  # fmt: skip
    origins = [r.origin for r in read_log(tmp_path / "m" / "evaluations.jsonl").values()]
    assert any(o.startswith("motif:") for o in origins), origins
    assert res.evaluations == 48
    one = run(tmp_path, "s", budget=24, seed=3, options={"chains": 1, "motifs": 0})
    origins = [r.origin for r in read_log(tmp_path / "s" / "evaluations.jsonl").values()]
    assert not any(o.startswith("motif:") for o in origins) and one.evaluations == 24


@pytest.mark.parametrize("opt", [{"t0": -1}, {"cooling": 1.5}, {"patience": 0}, {"chains": 0},
                                 {"motifs": 2}])  # fmt: skip
def test_anneal_options_are_range_checked(tmp_path, opt):
    from kvopt.errors import InputError

    with pytest.raises(InputError, match="--option"):
        run(tmp_path, "bad", budget=4, seed=1, options=opt)
