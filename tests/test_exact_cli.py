"""``kvopt solve`` and ``kvopt bound --lp`` (SPEC §4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kvopt.cli import main
from kvopt.instance import Instance, save_instance
from kvopt.schedule import check_schedule, load_schedule


@pytest.fixture
def inst_file(tmp_path):
    inst = Instance.from_arrays(20, [5, 3, 8, 2, 6], [4, 6, 3, 5, 2], [0, 2, 0, 0, 1], name="small")
    path = tmp_path / "small.json"
    save_instance(inst, path)
    return inst, path


def run_cli(*args):
    """Run the real entry point in a subprocess: stdout must hold exactly one JSON object."""
    return subprocess.run(
        [sys.executable, "-c", "from kvopt.cli import entry; entry()", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard only (a cold Numba cache under load, issue 56)
    )


def test_solve_json_is_one_object_and_schedule_checks(inst_file, tmp_path):
    inst, path = inst_file
    out = tmp_path / "opt.json"
    r = run_cli("solve", path, "--json", "--out", out, "--time-limit", "20")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)  # exactly one object, no banner
    assert r.stdout.count("\n") == 1
    for key in ("status", "objective", "bound", "gap", "solver", "seconds", "schedule"):
        assert key in d
    assert d["status"] == "optimal" and d["bound"] == d["objective"]
    sched = load_schedule(out)
    chk = check_schedule(inst, sched)
    assert chk.valid and chk.total_completion == d["objective"]


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_solve_makespan_each_solver(inst_file, solver, capsys):
    _, path = inst_file
    assert main(["solve", str(path), "--objective", "makespan", "--solver", solver, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["status"] == "optimal" and d["objective_name"] == "makespan"
    assert d["objective"] == d["schedule"]["objective"]["makespan"]


def test_bound_lp_json(inst_file, capsys):
    _, path = inst_file
    assert main(["bound", str(path), "--lp", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["area"] <= d["lp"] + 1e-9 and d["best"] >= d["area"]


def test_bound_reports_the_rank_bound(capsys):
    """``rank`` beside ``area`` and ``processing`` (models/orders.md §9), and ``best`` names it
    where it wins: on the paper's Proposition 1 instance it is above the LP too."""
    path = os.path.join(
        os.path.dirname(__file__), "..", "instances", "paper", "prop1-L3-case2.json"
    )
    assert main(["bound", path, "--lp", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["rank"] >= max(d["area"], d["processing"])
    assert d["rank"] > d["lp"] and d["best_name"] == "rank" and d["best"] == d["rank"]
    assert d["makespan"]["rank"] <= d["makespan"]["best"]
    assert main(["bound", path]) == 0
    assert "rank" in capsys.readouterr().out


@pytest.mark.parametrize("ext", ["mps", "lp"])
def test_export(inst_file, tmp_path, ext):
    _, path = inst_file
    target = tmp_path / f"model.{ext}"
    assert main(["solve", str(path), "--export", str(target)]) == 0
    text = target.read_text()
    assert "x_g0_t" in text


def test_bad_input_exit_2(inst_file, tmp_path, capsys):
    _, path = inst_file
    assert main(["solve", str(path), "--export", str(tmp_path / "model.txt")]) == 2
    assert "--export" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "kvopt.instance", "version": 1, "memory": 3.0, "jobs": []}')
    assert main(["solve", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "memory" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(path), "--time-limit", "-1"])
    assert exc.value.code == 2


def test_solve_json_on_a_typed_instance(tmp_path):
    """The typed path writes one JSON object: with two threads the two HiGHS models that race
    (models/time-indexed.md §10) keep their statistics apart."""
    path = typed_instance(tmp_path)
    r = run_cli("solve", path, "--json", "--time-limit", "300", "--threads", "2")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["status"] == "optimal" and d["route"]["name"] == "typed-race"
    assert d["solver"] in ("auto(highs)", "auto(highs-plain)")
    assert {"highs", "highs-plain"} <= set(d["stats"])
    assert d["stats"]["highs"]["rows"] > d["stats"]["highs-plain"]["rows"]  # the rounded rows


def test_solve_json_on_a_typed_instance_with_the_block_bound(tmp_path):
    """With three threads the block bound joins the typed race; its statistics hold no NaN
    (its master LP value before the first solve) and the output is one JSON object."""
    r = run_cli(
        "solve", typed_instance(tmp_path), "--json", "--time-limit", "300", "--threads", "3"
    )
    assert r.returncode == 0, r.stderr
    assert "NaN" not in r.stdout
    d = json.loads(r.stdout)
    assert d["status"] == "optimal" and d["route"]["name"] == "typed-race-wide"


def typed_instance(tmp_path):
    """An instance file of 18 jobs of two types (beyond the small path, typed)."""
    inst = Instance.from_arrays(30, [9] * 9 + [3] * 9, [3] * 9 + [6] * 9, [0] * 9 + [2] * 9)
    path = tmp_path / "typed.json"
    save_instance(inst, path)
    return path
