"""Brackets (issue 33): one Bracket type and one merge rule (kvopt.certify), ``kvopt certify``,
and the certify stage of campaigns."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from kvopt.certify import (
    Bracket,
    BracketError,
    Effort,
    ExactResult,
    OptStatus,
    bracket,
    cheap_lb,
    start_bracket,
    tighten,
)
from kvopt.instance import Instance
from kvopt.record import load_record, ratio, save_record, verify_record
from kvopt.schedule import Schedule

ROOT = Path(__file__).resolve().parents[1]
TYPED = ROOT / "instances" / "worst" / "typed"


def _inst() -> Instance:
    return Instance.from_arrays(10, [3, 2, 4, 1], [3, 4, 2, 5], name="t")


def _serial(inst: Instance) -> Schedule:
    starts, t = [], 0
    for o in inst.responses.tolist():
        starts.append(t)
        t += o
    return Schedule.from_starts(inst, starts, producer="serial")


# --------------------------------------------------------------------------- the invariants


def test_a_bracket_with_lb_above_ub_or_optimal_below_is_never_built():
    inst = _inst()
    s = _serial(inst)
    with pytest.raises(BracketError, match="exceeds ub"):
        Bracket(50, 31, 30, OptStatus.FEASIBLE, s, "serial", "area")
    with pytest.raises(BracketError, match="optimal with lb"):
        Bracket(50, 20, 30, OptStatus.OPTIMAL, s, "serial", "area")
    with pytest.raises(BracketError, match="it is optimal"):
        Bracket(50, 30, 30, OptStatus.FEASIBLE, s, "serial", "area")
    with pytest.raises(BracketError, match="exceeds alg"):
        Bracket(25, 28, 30, OptStatus.FEASIBLE, s, "serial", "area")
    ok = Bracket(50, 20, 30, "feasible", s, "serial", "area")
    assert (ok.ratio_certified, ok.ratio_optimistic) == (50 / 30, 50 / 20)
    with pytest.raises(BracketError, match="exceeds"):  # a merge cannot build one either
        tighten(ok, inst, lb=31, lb_source="a wrong bound")


def test_tighten_only_narrows_and_checks_every_schedule():
    inst = _inst()
    s = _serial(inst)
    b = start_bracket(inst, s, lb=10, lb_source="area", schedule=s)
    assert b.alg == b.ub and b.status == "feasible"
    same = tighten(b, inst, lb=5, ub_schedule=s)  # lower lb, same ub: nothing changes
    assert (same.lb, same.ub, same.lb_source) == (10, b.ub, "area")
    # a schedule that breaks the model is never evidence
    bad = Schedule.from_starts(inst, [0, 0, 0, 0], producer="bad")
    with pytest.raises(BracketError, match="fails the checker"):
        tighten(b, inst, ub_schedule=bad)
    # a better checked schedule lowers ub; a bound meeting it makes the bracket optimal
    best = bracket(None, inst, Effort(exact_seconds=10))
    assert best.optimal and best.lb == best.ub
    t = tighten(b, inst, ub_schedule=best.ub_schedule, lb=best.lb, lb_source="exact")
    assert t.optimal and t.ub == best.ub and t.ratio_certified > b.ratio_certified


def test_exact_evidence_counts_a_proven_bound_only():
    inst = _inst()
    s = _serial(inst)
    b = start_bracket(inst, s, lb=cheap_lb(inst, "total")[0], lb_source="cheap", schedule=s)
    broken = ExactResult("infeasible", None, b.ub - 1, None, 0.1, "x")
    assert tighten(b, inst, exact=broken).lb == b.lb  # a failed solve proves nothing
    stopped = ExactResult("unknown", None, b.lb + 1, None, 0.1, "x")  # stopped, bound proven
    t = tighten(b, inst, exact=stopped)
    assert (t.lb, t.lb_source, t.solves) == (b.lb + 1, "exact bound", 1)
    assert not t.optimal


def test_one_merge_rule_in_the_package():
    """The merge of (lb, ub, status) is written once: no module but kvopt.certify decides
    ``optimal`` from a comparison of bounds, clamps a bound to a schedule, or calls the exact
    solver to tighten a bracket by hand."""
    pkg = ROOT / "kvopt"
    patterns = [
        re.compile(r"lb\s*>=\s*ub"),  # "optimal" decided from the cheap bounds
        re.compile(r"min\(\s*(int\()?\s*\w*lb\w*\)?\s*,\s*\w*ub"),  # a bound clamped to a UB
        re.compile(r"\bexact_opt\("),  # a solve outside the pipeline
        re.compile(r"\bcheap_(lb|ub)\("),  # the cheap bounds outside the pipeline
    ]
    # evidence.py: where cheap_lb, cheap_ub and exact_opt are defined; evaluate: the cache
    allowed = {pkg / "certify.py", pkg / "evidence.py", pkg / "campaign" / "evaluate.py"}
    offenders = []
    for path in pkg.rglob("*.py"):
        if path in allowed or "exact" in path.relative_to(pkg).parts[:1]:
            continue
        text = path.read_text()
        for pat in patterns:
            for m in pat.finditer(text):
                line = text[: m.start()].count("\n") + 1
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {m.group(0)}")
    assert offenders == [], "merge rules outside kvopt.certify:\n" + "\n".join(offenders)
    ev = (pkg / "campaign" / "evaluate.py").read_text()
    assert "cheap_ub(" not in ev and "cheap_lb(" not in ev and "tighten(" in ev


# --------------------------------------------------------------------------- kvopt certify


def _weakened(path: Path, out: Path) -> Path:
    """A bundled typed record with its bracket forgotten: the cheap lower bound, status
    feasible (still a valid record)."""
    rec = load_record(path)
    lb, name = cheap_lb(rec.instance, rec.objective)
    assert lb < rec.ub
    weak = replace(rec, lb=lb, opt_status="feasible", ratio_optimistic=ratio(rec.alg, lb),
                   lb_source=name, history=())  # fmt: skip
    assert verify_record(weak) == []
    save_record(weak, out)
    return out


def _kvopt(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "kvopt", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)  # fmt: skip


def test_certify_tightens_in_place_and_keeps_the_old_bracket(tmp_path):
    path = _weakened(TYPED / "greedy-area.json", tmp_path / "ga.json")
    before = load_record(path)
    r = _kvopt("certify", path, "--time-limit", 30, "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    (c,) = d["records"]
    assert c["tighter"] and c["before"]["lb"] == before.lb and c["after"]["opt_status"] == "optimal"
    after = load_record(path)
    assert verify_record(after) == []
    assert after.optimal and after.lb == after.ub == c["after"]["ub"]
    assert after.ratio_optimistic == pytest.approx(after.ratio_certified)
    (old,) = after.history
    assert (old["lb"], old["ub"], old["opt_status"]) == (before.lb, before.ub, "feasible")
    assert old["replaced"]["by"] == "kvopt certify" and old["replaced"]["time_limit"] == 30
    # certified again: nothing to tighten, the file is left as it is
    mtime = path.stat().st_mtime_ns
    r = _kvopt("certify", path, "--time-limit", 5)
    assert r.returncode == 0 and "unchanged" in r.stdout and "->" in r.stdout
    assert path.stat().st_mtime_ns == mtime


def test_a_lower_ub_raises_the_certified_ratio(tmp_path):
    """serial.json (issue 33's table): a schedule better than the record's UB raises ALG/UB."""
    rec = load_record(TYPED / "serial.json")
    inst = rec.instance
    # forget the record's clairvoyant schedule: the cheap one (worse) stands in for it
    cheap = bracket(rec.schedule, inst, objective=rec.objective)
    assert cheap.ub > rec.ub
    weak = replace(rec, opt_schedule=cheap.ub_schedule, ub=cheap.ub, lb=cheap.lb,
                   opt_status="feasible", ratio_certified=cheap.ratio_certified,
                   ratio_optimistic=cheap.ratio_optimistic, history=())  # fmt: skip
    assert verify_record(weak) == []
    path = tmp_path / "serial.json"
    save_record(weak, path)
    r = _kvopt("certify", path, "--time-limit", 60, "--json")
    assert r.returncode == 0, r.stderr
    new = load_record(path)
    assert new.ub < weak.ub and new.ratio_certified > weak.ratio_certified
    assert verify_record(new) == []


@pytest.mark.parametrize("defect", ["not-a-record", "schedule-fails", "negative-limit"])
def test_certify_bad_input_exits_2_and_leaves_the_file(tmp_path, defect):
    path = tmp_path / "r.json"
    src = TYPED / "mcsf.json"
    if defect == "not-a-record":
        path.write_text(json.dumps(json.loads((ROOT / "instances/worst/small/fcfs.json")
                                              .read_text())["instance"]))  # fmt: skip
    else:
        path.write_bytes(src.read_bytes())
    if defect == "schedule-fails":
        d = json.loads(path.read_text())
        for a in d["opt_schedule"]["attempts"]:
            a["start"] = 0  # everything at once: over memory
        path.write_text(json.dumps(d))
    data = path.read_bytes()
    limit = "-1" if defect == "negative-limit" else "5"
    r = _kvopt("certify", path, "--time-limit", limit)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    want = {"not-a-record": "format", "schedule-fails": "opt_schedule",
            "negative-limit": "--time-limit"}[defect]  # fmt: skip
    assert want in lines[0]
    assert path.read_bytes() == data


@pytest.mark.slow
def test_sigkill_leaves_every_record_old_or_new(tmp_path):
    """``kvopt certify`` killed at any moment leaves each record file whole: the old bytes or
    the new record (written to a temporary file and renamed)."""
    src = _weakened(TYPED / "greedy-area.json", tmp_path / "src.json")
    old = src.read_bytes()

    def start(paths):
        return subprocess.Popen([sys.executable, "-m", "kvopt", "certify", *map(str, paths),
                                 "--time-limit", "30"], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip

    # one whole run (three records) tells how long the command takes on this machine, now
    full = [tmp_path / f"full-{j}.json" for j in range(3)]
    for p in full:
        p.write_bytes(old)
    t0 = time.monotonic()
    assert start(full).wait() == 0
    span = time.monotonic() - t0
    for p in full:  # rewritten (the history entry says when: the bytes differ per file)
        assert p.read_bytes() != old and load_record(p).optimal
    seen = set()
    trials = 12

    def first_rewrite(paths):
        """Wait until a record has been rewritten (the event, not a delay: issue 56)."""
        while not any(p.read_bytes() != old for p in paths):
            time.sleep(0.001)

    # kills at once (before the interpreter has started: every record old), after the first
    # rewrite (at least one new), and spread over the whole run, the last ones near its end
    for k in ["start", "rewritten", *range(trials)]:
        paths = [tmp_path / f"k{k}-{j}.json" for j in range(3)]
        for p in paths:
            p.write_bytes(old)
        proc = start(paths)
        if k == "rewritten":
            first_rewrite(paths)
        elif k != "start":
            time.sleep(span * (k + 0.5) / trials)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        for p in paths:
            got = p.read_bytes()
            if got == old:
                seen.add("old")
                continue
            rec = load_record(p)  # whole and valid
            assert verify_record(rec) == [] and rec.optimal and len(rec.history) == 1
            seen.add("new")
        for q in tmp_path.glob(".*.tmp"):  # a temporary file may stay behind, never a record
            q.unlink()
    assert seen == {"old", "new"}  # the kills landed before and after some rewrites


# --------------------------------------------------------------------------- the certify stage


def test_campaign_certifies_its_best_record_and_reports_the_time_apart(tmp_path):
    from kvopt.campaign import search

    res = search("fcfs", budget=16, seed=1, out=tmp_path / "c", progress=False,
                 space={"kind": "typed", "n_max": 40, "memory_max": 40}, certify_seconds=20)  # fmt: skip
    d = res.to_dict()
    assert d["certify"] is not None and d["certify_seconds"] >= 0
    assert d["seconds"] == pytest.approx(d["search_seconds"] + d["certify_seconds"], abs=0.01)
    rec = load_record(res.best.record)
    after = d["certify"]["after"]
    assert (rec.lb, rec.ub, rec.opt_status) == (after["lb"], after["ub"], after["opt_status"])
    assert res.best.ratio_certified == pytest.approx(rec.ratio_certified)
    assert verify_record(rec) == []
    res0 = search("fcfs", budget=16, seed=1, out=tmp_path / "c0", progress=False,
                  space={"kind": "typed", "n_max": 40, "memory_max": 40}, certify_seconds=0)  # fmt: skip
    assert res0.certify is None and res0.certify_seconds == 0


def test_certify_seconds_must_not_be_negative(tmp_path):
    from kvopt.campaign import search
    from kvopt.errors import InputError

    with pytest.raises(InputError, match="--certify-seconds"):
        search("fcfs", budget=2, out=tmp_path / "c", certify_seconds=-1, progress=False)


def test_brackets_are_drawn_as_bars_where_lb_and_ub_differ():
    from matplotlib.figure import Figure

    from kvopt.plotting import draw_brackets

    ax = Figure().subplots()
    # certified and optimistic ratios: a bar at x = 1 and x = 4, the point alone at x = 2
    assert draw_brackets(ax, [1, 2, 4], [2.0, 3.0, 4.0], [2.5, 3.0, 6.0], "C0") == 2
    assert len(ax.collections) == 2
    assert draw_brackets(ax, [1], [2.0], [None], "C0") == 0


def test_no_exact_solve_beyond_the_cell_limit():
    """``Effort.solves``: no exact solve when ``n × horizon`` passes ``EXACT_MAX_CELLS`` beyond
    16 jobs (the time-indexed arrays would not fit); up to 16 jobs the event model takes any
    horizon."""
    from kvopt.certify import EXACT_MAX_CELLS, Effort
    from kvopt.instance import Instance, Job

    eff = Effort(exact_seconds=5.0)
    small = Instance(memory=50, jobs=(Job(2, 3),) * 20)
    assert eff.solves(small)
    o = EXACT_MAX_CELLS // (20 * 20) + 1  # 20 jobs: n × Σo just above the limit
    big = Instance(memory=10 * o, jobs=(Job(1, o),) * 20)
    assert not eff.solves(big)
    assert eff.solves(Instance(memory=10**8, jobs=(Job(1, 10**7),) * 3))
    assert not Effort(exact_seconds=0.0).solves(small)
