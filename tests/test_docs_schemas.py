"""The JSON Schemas of docs/schemas/ (issue 45): every bundled file validates, malformed ones fail."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import REPO

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

SCHEMAS = REPO / "docs" / "schemas"
KINDS = {"kvopt.instance": "instance", "kvopt.record": "record", "kvopt.schedule": "schedule"}


def _registry():
    from referencing import Registry, Resource

    schemas = {p.name: json.loads(p.read_text()) for p in SCHEMAS.glob("*.schema.json")}
    registry = Registry().with_resources(
        [(s["$id"], Resource.from_contents(s)) for s in schemas.values()]
    )
    return schemas, registry


def validator(kind: str):
    schemas, registry = _registry()
    schema = schemas[f"{kind}.schema.json"]
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _kind(data: dict) -> str | None:
    if data.get("format") in KINDS:
        return KINDS[data["format"]]
    if "directions" in data and "verdict" in data:
        return "growth"
    return None


BUNDLED = sorted(p for p in (REPO / "instances").rglob("*.json"))


def test_there_are_bundled_files_of_each_kind():
    kinds = {_kind(json.loads(p.read_text())) for p in BUNDLED}
    assert {"instance", "record", "growth"} <= kinds


@pytest.mark.parametrize("path", BUNDLED, ids=[str(p.relative_to(REPO)) for p in BUNDLED])
def test_bundled_file_validates(path):
    data = json.loads(path.read_text())
    kind = _kind(data)
    assert kind is not None, f"{path}: no schema for this file"
    errors = [e.message for e in validator(kind).iter_errors(data)]
    assert not errors, errors[:3]


def test_campaign_examples_validate():
    ex = SCHEMAS / "examples"
    assert not list(
        validator("campaign").iter_errors(json.loads((ex / "campaign.json").read_text()))
    )
    lines = (ex / "evaluations.jsonl").read_text().splitlines()
    assert lines
    for line in lines:
        assert not list(validator("evaluation").iter_errors(json.loads(line)))


def test_the_record_example_is_a_valid_record_and_its_fields_are_described():
    """Issue 55: File formats had no record example and its prose omitted lb_source and
    history.  The example (shown on the page) validates, passes verify_record, and every one
    of its keys is named in the page's Record paragraph."""
    from kvopt.record import load_record, verify_record

    path = SCHEMAS / "examples" / "record.json"
    data = json.loads(path.read_text())
    assert not list(validator("record").iter_errors(data))
    assert verify_record(load_record(path)) == []
    assert data["history"] and data["lb_source"]  # the fields the prose used to omit
    page = (REPO / "docs" / "reference" / "formats.md").read_text()
    assert "../schemas/examples/record.json" in page
    para = page[page.index("**Record** (SPEC §8)") :].split("\n\n")[0]
    for key in data:
        assert f"`{key}`" in para, key
    for key in data["history"][0]:
        assert f"`{key}`" in para, key


def test_a_fresh_campaign_validates(tmp_path):
    """What `kvopt search` writes today (not only the stored example) matches the schemas."""
    from kvopt.cli import main

    out = tmp_path / "camp"
    assert main(["search", "--policy", "fcfs", "--budget", "8", "--seed", "1", "--time-limit",
                 "1", "--no-progress", "--out", str(out), "--json"]) == 0  # fmt: skip
    assert not list(
        validator("campaign").iter_errors(json.loads((out / "campaign.json").read_text()))
    )
    for line in (out / "evaluations.jsonl").read_text().splitlines():
        assert not list(validator("evaluation").iter_errors(json.loads(line)))
    assert not list(validator("record").iter_errors(json.loads((out / "best.json").read_text())))


def _instance():
    return json.loads((REPO / "instances" / "random" / "mixed-n10.json").read_text())


def _record():
    return json.loads((REPO / "instances" / "worst" / "small" / "fcfs.json").read_text())


MALFORMED = {
    "instance: fractional prompt": ("instance", lambda d: d["jobs"][0].update(prompt=3.5)),
    "instance: unknown key": ("instance", lambda d: d.update(colour="red")),
    "instance: zero response": ("instance", lambda d: d["jobs"][0].update(response=0)),
    "instance: no memory": ("instance", lambda d: d.pop("memory")),
    "instance: wrong format": ("instance", lambda d: d.update(format="kvopt.schedule")),
    "record: no ub": ("record", lambda d: d.pop("ub")),
    "record: bad opt_status": ("record", lambda d: d.update(opt_status="proved")),
    "record: attempt without rounds": (
        "record",
        lambda d: d["schedule"]["attempts"][0].pop("rounds"),
    ),
    "record: inline instance broken": (
        "record",
        lambda d: d["instance"]["jobs"][0].update(arrival=-1),
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_file_is_rejected(case):
    kind, spoil = MALFORMED[case]
    data = copy.deepcopy(_instance() if kind == "instance" else _record())
    assert not list(validator(kind).iter_errors(data))
    spoil(data)
    assert list(validator(kind).iter_errors(data)), case


def test_the_bad_test_instances_are_rejected():
    """tests/data/bad/<Defect>.json: kvopt rejects each; the schema rejects those it can see."""
    bad = sorted((REPO / "tests" / "data" / "bad").glob("*.json"))
    rejected = 0
    for path in bad:
        try:
            data = json.loads(path.read_text())
        except ValueError:
            rejected += 1
            continue
        if list(validator("instance").iter_errors(data)):
            rejected += 1
    assert rejected >= len(bad) // 2
