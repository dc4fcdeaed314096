"""The batch cap ``max_batch`` in the instance format (SPEC §3, §10.1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvopt.errors import InputError
from kvopt.instance import Instance, load_instance, save_instance

ROOT = Path(__file__).resolve().parent.parent


def test_round_trip_with_cap(tmp_path):
    inst = Instance.from_arrays(10, [1, 2], [3, 4], max_batch=1, name="c")
    path = tmp_path / "c.json"
    save_instance(inst, path)
    data = json.loads(path.read_text())
    assert data["max_batch"] == 1
    back = load_instance(path)
    assert back == inst and back.max_batch == 1
    assert back.replace(name="d").max_batch == 1  # replace keeps it
    assert back.realized([0, 0]).max_batch == 1


def test_without_cap_is_byte_identical(tmp_path):
    src = sorted((ROOT / "instances" / "random").glob("*.json"))[0]
    inst = load_instance(src)
    assert inst.max_batch is None
    out = tmp_path / src.name
    save_instance(inst, out)
    assert "max_batch" not in out.read_text()
    again = tmp_path / "again.json"
    save_instance(load_instance(out), again)
    assert again.read_bytes() == out.read_bytes()


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (0, "got 0"),
        (-3, "got -3"),
        (2.0, "got float 2.0"),
        (True, "got boolean true"),
        (None, "got null"),
        ("4", "got string '4'"),
    ],
)
def test_bad_cap_names_file_field_rule(value, words):
    data = Instance.from_arrays(10, [1], [3]).to_dict()
    data["max_batch"] = value
    with pytest.raises(InputError) as err:
        Instance.from_dict(data, source="bad.json")
    assert str(err.value).startswith("bad.json: max_batch: must be an integer >= 1")
    assert words in str(err.value)


def test_cli_bad_cap_exits_2_one_line(tmp_path):
    data = Instance.from_arrays(10, [1], [3]).to_dict()
    data["max_batch"] = 0
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, "-m", "kvopt", "bound", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.json: max_batch: must be an integer >= 1, got 0" in lines[0]
