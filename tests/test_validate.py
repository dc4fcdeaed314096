"""Theorem validation (issue 9): verdict rules, records of violations, per-job checks, growth, CLI."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kvopt import claim as claims_mod
from kvopt.claim import CLAIMS, RATIO, Claim, claims_for_policy
from kvopt.claimchecks import claim_metrics
from kvopt.instance import Instance
from kvopt.policy import POLICIES
from kvopt.record import load_record, verify_record
from kvopt.simulation import simulate
from kvopt.space import Space
from kvopt.validation import QUICK, VERDICTS, ValidationResult, validate

SMOKE = replace(QUICK, budget=10, prop1_Ls=(2, 3, 4), sqrt_memories=(16, 36, 64), area_solves=3,
                sweep_steps=2, sweep_certify=0, discovery_budget=16, discovery_seconds=10.0,
                discovery_n_max=32, discovery_memory_max=48, find_budget=8, sweep_extra=1,
                certify_seconds=1.0)  # fmt: skip


def test_registry_covers_spec_and_policies():
    spec_ids = ["area-lb", "rect-large", "rect-prompt", "rect-monotone", "rect-per-job", "response",
                "blackbox-per-job", "response-subset", "route-per-job", "route", "route-makespan",
                "greedy-area", "svf", "route-online", "clairvoyant-mix", "pack-and-schedule", "gsa",
                "gba", "mcsf", "fcfs-growth", "sf-growth", "online-linear-n", "serial-upper",
                "single-priority", "online-sqrt-n", "sorted-f", "a-max", "a-min"]  # fmt: skip
    assert list(CLAIMS) == spec_ids
    for c in CLAIMS.values():
        for p in c.policies:
            assert p in POLICIES
            assert c.id in POLICIES[p].claims  # kvopt policies reads the same registry
    assert claims_for_policy("svf") == ("svf", "online-linear-n", "single-priority")


def test_claim_classes():
    c = CLAIMS["mcsf"]
    ok = Instance.from_arrays(20, [3, 3, 3], [4, 7, 2])
    assert c.rule(ok) is None
    assert "identical" in c.rule(Instance.from_arrays(20, [3, 4], [4, 2]))
    assert "peak" in c.rule(Instance.from_arrays(20, [3, 3], [4, 8]))
    assert CLAIMS["greedy-area"].rule(Instance.from_arrays(10, [3], [7])) is not None  # alpha = 1
    assert CLAIMS["greedy-area"].bound_for(Instance.from_arrays(10, [3], [2])) == pytest.approx(
        1 + 2 / 0.5
    )
    assert CLAIMS["response"].rule(Instance.from_arrays(16, [5], [8])) is not None  # s > M/4


def test_smoke_validation_verdicts(tmp_path):
    ids = ["rect-large", "greedy-area", "rect-per-job", "rect-monotone", "route-per-job",
           "response-subset", "area-lb", "single-priority"]  # fmt: skip
    res = validate(ids, out=tmp_path / "v", progress=False, effort=SMOKE, report=tmp_path / "r.md")
    assert [c.id for c in res.claims] == ids
    for c in res.claims:
        assert c.verdict in VERDICTS
        d = c.to_dict()
        for key in ("id", "verdict", "bound", "worst_certified_ratio", "worst_optimistic_ratio",
                    "instances", "exact_solves", "seconds", "text"):  # fmt: skip
            assert key in d
        if c.kind == RATIO and c.verdict == "holds" and isinstance(c.bound, float):
            assert c.worst_certified_ratio <= c.bound
        if c.verdict == "violated":
            assert c.record and verify_record(load_record(c.record)) == []
    assert res.verdict("single-priority").data["policies"]["sjf"]["points"]
    # a per-job verdict names the record behind its worst lhs/rhs, as validate.md says of every
    # figure (issue 55 walkthrough: it named none)
    for cid in ("rect-per-job", "route-per-job", "rect-monotone", "response-subset"):
        c = res.verdict(cid)
        if c.worst_certified_ratio is not None:
            rec = load_record(c.worst_record)
            assert verify_record(rec) == [] and c.to_dict()["worst_record"] == c.worst_record
            assert f"on the instance of {c.worst_record}" in c.text
    # every verdict carries its scope (issue 55): the space searched, the evaluations, the seconds
    rl = res.verdict("rect-large").to_dict()["scope"]
    assert rl["space"] == "jobs" and rl["evaluations"] == res.verdict("rect-large").instances > 0
    assert rl["n"][0] <= rl["n"][1] and rl["memory"][0] <= rl["memory"][1]
    assert rl["arrivals"] is False and rl["seconds"] >= 0 and rl["campaigns"]
    assert res.verdict("single-priority").scope.space == "construction"
    table = res.table()
    assert "scope (what was searched)" in table and "no arrivals (per-job space)" in table
    md = (tmp_path / "r.md").read_text()
    assert "| `rect-large` |" in md and "[scope: class: " in md and "; searched n " in md
    for png in ("r-ratios.png", "r-perjob.png", "r-prop1.png"):
        assert (tmp_path / png).stat().st_size > 5000
    # validation.json redraws the same result (ValidationResult.from_dict inverts to_dict)
    saved = json.loads((tmp_path / "v" / "validation.json").read_text())
    assert ValidationResult.from_dict(saved).to_dict() == saved
    # the campaigns resume: a rerun evaluates nothing new
    again = validate(["rect-large"], out=tmp_path / "v", progress=False, effort=SMOKE)
    assert again.claims[0].instances == res.verdict("rect-large").instances


def test_certified_violation_gives_a_checked_record(tmp_path, monkeypatch):
    """A claim that is false (FCFS within 1.05 of Opt) must come out violated, with a valid record."""
    fake = Claim("fcfs-tight", "FCFS <= 1.05 Opt (false on purpose)", "test", RATIO, "all at time 0",
                 Space(n_min=2, n_max=5, memory_min=8, memory_max=16, max_response=8), ("fcfs",),
                 bound=1.05)  # fmt: skip
    monkeypatch.setitem(claims_mod.CLAIMS, fake.id, fake)
    res = validate([fake.id], out=tmp_path / "v", progress=False, effort=replace(SMOKE, budget=24))
    v = res.claims[0]
    assert v.verdict == "violated"
    rec = load_record(v.record)
    assert verify_record(rec) == []
    assert rec.ratio_certified > 1.05 and rec.meta["claim"] == fake.id


def test_per_job_violation_is_detected(monkeypatch):
    """Tighten Lemma 5 by a factor 100: the check must report the job, round and both sides."""
    inst = Instance.from_arrays(20, [5, 4, 6, 3], [3, 4, 5, 2])
    res = simulate(inst, "rect")
    m = claim_metrics("rect-per-job", inst, res)
    assert m["violation"] is None and 0 < m["score"] <= 1
    import kvopt.policy.rect as rect

    real = rect.lemma5_bounds
    monkeypatch.setattr(
        rect, "lemma5_bounds", lambda M, w, p: ([v / 100 for v in real(M, w, p)[0]], 1)
    )
    m = claim_metrics("rect-per-job", inst, res)
    v = m["violation"]
    assert m["score"] > 1 and v["job"] in range(4) and v["lhs"] == res.completion_times[v["job"]]
    assert v["rhs"] < v["lhs"]


def test_response_subset_and_blackbox_checks():
    inst = Instance.from_arrays(32, [2, 3, 1, 4], [6, 9, 5, 12])
    m = claim_metrics("response-subset", inst, simulate(inst, "response"))
    assert m["violation"] is None and m["subsets"] >= 4
    inst = Instance.from_arrays(32, [2, 9, 1, 4], [1, 9, 5, 3])
    m = claim_metrics("blackbox-per-job", inst, simulate(inst, "blackbox", instrument=True))
    assert m["violation"] is None and m["score"] > 0


def test_bad_input(cli, tmp_path):
    r = cli("validate", "--claims", "nope", "--quick")
    assert r.code == 2 and "valid:" in r.err and "area-lb" in r.err
    r = cli("validate", "--budget", "0")
    assert r.code == 2 and "--budget" in r.err
    f = tmp_path / "f"
    f.write_text("x")
    r = cli("validate", "--claims", "area-lb", "--out", f)
    assert r.code == 2 and "--out" in r.err
    assert len(r.err.strip().splitlines()) == 1


def test_cli_json(cli, tmp_path):
    r = cli("validate", "--claims", "area-lb", "--quick", "--out", tmp_path / "v", "--json",
            "--no-progress")  # fmt: skip
    assert r.code == 0, r.err
    d = r.json()
    assert d["claims"][0]["id"] == "area-lb" and d["claims"][0]["verdict"] == "holds"
    assert json.loads((tmp_path / "v" / "validation.json").read_text())["claims"]


def test_fit_exponent():
    from kvopt.campaign.strategies import fit_exponent

    xs = [2, 4, 8, 16]
    assert fit_exponent(xs, [x**0.5 for x in xs]) == pytest.approx(0.5)
    assert fit_exponent([3], [1.0]) is None


def test_constant_free_claim_keeps_every_instance(tmp_path):
    """``route`` (no constant): the verdict comes from growth sweeps of the best record of a
    typed campaign and of the per-job campaigns' worst record (``holds`` when every direction
    is ``bounded``, ``violated`` when one ``grows``), and the ratio picture gets every instance
    the campaigns evaluated."""
    res = validate(["route"], out=tmp_path / "v", progress=False, effort=SMOKE,
                   report=tmp_path / "r.md")  # fmt: skip
    c = res.claims[0]
    assert set(c.data) >= {"growth", "distribution", "typed_records"}
    sweeps = c.data["growth"]["sweeps"]
    typed = c.data["typed_records"]
    assert len(typed) == 1 and "typed" in typed[0]
    assert len(sweeps) == 2 and {s["policy"] for s in sweeps} == {"route"}
    assert sweeps[0]["record"] == typed[0]
    verdicts = [d["verdict"] for s in sweeps for d in s["directions"]]
    assert (c.verdict == "holds") == all(v == "bounded" for v in verdicts)
    assert (c.verdict == "violated") == ("grows" in verdicts)
    assert "growth sweeps" in c.text
    assert len(c.data["distribution"]["ratio_certified"]) == c.instances
    assert max(c.data["distribution"]["ratio_certified"]) == pytest.approx(c.worst_certified_ratio)
    # the report draws the sweep (ratio against factor, one line per direction) and lists it
    md = _report_with_pictures(tmp_path / "r.md")
    assert "r-sweeps-route.png" in md and "## Growth sweeps: `route`" in md
    for d in sweeps[0]["directions"]:
        assert f"{d['name']} {d['verdict']}" in md


def test_every_claim_has_a_procedure_and_per_job_checks_declare_instrumentation():
    from kvopt.claim import GROWTH, INVARIANT, KINDS, PER_JOB
    from kvopt.claimchecks import CHECKS, Check, needs_instrument
    from kvopt.validation.growth import GROWTH_EXPERIMENTS
    from kvopt.validation.procedures import PROCEDURES, procedure_for

    assert set(PROCEDURES) == set(KINDS)
    for c in CLAIMS.values():
        procedure_for(c)  # raises when the claim cannot be validated
        if c.kind in (PER_JOB, INVARIANT):
            assert isinstance(CHECKS[c.id], Check)
        if c.kind == GROWTH:
            assert c.id in GROWTH_EXPERIMENTS
    assert needs_instrument("rect-monotone") and needs_instrument("blackbox-per-job")
    assert not needs_instrument("rect-per-job") and not needs_instrument("rect-large")
    assert not needs_instrument(None)


def test_unknown_growth_claim_is_an_error_not_another_experiment(tmp_path, monkeypatch):
    from kvopt.claim import GROWTH

    fake = replace(CLAIMS["single-priority"], id="third-growth")
    monkeypatch.setitem(claims_mod.CLAIMS, fake.id, fake)
    assert fake.kind == GROWTH
    with pytest.raises(LookupError, match="third-growth.*GROWTH_EXPERIMENTS"):
        validate([fake.id], out=tmp_path / "v", progress=False, effort=SMOKE)
    assert not (tmp_path / "v" / "validation.json").exists()


def test_per_job_check_without_its_instrumentation_flag_sees_no_states(monkeypatch):
    """The instrumentation an evaluation asks for comes from the check's declaration."""
    from kvopt.campaign.evaluate import evaluate
    from kvopt.campaign.types import CompactInstance, EvalTask
    from kvopt.claimchecks import CHECKS
    from kvopt.policy import PolicyRef

    inst = Instance.from_arrays(16, [5, 6, 5], [3, 2, 4])
    task = EvalTask(index=0, batch=0, instance=CompactInstance.of(inst), origin="t",
                    policy=PolicyRef("rect"), policy_seed=None, objective="total",
                    threshold=0.0, exact_time_limit=5.0, claim="rect-monotone")  # fmt: skip
    with_states = evaluate(task)
    monkeypatch.setitem(CHECKS, "rect-monotone", replace(CHECKS["rect-monotone"], instrument=False))
    without = evaluate(task)
    assert with_states.score > 0 and without.score == 0


def test_discovery_claim_runs_a_campaign_then_sweeps(tmp_path):
    """``fcfs-growth``: a campaign in the claim's class, then sweeps of its best record (one
    doubling, then more while a direction is not bounded); ``reproduced`` exactly when a
    direction grows, else ``inconclusive`` with the effort spent."""
    eff = replace(SMOKE, discovery_budget=4, discovery_seconds=20.0, sweep_steps=1, sweep_records=1,
                  sweep_certify=0, exact_time_limit=2.0)  # fmt: skip
    res = validate(["fcfs-growth"], out=tmp_path / "v", progress=False, effort=eff,
                   report=tmp_path / "r.md")  # fmt: skip
    c = res.claims[0]
    assert c.kind == "growth"
    assert "campaign evaluations" in c.text and c.instances >= 4
    f = c.data["policies"]["fcfs"]
    assert f["sweeps"][0]["policy"] == "fcfs"
    assert (c.verdict == "reproduced") == (f["verdict"] == "grows")
    assert c.verdict in ("reproduced", "inconclusive")
    for d in f["sweeps"][0]["directions"]:
        for p in d["steps"]:
            assert verify_record(load_record(p["record"])) == []
    md = _report_with_pictures(tmp_path / "r.md")
    assert "r-sweeps-fcfs-growth.png" in md and "## Growth sweeps: `fcfs-growth`" in md
    assert "## Growth data: `fcfs-growth`" not in md  # no construction points to list


def _report_with_pictures(path):
    """The report's Markdown, after checking that every picture it references was written."""
    import re

    md = path.read_text()
    names = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    for name in names:
        assert (path.parent / name).stat().st_size > 5000, name
    return md


def test_report_sweep_pictures_only_for_claims_with_sweep_points(tmp_path):
    """A claim judged by sweeps gets ``FILE-sweeps-CLAIM.png`` (one panel per sweep, one line per
    direction); a claim whose sweeps hold no point (or that has none) gets no picture and no
    reference, and the report still lists every verdict."""
    from kvopt.validation.report import claim_sweeps, write_report
    from kvopt.validation.result import ClaimVerdict

    def step(factor, ratio):
        return {"factor": factor, "n": 8 * factor, "memory": 40, "alg": 10, "ub": 5, "lb": 5,
                "ratio_certified": ratio, "ratio_optimistic": ratio, "opt_status": "feasible",
                "record": f"p{factor}.json"}  # fmt: skip

    sweep = {"record": "runs/route/best.json", "policy": "route", "best_direction": "count",
             "verdict": "grows",
             "directions": [{"name": "count", "verdict": "grows", "exponent": 0.9,
                             "steps": [step(f, 2.0 * f**0.9) for f in (1, 2, 4, 8, 16)]},
                            {"name": "memory", "verdict": "bounded", "exponent": 0.0,
                             "limit": 3.0, "limit_spread": 0.01, "bounded_rule": "change",
                             "axis": "memory",
                             "steps": [step(f, 3.0) for f in (1, 2, 4)]}]}  # fmt: skip
    empty = {**sweep, "record": "runs/x/best.json", "verdict": "unclear",
             "directions": [{"name": "memory", "verdict": "unclear", "exponent": None,
                             "steps": []}]}  # fmt: skip

    def verdict(cid, data, kind="ratio"):
        return ClaimVerdict(id=cid, verdict="inconclusive", bound=None, bound_text="-",
                            worst_certified_ratio=None, worst_optimistic_ratio=None, instances=0,
                            exact_solves=0, seconds=0.0, text="t", kind=kind, data=data)  # fmt: skip

    claims = (
        verdict("route", {"growth": {"verdict": "grows", "sweeps": [sweep, empty]}}),
        verdict("route-online", {"growth": {"verdict": "unclear", "sweeps": [empty]}}),
        verdict("route-makespan", {}),
        verdict(
            "sf-growth",
            {"policies": {"sjf": None, "mcsf": {"verdict": "grows", "sweeps": [sweep]}}},
            kind="growth",
        ),  # fmt: skip
        verdict("fcfs-growth", {"policies": {"fcfs": None}}, kind="growth"),
    )
    assert [len(claim_sweeps(c)) for c in claims] == [1, 0, 0, 1, 0]
    res = ValidationResult(claims=claims, seed=1, quick=True, seconds=0.0, out=str(tmp_path))
    written = write_report(res, tmp_path / "r.md")
    assert sorted(Path(w).name for w in written) == ["r-sweeps-route.png", "r-sweeps-sf-growth.png",
                                                     "r.md"]  # fmt: skip
    md = _report_with_pictures(tmp_path / "r.md")
    assert "count grows (exponent 0.900 per doubling of the factor): x1 2.000, x2 3.732" in md
    assert "memory bounded (exponent 0.000 per doubling of memory, limit 3 ± 0.01 (change))" in md
    assert "* mcsf, sweep of `runs/route/best.json` (**grows**)" in md
    for cid in ("route-online", "route-makespan", "fcfs-growth"):
        assert f"sweeps-{cid}" not in md and f"## Growth sweeps: `{cid}`" not in md
        assert f"**`{cid}`**" in md
    assert not list(tmp_path.glob("r-sweeps-route-*.png"))


@pytest.mark.slow
def test_discovery_shares_growing_instances_between_a_claims_rules(tmp_path, monkeypatch):
    """``sf-growth`` has two rules in one class: when ``mcsf``'s own records show no growth, the
    instance on which ``sjf`` grows (the bundled discovery ``sf-discovery-sjf.json``) is swept
    under ``mcsf`` and counts as ``mcsf``'s discovery.  The campaigns are replaced by that
    record and the finder by its direction, to keep the test short."""
    import shutil
    from types import SimpleNamespace

    from kvopt.campaign.aftersearch import CampaignGrowth
    from kvopt.validation import sweeps

    source = Path("instances/worst/typed/sf-discovery-sjf.json")
    direction = "M=1,prompt:0=1,count:0=0.5,count:1=1"

    def campaign(claim, policy, ctx):
        out = tmp_path / "c" / policy
        out.mkdir(parents=True)
        shutil.copy(source, out / "best.json")
        best = SimpleNamespace(ratio_certified=2.6)
        return SimpleNamespace(out=str(out), evaluations=1, exact_solves=0, best=best), None

    real_grow = sweeps.grow

    def grow(src, **kw):
        return real_grow(src, **{**kw, "directions": [direction]})

    def grow_campaign(folder, **kw):  # mcsf's own campaign finds nothing that grows
        if Path(folder).name == "mcsf":
            return CampaignGrowth((), "unclear")
        g = grow(str(Path(folder) / "best.json"), out=Path(folder) / "growth", steps=kw["steps"],
                 extra=kw["extra"], time_limit=kw["time_limit"], certify=kw["certify"],
                 certify_seconds=kw["certify_seconds"], progress=False)  # fmt: skip
        return CampaignGrowth((g,), g.verdict)

    monkeypatch.setattr(sweeps, "discovery_campaign", campaign)
    monkeypatch.setattr(sweeps, "grow", grow)
    monkeypatch.setattr(sweeps, "grow_campaign", grow_campaign)
    eff = replace(SMOKE, sweep_steps=4, sweep_records=1, sweep_certify=0)
    res = validate(["sf-growth"], out=tmp_path / "v", progress=False, effort=eff, seed=1)
    c = res.claims[0]
    mcsf = c.data["policies"]["mcsf"]
    assert c.data["policies"]["sjf"]["verdict"] == "grows"
    assert mcsf["verdict"] == "grows" and "sjf's instance" in mcsf["family"]
    assert [s.get("shared_from") for s in mcsf["sweeps"]] == ["sjf"]
    assert c.verdict == "reproduced"


SMALL_RECORDS = Path(__file__).parent.parent / "instances" / "worst" / "small"


def test_validate_from_records_decides_a_claim_the_records_beat(cli, tmp_path):
    """--from RECORD_OR_DIR (issue 55): a valid record inside the claim's class beating the
    constant makes the claim violated at once, with that record as the evidence."""
    fcfs = load_record(SMALL_RECORDS / "fcfs.json")
    assert fcfs.ratio_certified > 2.5
    r = cli("validate", "--policy", "fcfs", "--ratio-at-most", "2.5", "--from", SMALL_RECORDS,
            "--out", tmp_path / "v", "--json", "--no-progress")  # fmt: skip
    assert r.code == 0, r.err
    c = r.json()["claims"][0]
    assert c["verdict"] == "violated" and c["instances"] == 0
    assert "fcfs.json" in c["text"] and "no search" in c["text"]
    kept = load_record(c["record"])
    assert kept.instance == fcfs.instance and verify_record(kept) == []
    sc = c["scope"]
    assert sc["space"] == "records" and sc["evaluations"] == 0 and sc["campaigns"] == []
    n_records = len(list(SMALL_RECORDS.glob("*.json")))
    assert sc["records"]["given"] == n_records and sc["records"]["in_class"] == 1
    assert not (tmp_path / "v" / c["id"] / "anneal").exists()  # nothing was searched


def test_validate_from_records_below_the_bound_searches_and_says_so(cli, tmp_path):
    r = cli("validate", "--policy", "fcfs", "--ratio-at-most", "50", "--budget", "4",
            "--from", SMALL_RECORDS / "fcfs.json", "--from", SMALL_RECORDS / "sjf.json",
            "--out", tmp_path / "v", "--no-progress")  # fmt: skip
    assert r.code == 0, r.err
    line = next(x for x in r.out.splitlines() if x.startswith("fcfs-ratio-at-most-50:"))
    assert line.startswith("fcfs-ratio-at-most-50: holds [scope: class: ")
    assert "; searched n " in line
    assert "--from: 1 of 2 records in the class (worst certified 2.698)" in line  # sjf's is not
    assert "| scope (what was searched) |" in r.out


def test_validate_from_records_count_in_the_headline(cli, tmp_path):
    """Issue 68 acceptance: a given record in the class counts where the search's finds count:
    the printed and JSON worst certified ratio is at least its 2.698, with it as the record."""
    args = ("validate", "--policy", "fcfs", "--ratio-at-most", "10", "--budget", "16",
            "--seed", "1", "--from", SMALL_RECORDS / "fcfs.json", "--no-progress")  # fmt: skip
    given = load_record(SMALL_RECORDS / "fcfs.json")
    r = cli(*args, "--out", tmp_path / "v", "--report", tmp_path / "r.md")
    assert r.code == 0, r.err
    row = next(x for x in r.out.splitlines() if x.startswith("| `fcfs-ratio-at-most-10`"))
    assert row.split(" | ")[4] == "2.698"  # the table's worst certified column
    assert "on the given record" in r.out and "the search's own worst certified" in r.out
    r = cli(*args, "--out", tmp_path / "v", "--json")
    c = r.json()["claims"][0]
    assert c["verdict"] == "holds" and round(c["worst_certified_ratio"], 3) >= 2.698
    assert c["worst_certified_ratio"] == given.ratio_certified
    kept = load_record(c["worst_record"])
    assert kept.instance == given.instance and verify_record(kept) == []
    saved = json.loads((tmp_path / "v" / "validation.json").read_text())["claims"][0]
    assert saved["worst_certified_ratio"] == c["worst_certified_ratio"]
    assert saved["scope"]["records"]["worst_record"].endswith("fcfs.json")
    dist = saved["data"]["distribution"]  # the report's picture draws the given record
    assert [g["ratio_certified"] for g in dist["given"]] == [given.ratio_certified]
    assert "2.698" in (tmp_path / "r.md").read_text()


def test_scope_names_the_class_distinct_instances_and_the_effort(cli, tmp_path):
    """Issue 68 acceptance: ``scope.class`` is the claim's class, ``distinct_instances`` at most
    ``evaluations`` and the distinct count of ``evaluations.jsonl``; no "full" effort."""
    from kvopt.campaign.log import read_log

    r = cli("validate", "--claims", "svf", "--budget", "32", "--seed", "1", "--json",
            "--no-progress", "--out", tmp_path / "v", "--report", tmp_path / "r.md")  # fmt: skip
    assert r.code == 0, r.err
    sc = r.json()["claims"][0]["scope"]
    assert sc["class"] == CLAIMS["svf"].klass == "alpha < 1, all jobs at time 0"
    # each campaign's certify line says its best is best by ratio ÷ bound, not the worst ratio
    certify = [ln for ln in r.err.splitlines() if "certify stage:" in ln]
    assert certify and all("not the highest ratio" in ln for ln in certify)
    keys = set()
    for folder in sc["campaigns"]:
        keys |= {ev.key for ev in read_log(Path(folder) / "evaluations.jsonl").values()}
    assert sc["distinct_instances"] == len(keys) <= sc["evaluations"]
    assert sc["effort"]["name"] == "custom" and sc["effort"]["budget"] == 32
    report = (tmp_path / "r.md").read_text()
    assert "full effort" not in report and "budget 32 evaluations per claim" in report
    assert "(custom effort; the default is budget 160)" in report


def test_effort_is_default_only_when_it_is():
    from kvopt.validation.effort import Effort, effort_dict, effort_text

    assert effort_dict(Effort())["name"] == "default"
    assert effort_dict(QUICK)["name"] == "quick"
    assert effort_dict(replace(Effort(), budget=32))["name"] == "custom"
    assert "default effort" in effort_text(effort_dict(Effort()))
    assert "default effort" not in effort_text(effort_dict(replace(Effort(), budget=32)))


def test_validate_from_bad_input(cli, tmp_path):
    r = cli("validate", "--policy", "fcfs", "--ratio-at-most", "2", "--from", tmp_path / "nope")
    assert r.code == 2 and "--from" in r.err and "no such file" in r.err
    (tmp_path / "empty").mkdir()
    r = cli("validate", "--policy", "fcfs", "--ratio-at-most", "2", "--from", tmp_path / "empty")
    assert r.code == 2 and "no record" in r.err


def test_the_ratio_picture_keeps_its_title_inside(tmp_path, monkeypatch):
    """Issue 55: with one claim the report's ratio picture clipped its title ("io claims…")."""
    from kvopt.validation import report
    from kvopt.validation.result import ClaimVerdict

    c = ClaimVerdict(id="mine-ratio-at-most-5", verdict="holds", bound=5.0, bound_text="5",
                     worst_certified_ratio=2.0, worst_optimistic_ratio=2.0, instances=3,
                     exact_solves=0, seconds=1.0, text="", kind="ratio",
                     data={"distribution": {"ratio_certified": [1.0, 1.5, 2.0],
                                            "ratio_optimistic": [1.0, 1.5, 2.0]}})  # fmt: skip
    res = ValidationResult(claims=(c,), seed=0, quick=True, seconds=1.0, out=str(tmp_path))
    figs = []
    monkeypatch.setattr(report, "_save", lambda fig, path: figs.append(fig))
    assert report.plot_ratio_claims(res, tmp_path / "r.png")
    (fig,) = figs
    fig.canvas.draw()
    box = fig.bbox
    texts = [fig._suptitle, *[t for ax in fig.axes for t in (ax.title, ax.xaxis.label)]]
    for t in texts:
        if t is None or not t.get_text():
            continue
        e = t.get_window_extent()
        assert e.x0 >= box.x0 - 1 and e.x1 <= box.x1 + 1, t.get_text()


def test_validate_list_says_a_constant_is_not_given_only_for_a_ratio_claim(cli):
    # a newcomer looking for blackbox-per-job's 4k-1 read "constant: a constant (not given)":
    # only a ratio claim has a constant a paper may leave unnamed; the other kinds have none
    r = cli("validate", "--list")
    assert r.code == 0, r.err
    lines = {ln.split()[0]: ln for ln in r.out.splitlines() if ln and not ln.startswith(" ")}
    for c in CLAIMS.values():
        text = c.bound_text()
        assert f"constant: {text}" in lines[c.id]
        if c.kind == RATIO:
            assert not text.startswith("none"), c.id
        else:
            assert "not given" not in text and text.startswith("none: "), (c.id, text)
    assert "per-job inequality" in lines["blackbox-per-job"]
    assert "constant: a constant (not given)" in lines["route"]


def test_a_scope_of_a_fraction_of_a_second_does_not_read_0_s():
    # the walkthrough's verdicts read "16 evaluations, 0 s, seed 1" beside 0.4 in the seconds
    # column: under ten seconds the scope keeps a decimal
    from kvopt.validation.scope import Scope

    def text(seconds):
        return Scope("jobs", 16, seconds, 1, n=(1, 8), memory=(8, 48)).text()

    assert "16 evaluations, 0.4 s, seed 1" in text(0.4)
    assert "16 evaluations, 9.2 s, seed 1" in text(9.2)
    assert "16 evaluations, 31 s, seed 1" in text(31.2)
