"""Instance model and file format (SPEC §1, §3): round trips and every bad-input case."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import DATA

from kvopt.errors import InputError
from kvopt.instance import Instance, Job, Regime, load_instance, save_instance

BAD = json.loads((DATA / "bad_fields.json").read_text())

#: Subcommands that read an instance, with the arguments that follow the path.
READERS = {
    "bound": lambda p, tmp: ["bound", p, "--json"],
    "check": lambda p, tmp: ["check", p, str(_valid_schedule(tmp)), "--json"],
    "solve": lambda p, tmp: ["solve", p, "--json", "--time-limit", "5"],
    "simulate": lambda p, tmp: ["simulate", p, "--policy", "fcfs", "--json"],
    "compare": lambda p, tmp: ["compare", p, "--json"],
    "plot": lambda p, tmp: [
        "plot",
        str(_valid_schedule(tmp)),
        "--instance",
        p,
        "--out",
        str(tmp / "x.png"),
    ],
}


def _valid_schedule(tmp):
    path = tmp / "sched.json"
    path.write_text(
        json.dumps({"format": "kvopt.schedule", "version": 1, "memory": 16, "attempts": []})
    )
    return path


def _available(cmd):
    from kvopt.cli import _available_commands

    return cmd in {m.__name__.rsplit(".", 1)[1] for m in _available_commands()}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_instance_direct(name):
    with pytest.raises(InputError) as err:
        load_instance(DATA / "bad" / name)
    msg = str(err.value)
    assert name in msg
    assert BAD[name] in msg, msg


@pytest.mark.parametrize("cmd", sorted(READERS))
@pytest.mark.parametrize("name", sorted(BAD) + ["MISSING_FILE", "A_DIRECTORY"])
def test_bad_instance_every_subcommand(cli, tmp_path, cmd, name):
    if not _available(cmd):
        pytest.skip(f"kvopt {cmd} is not part of this build")
    if name == "MISSING_FILE":
        path, expect = str(tmp_path / "nope.json"), "not found"
    elif name == "A_DIRECTORY":
        # compare takes folders of instances; every other reader wants a file
        path, expect = str(tmp_path), "no instance" if cmd == "compare" else "directory"
    else:
        path, expect = str(DATA / "bad" / name), BAD[name]
    r = cli(*READERS[cmd](path, tmp_path))
    assert r.code == 2, (r.out, r.err)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert "Traceback" not in r.err
    assert path in lines[0] and expect in lines[0], lines[0]
    assert r.out == ""


def test_empty_jobs_is_valid_with_opt_zero(tmp_path, cli):
    p = tmp_path / "empty.json"
    p.write_text(json.dumps({"format": "kvopt.instance", "version": 1, "memory": 5, "jobs": []}))
    inst = load_instance(p)
    assert inst.n == 0
    r = cli("bound", p, "--json")
    assert r.code == 0
    d = r.json()
    assert d["best"] == 0 and d["area"] == 0 and d["processing"] == 0


def test_round_trip_and_derived_arrays(tmp_path):
    inst = Instance(
        memory=64,
        jobs=(
            Job(5, 12),
            Job(3, 40, arrival=7, id="req-17", predicted_response=35),
            Job(20, 4),
        ),
        name="example",
        meta={"source": "test"},
    )
    save_instance(inst, tmp_path / "i.json")
    back = load_instance(tmp_path / "i.json")
    assert back == inst and back.to_dict() == inst.to_dict()
    assert list(back.areas) == [5 * 12 + 78, 3 * 40 + 820, 20 * 4 + 10]
    assert list(back.peaks) == [17, 43, 24]
    assert [Regime(r) for r in back.regimes] == [
        Regime.RESPONSE_HEAVY,
        Regime.RESPONSE_HEAVY,
        Regime.LARGE,
    ]
    assert list(back.predicted) == [12, 35, 4]
    with pytest.raises(ValueError):
        back.prompts[0] = 9  # read-only
    with pytest.raises(AttributeError):
        back.memory = 3  # frozen


def test_regime_boundary_is_exactly_quarter_of_memory():
    inst = Instance.from_arrays(64, [16, 17, 16], [16, 1, 17])
    assert [Regime(r) for r in inst.regimes] == [
        Regime.PROMPT_HEAVY,  # s = M/4 is small; o = s is prompt-heavy
        Regime.LARGE,
        Regime.RESPONSE_HEAVY,
    ]


def test_with_response_returns_new_validated_instance():
    inst = Instance.from_arrays(10, [2, 3], [3, 4])
    other = inst.with_response(0, 5)
    assert inst.responses[0] == 3 and other.responses[0] == 5
    with pytest.raises(InputError, match=r"jobs\[0\].*exceeds memory 10"):
        inst.with_response(0, 9)


def test_numpy_integers_accepted():
    inst = Instance.from_arrays(np.int64(8), np.array([1, 2]), np.array([3, 4]))
    assert inst.memory == 8 and isinstance(inst.jobs[0].prompt, int)
