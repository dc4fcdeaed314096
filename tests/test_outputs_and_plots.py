"""Issue 68: default outputs in the current folder, ``gen FAMILY --help``, one Gantt
orientation, readable panel names, ``kvopt plot --labels``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kvopt import generate, simulate, solve
from kvopt.serving.experiment import run_experiment

REPO = Path(__file__).resolve().parent.parent


def _small_experiment(path: Path) -> Path:
    path.write_text('name = "tiny"\ntime_model = {c0 = 0.02, c_b = 1e-4, c_k = 1e-6}\n'
                    'policies = ["fcfs"]\nloads = [4]\nseeds = 1\n'
                    '[workload]\ntrace = "azure-conv"\nn = 5\nmemory = 8192\n'
                    'arrivals = "poisson"\n')  # fmt: skip
    return path


def test_an_experiment_without_out_writes_in_the_current_folder(tmp_path, monkeypatch):
    """The results go to ``<name>-results`` in the working folder, not beside the file."""
    checkout, elsewhere = tmp_path / "checkout", tmp_path / "elsewhere"
    checkout.mkdir()
    elsewhere.mkdir()
    exp = _small_experiment(checkout / "tiny.toml")
    monkeypatch.chdir(elsewhere)
    res = run_experiment(exp)
    assert sorted(p.name for p in checkout.iterdir()) == ["tiny.toml"]
    assert (elsewhere / "tiny-results" / "summary.csv").is_file()
    assert Path(res.out).resolve() == (elsewhere / "tiny-results").resolve()


def _status() -> set[str]:
    """``git status`` with ignored files (a results folder would be ignored), but for Python's
    caches, which the run itself may write."""
    out = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--ignored"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return {ln for ln in out.splitlines() if "__pycache__" not in ln and "_cache" not in ln}


@pytest.mark.slow
def test_a_shipped_experiment_run_from_elsewhere_leaves_the_checkout_clean(tmp_path,
                                                                          monkeypatch):  # fmt: skip
    """Issue 68 acceptance (about 15 s: Table 3 of Kong et al., the quickest reproduction)."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    before = _status()
    monkeypatch.chdir(tmp_path)
    from kvopt.cli import main

    assert main(["experiment", "run", str(REPO / "instances/experiments/kong-table3.toml"),
                 "--json"]) == 0  # fmt: skip
    assert (tmp_path / "kong-table3-results" / "report.md").is_file()
    assert _status() == before
    assert not (REPO / "instances" / "experiments" / "kong-table3-results").exists()


def test_default_output_folders_are_ignored_by_git():
    ignored = (REPO / ".gitignore").read_text().split()
    for folder in ("kvopt-check/", "kvopt-grow/", "kvopt-search/", "kvopt-validate/",
                   "kvopt-demo/", "*-results/"):  # fmt: skip
        assert folder in ignored, folder


def test_gen_family_help_prints_its_parameters(cli):
    r = cli("gen", "workload", "--help")
    assert r.code == 0
    assert "family workload:" in r.out and "prediction_noise" in r.out and "rate" in r.out
    plain = cli("gen", "--help")
    assert plain.code == 0 and "family workload:" not in plain.out


def test_one_gantt_orientation_in_every_figure(tmp_path):
    """Job 0 on top with one schedule and with two (the shared axes once flipped it back)."""
    from kvopt.plotting import schedule_figure

    inst = generate("random", seed=1, n=4, memory=24)
    a, b = simulate(inst, "fcfs").schedule, simulate(inst, "sjf").schedule
    for scheds in ([a], [a, b]):
        fig = schedule_figure(inst, scheds)
        gantts = fig.axes[len(scheds) :]  # row 2: the Gantt charts
        for ax in gantts:
            top, bottom = ax.get_ylim()[1], ax.get_ylim()[0]
            assert top < bottom and top == pytest.approx(-0.5), (len(scheds), ax.get_ylim())


def test_readable_names_for_exact_panels_and_labels_on_the_cli(cli, tmp_path):
    from kvopt.plotting import panel_name, readable_label

    assert readable_label("exact:auto(bnb)") == "exact solver (auto, route bnb)"
    assert readable_label("fcfs") == "fcfs"
    inst = generate("random", seed=1, n=4, memory=24)
    opt = solve(inst, time_limit=20)
    assert opt.optimal and panel_name(opt).startswith("Opt (proved; auto")
    ipath, spath, opath = tmp_path / "i.json", tmp_path / "s.json", tmp_path / "o.json"
    assert cli("gen", "random", "--seed", "1", "--param", "n=4", "--param", "memory=24",
               "--out", ipath).code == 0  # fmt: skip
    assert cli("simulate", ipath, "--policy", "fcfs", "--out", spath).code == 0
    assert cli("solve", ipath, "--out", opath).code == 0
    r = cli("plot", spath, "--instance", ipath, "--vs", opath, "--labels", "FCFS,Opt",
            "--out", tmp_path / "p.png")  # fmt: skip
    assert r.code == 0 and (tmp_path / "p.png").is_file()
    r = cli("plot", spath, "--instance", ipath, "--labels", "a,b", "--out", tmp_path / "q.png")
    assert r.code == 2 and "--labels" in r.err and not (tmp_path / "q.png").exists()


def test_kvopt_help_describes_solve_by_the_routes_auto_takes(cli):
    """Issue 68: ``kvopt --help`` said "time-indexed IP / CP-SAT" where the branch and bound
    and the event model ran; the line names the backends of ``auto``'s routes."""
    from kvopt.exact import ROUTES

    r = cli("--help")
    text = " ".join(r.out.split())  # the help wraps lines
    line = text[text.index(" solve ") :][:200]
    backends = set()
    for route in ROUTES:
        if route.when.solver == "auto":
            plan = route.plan
            phases = [plan.lead, *plan.others] if hasattr(plan, "lead") else list(plan)
            backends |= {ph.backend.split("-")[0] for ph in phases}
    words = {"bnb": "branch and bound", "events": "event model", "highs": "time-indexed IP",
             "cpsat": "CP-SAT"}  # fmt: skip
    for backend, said in words.items():
        assert backend in backends and said in line, (backend, line)


def test_compare_names_an_instance_alike_in_json_and_the_dataframe(tmp_path):
    """Issue 68: ``to_dataframe()``'s ``instance`` was the file, ``--json``'s the stored name;
    both now carry ``label`` and ``name`` (``instance`` stays, deprecated, as it was)."""
    pytest.importorskip("pandas")
    import kvopt

    path = tmp_path / "mine.json"
    from kvopt.instance import save_instance

    save_instance(kvopt.generate("random", seed=1, n=4, memory=24), path)
    cmp = kvopt.compare([str(path)], policies=["fcfs", "sjf"])
    df = cmp.to_dataframe()
    d = cmp.to_dict()["instances"][0]
    assert set(df["label"]) == {d["label"]} == {"mine.json"}
    assert set(df["name"]) == {d["name"]} == {"random-s1"}
    assert set(df["instance"]) == {"mine.json"} and d["instance"] == "random-s1"  # as before
