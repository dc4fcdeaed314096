"""Instance generators: deterministic per seed, always valid members of their family."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import DATA, REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.errors import InputError
from kvopt.generators import GENERATORS, generate
from kvopt.instance import Instance, Regime, load_instance
from kvopt.schedule import Schedule, memory_profile
from kvopt.serving.trace import bundled_trace_dir, load_trace, trace_instance

SMALL = {
    "random": {"n": 8},
    "large": {"n": 8},
    "prompt-heavy": {"n": 8},
    "response-heavy": {"n": 8},
    "identical-prompt": {"n": 8},
    "arrivals": {"n": 8},
    "trace": {"n": 8, "mode": "random"},
    "workload": {"n": 8, "memory": 4096},
    "prop1": {"L": 3},
    "two-point": {},
    "intervals": {"n": 5, "memory": 32, "width": 0.5, "miss": 0.3},
}


def test_every_family_has_a_case():
    assert set(SMALL) == set(GENERATORS)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(SMALL)), st.integers(0, 2**31))
def test_deterministic_per_seed_and_valid(family, seed):
    a = generate(family, seed, **SMALL[family])
    b = generate(family, seed, **SMALL[family])
    assert a.to_dict() == b.to_dict()
    Instance.from_dict(a.to_dict())  # re-validates
    assert a.meta["family"] == family and a.meta["seed"] == seed
    assert a.meta["params"]  # provenance: every parameter
    assert (a.peaks <= a.memory).all()


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["large", "prompt-heavy", "response-heavy"]),
    st.integers(0, 10**6),
    st.integers(8, 500),
    st.integers(0, 40),
)
def test_single_regime_families(family, seed, memory, cap):
    inst = generate(
        family,
        seed,
        n=12,
        memory=memory,
        max_response=cap if family != "response-heavy" else max(cap, 2),
    )
    want = {
        "large": Regime.LARGE,
        "prompt-heavy": Regime.PROMPT_HEAVY,
        "response-heavy": Regime.RESPONSE_HEAVY,
    }
    assert (inst.regimes == int(want[family])).all()
    if cap:
        assert (inst.responses <= max(cap, 2)).all()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.floats(0.01, 5.0))
def test_random_shares_and_arrivals(seed, rate):
    inst = generate("arrivals", seed, base="random", rate=rate, n=30, memory=128, large=0.0)
    assert not (inst.regimes == int(Regime.LARGE)).any()
    assert inst.arrivals[0] == 0 and (np.diff(inst.arrivals) >= 0).all()
    base = generate("random", seed, n=30, memory=128, large=0.0)
    assert [(j.prompt, j.response) for j in inst.jobs] == [
        (j.prompt, j.response) for j in base.jobs
    ]


def test_different_seeds_differ():
    assert (
        generate("random", 1, n=20).to_dict()["jobs"]
        != generate("random", 2, n=20).to_dict()["jobs"]
    )


@pytest.mark.parametrize("L", [2, 3, 4, 5, 9])
@pytest.mark.parametrize("case", [1, 2])
def test_prop1_construction(L, case):
    inst = generate("prop1", 0, L=L, case=case)
    assert inst.memory == L**3 + 1
    x = [j for j in inst.jobs if (j.prompt, j.response) == (1, L)]
    y = [j for j in inst.jobs if (j.prompt, j.response) == (L**3, 1)]
    assert len(x) + len(y) == inst.n
    if case == 1:
        assert len(x) == 1 and len(y) == math.floor(math.sqrt(L))
    else:
        assert len(x) == L * L - L + 1 and len(y) == math.floor(L**1.5)
        assert len(x) * (L + 1) <= inst.memory  # all X jobs fit together (the proof's Opt)


def test_two_point_shape():
    inst = generate("two-point", 0, memory=50, prompt=4, long=3, short=7, short_arrival=10)
    longs = [j for j in inst.jobs if j.response > 1]
    shorts = [j for j in inst.jobs if j.response == 1]
    assert len(longs) == 3 and all(j.prompt + j.response == 50 for j in longs)
    assert len(shorts) == 7 and all(j.prompt == 4 and j.arrival == 10 for j in shorts)


def test_azure_trace_loads_as_is():
    tr = load_trace(bundled_trace_dir())
    assert len(tr) == 8819 + 19366
    assert (np.diff(tr.timestamp) >= 0).all()
    one = load_trace(bundled_trace_dir() / "AzureLLMInferenceTrace_code.csv")
    assert len(one) == 8819 and one.prompt[0] == 4808 and one.response[0] == 10
    inst = trace_instance(tr, n=50, memory=2048, seed=3, mode="random", arrivals=True)
    assert inst.n == 50 and (inst.peaks <= 2048).all() and inst.arrivals.min() == 0
    assert inst.meta["skipped"] > 0


def test_bundled_trace_window_is_memory_binding():
    """issue 16 item 6: the demo's trace sample is one where memory binds."""
    inst = load_instance(REPO / "instances" / "traces" / "azure-window-n1000-M16384.json")
    meta = inst.meta
    assert inst.n == 1000 and meta["family"] == "trace" and meta["mode"] == "head"
    assert meta["arrivals"] and meta["rounds_per_second"] == 50.0 and meta["skipped"] == 0
    assert int(inst.peaks.sum()) > 50 * inst.memory  # every request at once
    # each request started on arrival (no memory limit): several times M at the peak
    on_arrival = memory_profile(inst, Schedule.from_starts(inst, inst.arrivals))
    assert on_arrival.max() > 4 * inst.memory
    assert (on_arrival > inst.memory).mean() > 0.5  # and above M most of the time
    regen = generate("trace", meta["seed"], **meta["params"])
    assert regen.to_dict() == inst.to_dict()


def test_trace_without_columns_is_bad_input(cli):
    path = DATA / "bad_trace_columns.csv"
    with pytest.raises(InputError, match="prompt-token column"):
        load_trace(path)
    r = cli("gen", "trace", "--seed", "0", "--param", f"path={path}")
    assert (
        r.code == 2
        and str(path) in r.err
        and "header" in r.err
        and len(r.err.strip().splitlines()) == 1
    )


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["gen", "random", "--seed", "0", "--param", "n=abc"], "--param n"),
        (["gen", "random", "--seed", "0", "--param", "colour=red"], "--param colour"),
        (["gen", "random", "--seed", "0", "--param", "n"], "--param"),
        (["gen", "nosuch", "--seed", "0"], "FAMILY"),
        (["gen", "random"], "--seed"),
        (["gen", "random", "--seed", "-3"], "--seed"),
        (["gen", "prop1", "--seed", "0", "--param", "case=3"], "--param case"),
    ],
)
def test_gen_bad_options(cli, argv, needle):
    r = cli(*argv)
    assert r.code == 2 and needle in r.err and len(r.err.strip().splitlines()) == 1


def test_gen_writes_atomically_and_round_trips(cli, tmp_path):
    out = tmp_path / "sub" / "i.json"
    r = cli("gen", "response-heavy", "--seed", "5", "--param", "n=6", "--out", out)
    assert r.code == 0 and r.out == ""
    assert load_instance(out).to_dict() == generate("response-heavy", 5, n=6).to_dict()
    assert [p.name for p in out.parent.iterdir()] == ["i.json"]  # no temporary left behind
    r = cli("gen", "--list", "--json")
    assert r.code == 0 and set(r.json()["families"]) == set(GENERATORS)


def test_the_seed_is_required_in_the_usage_and_the_api(cli):
    """One rule (issue 55): generating needs a seed — the usage shows --seed without brackets,
    the CLI refuses to run without it, and kvopt.generate has no default seed."""
    import inspect

    import kvopt
    from kvopt.cli import build_parser

    usage = build_parser()._subparsers._group_actions[0].choices["gen"].format_usage()
    assert "FAMILY --seed SEED" in usage and "[--seed" not in usage
    assert cli("gen", "random").code == 2
    assert inspect.signature(kvopt.generate).parameters["seed"].default is inspect.Parameter.empty
    with pytest.raises(TypeError):
        kvopt.generate("random", n=3)  # type: ignore[call-arg]
