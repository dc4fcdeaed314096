"""Length distributions and profiles (SPEC §10.1): parsing, drawing, clipping, redraws,
profiles as data, the workload's new keys, ``kvopt gen workload``, experiments."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest

from kvopt.errors import InputError
from kvopt.generators import generate
from kvopt.serving import experiment as E
from kvopt.serving import lengths as L
from kvopt.serving.workload import Workload


def _draw(text: str, n: int = 5000, seed: int = 0) -> np.ndarray:
    return L.parse_length(text).draw(np.random.default_rng(seed), n)


# ---------------------------------------------------------------------------- distributions
def test_lognormal_from_mean_and_median():
    d = L.parse_length("lognormal(mean=40.62, median=11)")
    assert d.mu == pytest.approx(math.log(11))
    assert d.s == pytest.approx(math.sqrt(2 * math.log(40.62 / 11)))
    assert d.s == pytest.approx(1.616, abs=1e-3)  # SERVING-NOTES: σ ≈ 1.616
    assert str(d) == "lognormal(mean=40.62, median=11)"
    x = _draw("lognormal(median=100, sigma=0.3)", n=20000)
    assert x.dtype == np.int64 and abs(np.median(x) - 100) <= 2
    # the third form: mean and sigma (μ = ln mean − σ²/2)
    m = L.parse_length("lognormal(mean=1000, sigma=0.5)")
    assert m.mu == pytest.approx(math.log(1000) - 0.125)
    assert abs(_draw(str(m), n=40000).mean() / 1000 - 1) < 0.02


def test_uniform_includes_both_ends_and_fixed_forms():
    x = _draw("uniform(low=3, high=5)")
    assert set(x.tolist()) == {3, 4, 5}
    assert _draw("fixed(7)", n=3).tolist() == [7, 7, 7]
    assert _draw("fixed(value=7)", n=2).tolist() == [7, 7]
    assert _draw("fixed(2.6)", n=1).tolist() == [3]  # rounded to the nearest integer


def test_clipping_to_min_and_max():
    assert _draw("fixed(0)", n=2).tolist() == [1, 1]  # min defaults to 1
    assert _draw("fixed(10, max=5)", n=2).tolist() == [5, 5]
    assert _draw("fixed(3, min=4)", n=1).tolist() == [4]
    x = _draw("lognormal(mean=40.62, median=11, min=5, max=60)", n=20000)
    assert x.min() == 5 and x.max() == 60
    assert (x == 5).sum() > 100 and (x == 60).sum() > 100  # both ends bind
    x = _draw("uniform(low=-5, high=5)")
    assert x.min() == 1 and set(x.tolist()) == {1, 2, 3, 4, 5}


def test_empirical_draws_from_one_column(tmp_path):
    p = tmp_path / "lens.csv"
    p.write_text("a,b\n10,1\n20,2\n,3\n30,4\n")
    d = L.parse_length(f"empirical({p}, column=a)")
    x = d.draw(np.random.default_rng(0), 3000)
    assert set(x.tolist()) == {10, 20, 30}  # the empty cell is skipped
    assert set(L.parse_length(f"empirical({p}, column=b, max=3)").draw(
        np.random.default_rng(0), 3000).tolist()) == {1, 2, 3}  # fmt: skip
    # an edited file is read again
    p.write_text("a,b\n40,1\n")
    assert set(L.parse_length(f"empirical({p}, column=a)").values().tolist()) == {40}
    # quoted path with a comma
    q = tmp_path / "x,y.csv"
    q.write_text("v\n5\n")
    assert L.parse_length(f'empirical("{q}", column=v)').draw(
        np.random.default_rng(0), 2).tolist() == [5, 5]  # fmt: skip


def test_empirical_errors_name_the_file_and_column(tmp_path):
    p = tmp_path / "lens.csv"
    p.write_text("prompt_len,resp\n10,1\nabc,2\n")
    with pytest.raises(
        InputError,
        match=r"no column 'prompt'.*columns: prompt_len, resp.*did you mean 'prompt_len'",
    ):
        L.parse_length(f"empirical({p}, column=prompt)").values()
    with pytest.raises(InputError, match=r"line 3: column 'prompt_len': not a number: 'abc'"):
        L.parse_length(f"empirical({p}, column=prompt_len)").values()
    with pytest.raises(InputError, match="file not found"):
        L.parse_length(f"empirical({tmp_path / 'none.csv'}, column=a)").values()
    with pytest.raises(InputError, match="missing column="):
        L.parse_length(f"empirical({p})")
    # through a workload: the field is named, at creation
    with pytest.raises(InputError, match=r"lens\.csv: response: no column 'x'"):
        Workload(prompt="fixed(3)", response=f"empirical({p}, column=x)")


@pytest.mark.parametrize(
    "text, rule",
    [
        ("lognormal(mean=3, median=11)", r"prompt: mean ≤ median \(3 ≤ 11\)"),
        ("lognormal(mean=11, median=11)", r"mean ≤ median"),
        ("uniform(low=3, high=9, min=9, max=4)", r"prompt: min > max \(9 > 4\)"),
        ("uniform(low=9, high=3)", r"low > high"),
        (
            "gamma(k=3)",
            r"unknown distribution 'gamma' \(known: lognormal, uniform, fixed, empirical\)",
        ),
        ("lognormial(mean=3, median=1)", r"did you mean 'lognormal'"),
        ("lognormal(mean=x, median=11)", r"prompt: mean: bad number 'x'"),
        ("lognormal(mean=inf, median=11)", r"mean: bad number 'inf'"),
        ("uniform(low=1.5, high=3)", r"low: must be an integer"),
        ("fixed(3, max=2.5)", r"max: must be an integer"),
        ("lognormal(median=11)", r"two of mean=, median=, sigma="),
        ("lognormal(mean=40, median=11, sigma=1)", r"two of mean=, median=, sigma="),
        ("lognormal(median=-1, sigma=1)", r"median must be a number > 0"),
        ("uniform(low=1, hi=3)", r"unknown argument 'hi'.*did you mean 'high'"),
        ("uniform(low=1)", r"missing high="),
        ("fixed(3, value=4)", r"value given twice"),
        ("uniform(3, 4)", r"needs a name"),
        ("fixed(1, min=0)", r"min must be an integer >= 1"),
        ("lognormal", r"not a distribution"),
    ],
)
def test_bad_distributions(text, rule):
    with pytest.raises(InputError, match=rule):
        L.parse_length(text, field="prompt")


# ------------------------------------------------------------------------------ redraws
def test_pairs_that_do_not_fit_are_drawn_again_and_counted():
    mix = L.Mixture.pair(L.parse_length("fixed(6)"), L.parse_length("uniform(low=1, high=8)"))
    s, o, task, redrawn = L.draw_pairs(mix, 2000, 10, np.random.SeedSequence(1))
    assert (s + o <= 10).all() and set(o.tolist()) == {1, 2, 3, 4}
    # half the draws (o in 5..8) do not fit: about as many rejections as accepted requests
    assert 1700 < redrawn < 2300
    # nothing to redraw when everything fits
    assert L.draw_pairs(mix, 500, 14, np.random.SeedSequence(1))[3] == 0


def test_lengths_that_hardly_fit_are_bad_input():
    mix = L.Mixture.pair(L.parse_length("fixed(6)"), L.parse_length("fixed(5)"))
    with pytest.raises(
        InputError, match=r"no request fits: the shortest prompt \+ response is 11 > memory 10"
    ):
        L.draw_pairs(mix, 5, 10, np.random.SeedSequence(0))
    mix = L.Mixture.pair(L.parse_length("fixed(5)"), L.parse_length("uniform(low=1, high=1000000)"))
    with pytest.raises(InputError, match=r"after 100 rounds of redrawing"):
        L.draw_pairs(mix, 50, 6, np.random.SeedSequence(0))


def test_workload_reports_redraws_in_meta():
    wl = Workload(prompt="fixed(6)", response="uniform(low=1, high=8)", memory=10, n=300,
                  arrivals="burst")  # fmt: skip
    inst = wl.instance(None, 4)
    assert inst.meta["redrawn"] > 0
    assert all(j.prompt + j.response <= 10 for j in inst.jobs)
    assert "redrawn" not in Workload(n=10, arrivals="burst").instance(None, 0).meta


# ------------------------------------------------------------------------------- profiles
def test_profiles_are_listed_and_load():
    assert set(L.profile_names()) >= {"lmsys-jaillet", "longbench"}
    p = L.load_profile("lmsys-jaillet")
    assert "40.62" in p.source and "median: 11" in p.source and "85.32" in p.source
    (t,) = p.mixture.tasks
    data = dict(t.data)
    assert (t.prompt.mean, t.prompt.median) == (data["prompt_mean"], data["prompt_median"])
    assert (t.response.mean, t.response.median) == (data["response_mean"], data["response_median"])
    with pytest.raises(
        InputError, match=r"unknown profile 'lmsys' \(known: lmsys-jaillet, longbench"
    ):
        L.load_profile("lmsys")


def test_longbench_profile_follows_its_numbers():
    p = L.load_profile("longbench")
    assert "MIT" in p.source and "Chinese" in p.units and "sigma = 0.5" in p.spread
    assert (L.PROFILE_DIR / "LONGBENCH-LICENSE").read_text().startswith("MIT License")
    tasks = p.mixture.tasks
    assert len(tasks) == 16 and sum(t.weight for t in tasks) == 3750
    for t in tasks:
        d = dict(t.data)
        assert d["language"] != "ZH"
        assert t.weight == d["samples"]
        assert (t.prompt.mean, t.prompt.sigma) == (d["avg_input_words"], 0.5)
        assert (t.response.low, t.response.high) == (1, d["max_output_tokens"])
    s, o, task, redrawn = L.draw_pairs(p.mixture, 20000, 10**6, np.random.SeedSequence(2))
    caps = np.array([dict(t.data)["max_output_tokens"] for t in tasks])
    assert (o <= caps[task]).all()  # every response within its task's output cap
    share = np.bincount(task, minlength=16) / 20000
    assert abs(share[[t.name for t in tasks].index("LCC")] - 500 / 3750) < 0.01
    nqa = [t.name for t in tasks].index("NarrativeQA")
    assert abs(s[task == nqa].mean() / 18409 - 1) < 0.05


def test_lmsys_jaillet_acceptance():
    """Issue 67: a 20,000-request draw matches the paper's means and medians."""
    wl = Workload(profile="lmsys-jaillet", n=20000, memory=16492, arrivals="burst")
    inst = wl.instance(None, 0)
    s, o = inst.prompts, inst.responses
    assert abs(s.mean() / 40.62 - 1) < 0.10 and abs(np.median(s) - 11) <= 1
    assert abs(o.mean() / 85.32 - 1) < 0.07 and abs(np.median(o) - 45) <= 2


# ------------------------------------------------------------------------------- workloads
def test_seeds_reproduce_and_lengths_do_not_depend_on_the_load():
    wl = Workload(profile="longbench", n=50, memory=200000)
    a, b = wl.instance(4.0, 7), wl.instance(4.0, 7)
    assert a.to_dict() == b.to_dict()
    c = wl.instance(9.0, 7)  # another load: the same requests, other arrival times
    assert c.prompts.tolist() == a.prompts.tolist() and c.responses.tolist() == a.responses.tolist()
    assert c.arrival_times.tolist() != a.arrival_times.tolist()
    assert wl.instance(4.0, 8).prompts.tolist() != a.prompts.tolist()
    # prompts keep their draws when only the response distribution changes
    p1 = Workload(prompt="lognormal(median=50, sigma=1)", response="fixed(3)", n=30)
    p2 = Workload(prompt="lognormal(median=50, sigma=1)", response="uniform(low=1, high=9)", n=30)
    assert p1.instance(2.0, 1).prompts.tolist() == p2.instance(2.0, 1).prompts.tolist()


# Digests of trace-workload instances recorded on b327e84, before length distributions:
# the trace streams draw exactly what they drew.
_TRACE_DIGESTS = {
    0: (dict(n=50, memory=16384, arrivals="poisson"), 5.0, "7a2f17d68c519556"),
    1: (dict(n=40, memory=4096, arrivals="trace", paired=True, prediction_noise=0.5), None,
        "095fba4e6ecb0840"),
    2: (dict(n=30, memory=16384, arrivals="burst", lengths="head", offset=100), None,
        "3d67ae8de5e5579c"),
    3: (dict(trace="azure-code", n=30, memory=8192, arrivals="trace", prediction_noise=0.3),
        None, "cf42b3c6b52b797b"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(_TRACE_DIGESTS))
def test_trace_workloads_unchanged(case):
    kw, load, digest = _TRACE_DIGESTS[case]
    wl = Workload(**kw)
    blob = json.dumps(wl.instance(load, 3).to_dict(), sort_keys=True)
    assert hashlib.sha256(blob.encode()).hexdigest()[:16] == digest
    # the dict (and so an experiment cell's key) has only the old fields
    assert set(wl.to_dict()) == {"trace", "n", "memory", "arrivals", "lengths", "paired",
                                 "offset", "max_prompt", "max_response", "prediction_noise"}  # fmt: skip


@pytest.mark.parametrize(
    "kw, field, rule",
    [
        (dict(profile="lmsys-jaillet", prompt="fixed(3)"), "profile", "not both"),
        (dict(prompt="fixed(3)"), "response", "given together"),
        (
            dict(profile="nope"),
            "profile",
            r"unknown profile 'nope' \(known: lmsys-jaillet, longbench",
        ),
        (dict(profile="lmsys-jaillet", paired=True), "paired", "a trace option"),
        (dict(profile="lmsys-jaillet", max_prompt=10), "max_prompt", "a trace option"),
        (dict(max_batch=0), "max_batch", "integer >= 1"),
        (
            dict(prompt="fixed(3)", response="lognormal(mean=2, median=3)"),
            "response",
            "mean ≤ median",
        ),
    ],
)
def test_bad_workload_lengths(kw, field, rule):
    with pytest.raises(InputError, match=f"^workload: {field}: .*{rule}"):
        Workload(**kw)


def test_max_batch_goes_into_the_instance():
    inst = Workload(profile="lmsys-jaillet", n=5, max_batch=3).instance(2.0, 0)
    assert inst.max_batch == 3 and inst.to_dict()["max_batch"] == 3
    assert Workload(n=5).instance(2.0, 0).max_batch is None
    assert Workload.from_dict({"n": 5, "max_batch": 2}).to_dict()["max_batch"] == 2


def test_trace_arrivals_with_drawn_lengths():
    wl = Workload(profile="lmsys-jaillet", n=20, memory=16492, arrivals="trace")
    inst = wl.instance(None, 0)
    assert (
        inst.n == 20
        and inst.arrival_times[0] == 0
        and all(j.id.startswith("req-") for j in inst.jobs)
    )


# ------------------------------------------------------------------------ gen and experiment
def test_gen_workload_params(cli):
    inst = generate("workload", 3, profile="lmsys-jaillet", n=8, max_batch=4, arrivals="burst")
    assert inst.n == 8 and inst.max_batch == 4 and inst.meta["redrawn"] == 0
    inst = generate("workload", 3, prompt="fixed(5)", response="uniform(low=1, high=4)", n=6)
    assert inst.prompts.tolist() == [5] * 6 and set(inst.responses.tolist()) <= {1, 2, 3, 4}
    r = cli("gen", "--list")
    assert "prompt=''" in r.out and "profile=''" in r.out and "max_batch=0" in r.out
    assert "lmsys-jaillet, longbench" in r.out
    r = cli("gen", "workload", "--help")  # the families' parameters are in the help too
    assert r.code == 0 and "profile=''" in r.out and "max_batch=0" in r.out
    r = cli("gen", "workload", "--seed", "1", "--param", "profile=nope")
    assert r.code == 2 and r.out == ""
    assert r.err.strip().splitlines() == [
        "kvopt gen: error: --param profile: unknown profile 'nope' (known: lmsys-jaillet, longbench)"
    ]
    r = cli("gen", "workload", "--seed", "1", "--param", "prompt=lognormal(mean=3, median=11)",
            "--param", "response=fixed(2)")  # fmt: skip
    assert r.code == 2 and "--param prompt: mean ≤ median (3 ≤ 11)" in r.err


def test_experiment_with_a_profile_and_an_empirical_file(tmp_path):
    (tmp_path / "lens.csv").write_text("o\n" + "\n".join(str(k) for k in range(1, 30)) + "\n")
    exp = tmp_path / "e.toml"
    exp.write_text(
        'name = "d"\npolicies = ["fcfs"]\nloads = [5.0]\nseeds = [0, 1]\n'
        "[workload]\nn = 30\nmemory = 40\n"
        'prompt = "uniform(low=5, high=20)"\nresponse = "empirical(lens.csv, column=o)"\n'
    )
    res = E.run_experiment(exp, tmp_path / "out")
    assert len(res.rows) == 2 and all(r["redrawn"] > 0 for r in res.rows)
    assert str(tmp_path / "lens.csv") in res.experiment.workload.response  # read beside the file
    report = (tmp_path / "out" / "report.md").read_text()
    assert "requests per seed redrawn because prompt + response > M" in report
    header = (tmp_path / "out" / "results.csv").read_text().splitlines()[0].split(",")
    assert header[-1] == "redrawn"
    # an edited CSV gives new cells; the same file reuses them
    assert E.run_experiment(exp, tmp_path / "out").ran == 0
    (tmp_path / "lens.csv").write_text("o\n" + "\n".join(str(k) for k in range(1, 20)) + "\n")
    assert E.run_experiment(exp, tmp_path / "out", report=False).ran == 2
    bad = tmp_path / "b.toml"
    bad.write_text(exp.read_text().replace("column=o", "column=x"))
    with pytest.raises(
        InputError, match=r"b\.toml: workload: response: .*lens\.csv: no column 'x'"
    ):
        E.load_experiment(bad)


@pytest.mark.parametrize(
    "line, rule",
    [
        ('prompt = "lognormal(mean=3, median=11)"', "workload: prompt: mean ≤ median (3 ≤ 11)"),
        ('prompt = "uniform(low=1, high=9, min=5, max=2)"', "workload: prompt: min > max (5 > 2)"),
        ('profile = "sharegpt"', "workload: profile: unknown profile 'sharegpt' (known: "),
    ],
)
def test_experiment_bad_lengths_exit_2_one_line(cli, tmp_path, line, rule):
    exp = tmp_path / "e.toml"
    lengths = line if line.startswith("profile") else line + '\nresponse = "fixed(3)"'
    exp.write_text(f'name = "d"\npolicies = ["fcfs"]\nloads = [5.0]\n[workload]\n{lengths}\n')
    r = cli("experiment", "run", exp)
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and rule in r.err, r.err
    assert not (tmp_path / "d-results").exists()
