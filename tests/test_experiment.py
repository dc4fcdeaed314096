"""Workloads and experiments in seconds (SPEC §10): traces, arrival processes, the grid,
resume, Ctrl-C, bad input, a user's policy, the report."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from kvopt.errors import InputError
from kvopt.serving import experiment as E
from kvopt.serving.trace import load_trace
from kvopt.serving.workload import Workload

# ------------------------------------------------------------------------------ traces


def test_burstgpt_layout_loads(tmp_path):
    p = tmp_path / "burst.csv"
    p.write_text(
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
        "5,ChatGPT,472,18,490,Conversation log\n"
        "45,GPT-4,1087,0,1087,Conversation log\n"
        "118,ChatGPT,417,3,420,API log\n"
    )
    tr = load_trace(p)
    assert tr.prompt.tolist() == [472, 1087, 417]
    assert tr.response.tolist() == [18, 0, 3]
    assert tr.timestamp.tolist() == [5, 45, 118]
    # the failed request (0 tokens) is left out of a workload
    wl = Workload(trace=str(p), n=2, memory=2048, arrivals="trace", paired=True)
    inst = wl.instance(None, 0)
    assert inst.prompts.tolist() == [472, 417] and inst.arrival_times.tolist() == [0, 113]


def test_mooncake_jsonl_loads_in_milliseconds(tmp_path):
    p = tmp_path / "mc.jsonl"
    p.write_text(
        '{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}\n'
        '{"timestamp": 1500, "input_length": 200, "output_length": 20, "hash_ids": [2]}\n'
    )
    tr = load_trace(p)
    assert tr.prompt.tolist() == [100, 200] and tr.response.tolist() == [10, 20]
    assert tr.timestamp.tolist() == [0.0, 1.5]


def test_trace_without_the_columns_is_one_line(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="no prompt-token column"):
        Workload(trace=str(p), n=1).instance(1.0, 0)


# --------------------------------------------------------------------------- arrivals
def test_burst_poisson_and_rescaled_trace():
    burst = Workload(n=20, arrivals="burst").instance(None, 0)
    assert burst.is_timed and not burst.arrival_times.any()
    poi = Workload(n=400, arrivals="poisson")
    a = poi.instance(10.0, 1)
    t = a.arrival_times
    assert t[0] == 0 and np.all(np.diff(t) >= 0)
    assert (len(t) - 1) / t[-1] == pytest.approx(10.0, rel=0.15)  # mean rate ≈ λ
    assert a.arrival_times.tolist() == poi.instance(10.0, 1).arrival_times.tolist()  # seeded
    # common random numbers: the same requests at every load, only the times change
    b = poi.instance(50.0, 1)
    assert a.prompts.tolist() == b.prompts.tolist() and a.responses.tolist() == b.responses.tolist()
    tr = Workload(n=100, arrivals="trace").instance(4.0, 2)
    ts = tr.arrival_times
    assert ts.min() == 0 and (len(ts) - 1) / ts.max() == pytest.approx(4.0)


def test_paired_keeps_each_requests_lengths():
    from kvopt.serving.trace import load_trace as lt
    from kvopt.serving.workload import resolve_trace

    tr = lt(resolve_trace("azure-conv"))
    inst = Workload(n=30, arrivals="trace", paired=True).instance(1.0, 3)
    rows = [int(j.id.split("-")[1]) for j in inst.jobs]
    assert rows == list(range(rows[0], rows[0] + 30))  # a window of consecutive requests
    assert inst.prompts.tolist() == tr.prompt[rows].tolist()


@pytest.mark.parametrize(
    "kw, load, field",
    [
        ({"arrivals": "gamma"}, 1.0, "arrivals"),
        ({}, 0.0, "rate"),
        ({}, -2.0, "rate"),
        ({}, None, "loads"),
        ({"n": 0}, 1.0, "n"),
    ],
)
def test_bad_workloads(kw, load, field):
    with pytest.raises(InputError) as err:
        Workload(**kw).instance(load, 0)
    assert err.value.field == field


# ------------------------------------------------------------------------- experiments
def _exp(**over):
    d = {
        "name": "t",
        "time_model": {"c0": 0.02, "c_b": 1e-4, "c_k": 1e-6},
        "policies": ["fcfs", "sjf"],
        "loads": ["burst", 4],
        "seeds": 2,
        "workload": {"trace": "azure-conv", "n": 12, "memory": 8192, "arrivals": "poisson"},
    }
    d.update(over)
    return d


def test_run_from_a_dict_resume_and_change(tmp_path):
    out = tmp_path / "r"
    res = E.run_experiment(_exp(), out)
    assert res.ran == 8 and res.reused == 0 and len(res.rows) == 8
    text = (out / "results.csv").read_text().splitlines()
    assert text[0].split(",") == list(E.COLUMNS) and len(text) == 9
    for r in res.rows:
        assert r["bound"] > 0 and r["ratio"] >= 1 - 1e-12
    assert (out / "report.md").exists() and (out / "latency-cdf.png").exists()
    summ = (out / "summary.csv").read_text().splitlines()
    assert summ[0] == "experiment,policy,load,metric,mean,low,high,interval,seeds"
    assert any(line.startswith("t,sjf,4.0,mean_latency,") for line in summ)
    again = E.run_experiment(_exp(), out)
    assert again.ran == 0 and again.reused == 8 and again.rows == res.rows
    # one more seed: only its cells run
    more = E.run_experiment(_exp(seeds=3), out)
    assert more.ran == 4 and more.reused == 8
    # a changed workload starts anew
    changed = E.run_experiment(_exp(workload={**_exp()["workload"], "n": 10}), out)
    assert changed.ran == 8 and changed.reused == 0


def test_interrupt_loses_no_finished_cell(tmp_path, monkeypatch):
    from kvopt.serving.experiment import core  # where the cells run (run_cell is re-exported)

    out = tmp_path / "r"
    real = E.run_cell
    calls = {"n": 0}

    def flaky(task):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(core, "run_cell", flaky)
    with pytest.raises(KeyboardInterrupt):
        E.run_experiment(_exp(), out)
    assert len(list((out / "cells").glob("*.json"))) == 3
    monkeypatch.setattr(core, "run_cell", real)
    res = E.run_experiment(_exp(), out)
    assert res.reused == 3 and res.ran == 5


def test_bootstrap_interval():
    m, lo, hi = E.bootstrap_ci([1.0, 2.0, 3.0, 4.0])
    assert m == 2.5 and 1.0 <= lo < m < hi <= 4.0
    assert E.bootstrap_ci([7.0]) == (7.0, 7.0, 7.0)


def test_seed_interval_is_the_range_below_ten_seeds():
    """SPEC §10, "Reports": below 10 seeds the min and max, from 10 seeds a bootstrap."""
    assert E.seed_interval([1.0, 2.0, 6.0]) == (3.0, 1.0, 6.0)
    ten = [float(v) for v in range(10)]
    m, lo, hi = E.seed_interval(ten)
    assert (m, lo, hi) == E.bootstrap_ci(ten) and 0.0 < lo < m < hi < 9.0


@pytest.mark.parametrize("seeds, words", [(3, "range over the 3 seed(s)"),
                                          (10, "95 % bootstrap interval")])  # fmt: skip
def test_report_names_its_interval(tmp_path, seeds, words):
    """Issue 68: a 3-seed summary says "range" (no "bootstrap"); a 10-seed one a bootstrap."""
    small = {"trace": "azure-conv", "n": 6, "memory": 8192, "arrivals": "poisson"}
    res = E.run_experiment(_exp(seeds=seeds, policies=["fcfs"], loads=[4], workload=small),
                           tmp_path / "r")  # fmt: skip
    report = (tmp_path / "r" / "report.md").read_text()
    assert words in report
    rows = (tmp_path / "r" / "summary.csv").read_text().splitlines()
    kind = "range" if seeds < 10 else "bootstrap95"
    assert all(line.split(",")[7] == kind for line in rows[1:])
    vals = [r["mean_latency"] for r in res.rows]
    m, lo, hi = res.summary("mean_latency")[("fcfs", 4)]
    if seeds < 10:
        assert "95 % bootstrap" not in report and (lo, hi) == (min(vals), max(vals))
    else:
        assert min(vals) <= lo <= m <= hi <= max(vals)


def _toml(path, **over):
    d = _exp(**over)
    wl = d.pop("workload")
    lines = []
    for k, v in d.items():
        lines.append(f"{k} = {json.dumps(v) if not isinstance(v, dict) else _inline(v)}")
    lines.append("[workload]")
    lines += [f"{k} = {json.dumps(v)}" for k, v in wl.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _inline(d):
    return "{" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in d.items()) + "}"


@pytest.mark.parametrize(
    "over, needle",
    [
        ({"time_model": "no-such-preset"}, "unknown time model"),
        ({"time_model": {"c0": 1, "c_b": -1}}, "c_b"),
        ({"time_model": {"c0": 0}}, "c0"),
        ({"loads": [0]}, "loads[0]"),
        ({"policies": ["fcfs", "nope"]}, "policies[1]"),
        ({"workload": {"trace": "missing.csv", "n": 3}}, "missing.csv"),
        ({"colour": 1}, "colour"),
    ],
)
def test_bad_input_exits_2_with_one_line(cli, tmp_path, over, needle):
    path = _toml(tmp_path / "e.toml", **over)
    r = cli("experiment", "run", path, "--out", tmp_path / "o")
    assert r.code == 2, r.err
    assert r.err.count("\n") == 1 and needle in r.err and "e.toml" in r.err
    assert not (tmp_path / "o" / "cells").exists()  # nothing ran


def test_trace_without_columns_exits_2(cli, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    path = _toml(tmp_path / "e.toml", workload={"trace": str(bad), "n": 1})
    r = cli("experiment", "run", path)
    assert r.code == 2 and r.err.count("\n") == 1 and "prompt-token" in r.err


POLICY = '''
from kvopt import BlindPolicy


class OneByOne(BlindPolicy):
    """one visible job at a time, lowest index first"""

    kills = False

    def on_events(self, now, events, view, act):
        if view.running:
            return
        left = [j for j in view.jobs if j not in view.done]
        if left:
            act.start(min(left))
'''


def test_users_own_policy_runs_in_an_experiment(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the results go to the current folder (issue 68)
    (tmp_path / "mine.py").write_text(textwrap.dedent(POLICY))
    path = _toml(tmp_path / "e.toml", policies=["fcfs", "mine.py:OneByOne"], seeds=1)
    r = cli("experiment", "run", path, "--json")
    assert r.code == 0, r.err
    d = json.loads(r.out)
    assert d["cells"] == 4 and d["ran"] == 4
    rows = (tmp_path / "t-results" / "results.csv").read_text()
    assert "mine.py:OneByOne" in rows
    # the file changed: its cells run again, the built-in's are reused
    (tmp_path / "mine.py").write_text(textwrap.dedent(POLICY) + "\n# changed\n")
    d = json.loads(cli("experiment", "run", path, "--json").out)
    assert d["ran"] == 2 and d["reused"] == 2


@pytest.mark.slow
def test_workers_give_the_same_rows(tmp_path):
    a = E.run_experiment(_exp(), tmp_path / "a", report=False)
    b = E.run_experiment(_exp(), tmp_path / "b", workers=2, report=False)
    strip = [{k: v for k, v in r.items() if k != "wall_seconds"} for r in a.rows]
    assert strip == [{k: v for k, v in r.items() if k != "wall_seconds"} for r in b.rows]


def test_predictions_and_oracle_variants(tmp_path):
    wl = Workload(n=40, memory=8192, arrivals="burst", prediction_noise=0.5)
    inst = wl.instance(None, 0)
    assert inst.has_predictions and inst.predicted.tolist() != inst.responses.tolist()
    assert Workload(n=40, memory=8192, arrivals="burst").instance(None, 0).has_predictions is False
    res = E.run_experiment(
        _exp(policies=["svf", "oracle:svf"], loads=["burst"], seeds=1,
             workload={**_exp()["workload"], "n": 40, "prediction_noise": 0.5}),
        tmp_path / "o", report=False,
    )  # fmt: skip
    by = {r["policy"]: r for r in res.rows}
    assert by["svf"]["total_latency"] != by["oracle:svf"]["total_latency"]
    with pytest.raises(InputError, match="prediction_noise"):
        Workload(prediction_noise=-1)


@pytest.mark.slow
def test_dask_scheduler_gives_the_same_rows(tmp_path):
    from distributed import LocalCluster

    a = E.run_experiment(_exp(seeds=1), tmp_path / "a", report=False)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster:  # fmt: skip
        b = E.run_experiment(_exp(seeds=1), tmp_path / "b", report=False,
                             scheduler=cluster.scheduler_address)  # fmt: skip
    strip = [{k: v for k, v in r.items() if k != "wall_seconds"} for r in a.rows]
    assert strip == [{k: v for k, v in r.items() if k != "wall_seconds"} for r in b.rows]


def test_shipped_experiments_load():
    """Every shipped experiment loads; the stress variants keep their names under ``stress/``."""
    from conftest import REPO

    files = sorted((REPO / "instances" / "experiments").rglob("*.toml"))
    stems = {f.relative_to(REPO / "instances" / "experiments").as_posix() for f in files}
    assert stems >= {"jaillet-5.2.toml", "kong-table2.toml", "kong-table2-longbench.toml",
                     "kong-table3.toml", "stress/jaillet-5.2.toml", "stress/kong-table2.toml",
                     "stress/kong-table3.toml"}  # fmt: skip
    for f in files:
        exp = E.load_experiment(f)
        assert exp.name == f.stem and exp.notes and exp.time_model.name != "custom"


def test_the_reproductions_run_in_their_papers_regime():
    """Issue 67 item 7: each reproduction on its paper's setup and lengths (SPEC §10.1)."""
    from conftest import REPO

    from kvopt.serving.lengths import load_profile, parse_length

    d = REPO / "instances" / "experiments"
    lmsys = load_profile("lmsys-jaillet").mixture.tasks[0]
    j = E.load_experiment(d / "jaillet-5.2.toml")
    assert j.setup.name == "jaillet-llama2-70b-2xa100" and j.workload.memory == 16492
    assert j.workload.profile == "lmsys-jaillet" and j.workload.n == 10000
    assert j.loads == (10.0, 50.0) and len(j.seeds) >= 10 and j.workload.max_batch is None
    assert {"mcsf", "mc-benchmark"} <= set(j.policies)
    assert any(p.startswith("alpha-protect") for p in j.policies)
    assert any(p.startswith("beta-clear") for p in j.policies)
    for name in ("kong-table2", "kong-table2-longbench", "kong-table3"):
        k = E.load_experiment(d / f"{name}.toml")
        assert k.setup.name == "vllm-llama3.1-8b-a100-80gb", name
        assert k.workload.memory == k.setup.memory and k.workload.max_batch == 256
        assert k.time_model.c_k > 0 and k.workload.n == 2000 and len(k.seeds) >= 10
        assert k.workload.prediction_noise == 0.5
        bodies = [p.removeprefix("oracle:") for p in k.policies]
        assert sorted(bodies) == sorted([f"{p}[admission=vllm]" for p in
                                         ("fcfs", "sjf", "svf", "svf-1bit", "sjf", "svf")]
                                        + ["svf-1bit[admission=vllm;T=65536]"])  # fmt: skip
        assert sum(p.startswith("oracle:") for p in k.policies) == 2
        if name == "kong-table2-longbench":
            assert k.workload.profile == "longbench"
        else:  # lmsys-jaillet's distributions, the response capped at Kong's 4,096
            assert parse_length(k.workload.prompt, field="prompt") == lmsys.prompt
            resp = parse_length(k.workload.response, field="response")
            assert resp.max == 4096 and resp.mean == lmsys.response.mean
            assert resp.median == lmsys.response.median
    assert E.load_experiment(d / "kong-table2.toml").loads == ("burst", 2.0, 8.0, 16.0, 32.0,
                                                                64.0, 128.0)  # fmt: skip
    k3 = E.load_experiment(d / "kong-table3.toml")
    assert k3.workload.arrivals == "trace" and not k3.workload.paired and k3.loads == (128.0,)
    # 1-bit SVF with Kong's T (their context window of 65,536), and T = M as an extra row
    for name in ("kong-table2", "kong-table2-longbench", "kong-table2-70b",
                 "kong-table2-longbench-70b", "kong-table3"):  # fmt: skip
        k = E.load_experiment(d / f"{name}.toml")
        one_bit = [p for p in k.policies if p.startswith("svf-1bit")]
        assert one_bit == ["svf-1bit[admission=vllm;T=65536]", "svf-1bit[admission=vllm]"], name
        assert "T = 65,536" in k.notes and "T = M (SPEC §6.2's default" in k.notes, name


@pytest.mark.slow
def test_kong_table3_reproduces_the_docs_table(tmp_path):
    """The reproductions page quotes this run (docs/explanation/reproductions.md): the 1-bit
    SVF rows of the shipped file (Kong's T = 65,536 and T = M), all their seeds (a few
    seconds)."""
    import dataclasses

    from conftest import REPO

    exp = E.load_experiment(REPO / "instances" / "experiments" / "kong-table3.toml")
    labels = ("svf-1bit[admission=vllm;T=65536]", "svf-1bit[admission=vllm]")
    res = E.run_experiment(dataclasses.replace(exp, policies=labels), tmp_path / "k3",
                           report=False)  # fmt: skip
    page = (REPO / "docs" / "explanation" / "reproductions.md").read_text(encoding="utf-8")
    means = [res.summary("mean_per_token")[(label, 128.0)][0] for label in labels]
    assert means[0] < means[1]  # the paper's T orders better than T = M here
    for label, m in zip(labels, means):
        assert f"| `{label}` | {m:.4g} [" in page  # the report's format


def test_the_report_is_its_own_module_and_every_name_stays_importable():
    """Issue 55: kvopt/experiment.py (745 lines) is a package (now kvopt/serving/experiment): the grid and its cells
    (``core``), and the summary, report and plots (``report``); every public name of the
    old module is still importable from ``kvopt.serving.experiment``."""
    import inspect

    from kvopt.serving.experiment import core, report

    for name in ("CELL_FORMAT", "COLUMNS", "Cell", "Experiment", "ExperimentResult",
                 "bootstrap_ci", "load_experiment", "report_markdown", "run_cell",
                 "run_experiment", "write_report", "summary_csv", "SUMMARY_METRICS",
                 "plot_latency_vs_load", "plot_latency_cdf", "REPORT_METRICS", "ORACLE"):  # fmt: skip
        assert hasattr(E, name), name
    assert E.write_report.__module__ == report.__name__ == "kvopt.serving.experiment.report"
    assert E.run_experiment.__module__ == core.__name__ == "kvopt.serving.experiment.core"
    for module in (E, core, report):
        assert len(inspect.getsource(module).splitlines()) < 600, module.__name__


def test_an_interrupted_experiment_says_what_is_kept_and_how_to_resume(cli, tmp_path, monkeypatch):
    # the walkthrough's Ctrl-C printed "kvopt experiment: interrupted" and nothing else
    from kvopt.serving.experiment import core

    real = E.run_cell
    calls = {"n": 0}

    def flaky(task):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(core, "run_cell", flaky)
    path = _toml(tmp_path / "t.toml")
    r = cli("experiment", "run", path, "--out", tmp_path / "o")
    assert r.code == 130
    cells = tmp_path / "o" / "cells"
    assert r.err.strip().splitlines()[-1] == (
        f"kvopt experiment: interrupted: 3 of 8 cells kept in {cells}; run the same command "
        "again to resume (finished cells are not run again)"
    )


def test_the_report_says_how_many_requests_fit_the_memory(tmp_path):
    # the walkthrough: memory = 100 on azure-conv ran without a word, drawing its 10 requests
    # from the 22 (of 19,366) that fit; the report now says so, as experiments.md does
    from conftest import REPO

    wl = {"trace": "azure-conv", "n": 4, "memory": 100, "arrivals": "poisson"}
    res = E.run_experiment(_exp(policies=["fcfs"], loads=[4], seeds=1, workload=wl), tmp_path)
    report = (tmp_path / "report.md").read_text()
    assert (
        "drawn from the 22 of the trace's 19,366 requests that fit (prompt + response <= M"
        in report
    )
    assert res.experiment.workload.usable() == (22, 19366)
    wl["memory"] = 16492  # every request of the trace fits
    E.run_experiment(_exp(policies=["fcfs"], loads=[4], seeds=1, workload=wl), tmp_path / "all")
    assert (
        "drawn from all 19,366 requests of the trace"
        in (tmp_path / "all" / "report.md").read_text()
    )
    page = (REPO / "docs" / "howto" / "experiments.md").read_text(encoding="utf-8")
    assert "22 of the 19,366 of\n  `azure-conv` at `memory = 100`" in page
