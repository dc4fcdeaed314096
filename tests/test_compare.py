"""``kvopt compare`` and kvopt.compare: ratios (SPEC §8), not-applicable rows, CLI, pictures."""

from __future__ import annotations

import json

import pytest
from conftest import REPO

from kvopt.bound import lower_bounds
from kvopt.certify import cheap_ub
from kvopt.cli import main
from kvopt.comparison import compare, compare_instance, format_table, plot_worst_vs_opt
from kvopt.instance import Instance, load_instance, save_instance
from kvopt.policy import POLICIES
from kvopt.simulation import simulate

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def small():
    return Instance.from_arrays(16, [2, 3, 1, 5, 2], [4, 6, 3, 2, 5], name="small")


def test_rows_without_exact(small):
    ic = compare_instance(small, ["fcfs", "mcsf", "response", "greedy-area"])
    lb = lower_bounds(small).best
    assert ic.lb == lb and ic.exact is None and ic.opt is None
    fcfs = ic.row("fcfs")
    assert fcfs.total_completion == simulate(small, "fcfs").total_completion
    assert fcfs.ratio_lb == pytest.approx(fcfs.total_completion / lb)
    # the certified ratio uses the best schedule seen: policies and cheap kill-free schedules
    best = min(r.total_completion for r in ic.rows if r.applicable)
    best = min(best, cheap_ub(small, "total")[1])
    assert ic.ub == best
    assert fcfs.ratio_ub == pytest.approx(fcfs.total_completion / best)
    assert fcfs.ratio_opt is None
    resp = ic.row("response")  # small has prompt-heavy jobs: Response does not apply
    assert not resp.applicable and "response-heavy" in resp.reason
    assert resp.total_completion is None


def test_ub_includes_cheap_kill_free_schedules(small):
    ic = compare_instance(small, ["fcfs"])
    fcfs = ic.row("fcfs")
    _, value, source = cheap_ub(small, "total")
    assert value < fcfs.total_completion  # 30 vs 24 on main 7f8b0dd
    assert (ic.ub, ic.ub_name) == (value, f"kill-free {source}")
    assert fcfs.ratio_ub == pytest.approx(fcfs.total_completion / value)
    assert "/UB" in format_table(ic)


def test_memory_binding_trace():
    """issue 16 item 6: on 1,000 trace requests where memory binds, /LB and /UB tell policies apart.

    The serial orders of the cheap UB would take minutes at this horizon: they are left out.
    """
    inst = load_instance(REPO / "instances" / "traces" / "azure-window-n1000-M16384.json")
    ic = compare_instance(inst, ["fcfs", "svf", "alpha-protect", "route"])
    assert not ic.row("route").applicable  # offline: the trace has arrivals
    rows = [r for r in ic.rows if r.applicable]
    assert ic.lb < ic.ub <= ic.row("svf").total_completion
    assert not ic.ub_name.startswith("kill-free serial")
    assert len({round(r.ratio_lb, 3) for r in rows}) == 3
    for r in rows:
        assert r.ratio_ub <= r.ratio_lb and r.ratio_ub >= 1.0
    assert ic.row("fcfs").ratio_ub > 1.3  # memory binds: fcfs is far from the best schedule


def test_with_exact(small):
    ic = compare_instance(small, ["fcfs", "svf", "pack-and-schedule"], exact=True, time_limit=30)
    assert ic.exact["status"] == "optimal"
    opt = ic.opt
    for r in ic.rows:
        assert r.total_completion >= opt
        assert r.ratio_opt == pytest.approx(r.total_completion / opt)
        assert r.ratio_optimistic == pytest.approx(r.ratio_opt)
        assert r.ratio_lb >= r.ratio_opt - 1e-12  # the SPEC §2 bound is below Opt
    assert "Opt = " in format_table(ic)


def test_worst_vs_opt_picture(small, tmp_path):
    ic = compare_instance(small, ["fcfs", "mcsf"], exact=True, time_limit=30)
    assert ic.worst().total_completion == max(r.total_completion for r in ic.rows)
    out = plot_worst_vs_opt(ic, str(tmp_path / "w.png"))
    assert out and (tmp_path / "w.png").read_bytes()[:8] == PNG


def test_folder_and_summary(tmp_path, small):
    save_instance(small, tmp_path / "a.json")
    save_instance(small.replace(name="b", memory=20), tmp_path / "b.json")
    (tmp_path / "notes.json").write_text('{"format": "kvopt.schedule"}')  # skipped
    cmp = compare([str(tmp_path)], ["fcfs", "gba"])
    assert [ic.instance.name for ic in cmp.instances] == ["small", "b"]
    s = cmp.summary()
    assert s["fcfs"]["instances"] == 2 and s["fcfs"]["max_ratio"] >= s["fcfs"]["mean_ratio"]


def test_default_is_every_policy(small):
    ic = compare_instance(small)
    assert [r.policy for r in ic.rows] == list(POLICIES)


def test_cli_json_and_plot(tmp_path, small, capsys):
    path = tmp_path / "small.json"
    save_instance(small, path)
    plot = tmp_path / "ratios.png"
    rc = main(["compare", str(path), "--policies", "fcfs,mcsf,rect", "--plot", str(plot), "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)  # exactly one JSON object on stdout
    (inst,) = out["instances"]
    assert [p["policy"] for p in inst["policies"]] == ["fcfs", "mcsf", "rect"]
    assert inst["lower_bound"]["value"] == lower_bounds(small).best
    assert plot.read_bytes()[:8] == PNG
    assert out["written"] == [str(plot)]


def test_cli_table(tmp_path, small, capsys):
    path = tmp_path / "small.json"
    save_instance(small, path)
    assert main(["compare", str(path), "--policies", "fcfs,sjf"]) == 0
    text = capsys.readouterr().out
    assert "fcfs" in text and "sjf" in text and "/LB" in text and "/UB" in text


def test_cli_bad_input(tmp_path, small, capsys):
    path = tmp_path / "small.json"
    save_instance(small, path)
    assert main(["compare", str(path), "--policies", "nope"]) == 2
    assert "--policies" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "missing.json")]) == 2
    assert main(["compare", str(path), "--worst-plot", str(tmp_path / "x.png")]) == 2
    assert "--exact" in capsys.readouterr().err


def test_uncertified_opt_gives_an_interval():
    # a time limit far too short to prove optimality: ratios bracket the true one
    rng_s = [3, 5, 2, 7, 1, 4, 6, 2, 3, 5, 1, 2, 4, 3]
    rng_o = [9, 4, 12, 6, 15, 8, 5, 11, 7, 3, 14, 10, 6, 9]
    inst = Instance.from_arrays(30, rng_s, rng_o, name="hard")
    ic = compare_instance(inst, ["fcfs", "mcsf"], exact=True, time_limit=0.2)
    for r in ic.rows:
        assert r.ratio_ub <= r.ratio_optimistic + 1e-12
        assert r.ratio_optimistic <= r.ratio_lb + 1e-12  # the solver bound only helps
        if ic.opt is None:
            assert r.ratio_opt is None
            assert "[" in format_table(ic)
        else:
            assert r.ratio_opt == pytest.approx(r.ratio_ub)


def test_policy_variants(tmp_path, small, capsys):
    from kvopt.comparison import split_policies
    from kvopt.policy import parse_policy

    assert split_policies("fcfs, beta-clear[alpha=0.1;beta=0.3],sjf") == [
        "fcfs",
        "beta-clear[alpha=0.1;beta=0.3]",
        "sjf",
    ]
    assert parse_policy("beta-clear[alpha=0.1;beta=0.3]") == (
        "beta-clear",
        {"alpha": "0.1", "beta": "0.3"},
    )
    ic = compare_instance(small, ["pack-and-schedule", "pack-and-schedule[packer=nfdh]"])
    nfdh = simulate(small, "pack-and-schedule", params={"packer": "nfdh"})
    assert ic.row("pack-and-schedule[packer=nfdh]").total_completion == nfdh.total_completion
    path = tmp_path / "small.json"
    save_instance(small, path)
    assert main(["compare", str(path), "--policies", "fcfs[alpha=1]"]) == 2
    assert "unknown parameter" in capsys.readouterr().err


def test_instances_are_labelled_by_their_file(tmp_path, small, capsys, monkeypatch):
    """Issue 55: two files holding instances of the same stored name are told apart by the
    file, in the table, the JSON and the picture."""
    import kvopt.plotting

    for f in ("a-n5.json", "b-n5.json"):
        save_instance(small, tmp_path / f)  # both store the name "small"
    drawn = {}
    real = kvopt.plotting.plot_ratios

    def spy(ratios, path, **kw):
        drawn.update(ratios)
        return real(ratios, path, **kw)

    monkeypatch.setattr(kvopt.plotting, "plot_ratios", spy)
    argv = ["compare", str(tmp_path / "a-n5.json"), str(tmp_path / "b-n5.json"), "--policies",
            "fcfs", "--plot", str(tmp_path / "r.png")]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "instance a-n5.json  (small, n=5, M=16)" in out and "instance b-n5.json" in out
    assert list(drawn) == ["a-n5.json", "b-n5.json"]
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [i["label"] for i in d["instances"]] == ["a-n5.json", "b-n5.json"]
    assert [i["instance"] for i in d["instances"]] == ["small", "small"]
    # an Instance object (API) keeps its own name
    assert compare([small], ["fcfs"]).instances[0].label == "small"


def test_the_lower_bound_line_says_kvopt_bound_may_be_higher_without_lp(tmp_path, capsys):
    # the walkthrough: compare printed "lower bound 159 (area: the best cheap SPEC §2 bound;
    # kvopt bound --lp may be higher)" while plain `kvopt bound` printed "best 170 (rank)"
    from kvopt.api import generate
    from kvopt.exact.bounds.conflict import rank_bound

    inst = generate("random", seed=1, n=8, memory=48)
    b = lower_bounds(inst, rank=rank_bound(inst))
    assert b.best_name == "rank" and b.best > lower_bounds(inst).best  # the case it is about
    path = tmp_path / "inst.json"
    save_instance(inst, path)
    assert main(["compare", str(path), "--policies", "fcfs"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "lower bound" in ln)
    assert (
        f"lower bound {lower_bounds(inst).best} (area: the better of the area and processing"
        in line
    )
    assert "kvopt bound may give a higher one: its rank bound, or --lp" in line
