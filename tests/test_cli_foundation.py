"""``kvopt check``, ``kvopt bound`` and ``kvopt demo`` on the command line: JSON shape and exit codes."""

from __future__ import annotations

import json

import pytest
from conftest import REPO

from kvopt.instance import Instance, save_instance
from kvopt.schedule import Schedule, save_schedule


@pytest.fixture
def pair(tmp_path):
    inst = Instance.from_arrays(8, [2, 3], [3, 2], name="pair")
    ip = tmp_path / "i.json"
    save_instance(inst, ip)
    return inst, ip, tmp_path


def test_check_valid_json(cli, pair):
    inst, ip, tmp = pair
    sp = tmp / "s.json"
    save_schedule(Schedule.from_starts(inst, [0, 3]), sp, inst.n)
    r = cli("check", ip, sp, "--json")
    assert r.code == 0 and r.err == ""
    d = r.json()
    assert d["valid"] is True and d["errors"] == []
    assert d["objective"] == {"total_completion": 3 + 5, "makespan": 5}


def test_check_invalid_exit_1_and_errors(cli, pair):
    inst, ip, tmp = pair
    sp = tmp / "s.json"
    save_schedule(Schedule.from_starts(inst, [0, 0]), sp, inst.n)
    r = cli("check", ip, sp, "--json")
    assert r.code == 1
    d = r.json()
    assert d["valid"] is False
    assert d["errors"] and {"job", "round", "rule"} <= set(d["errors"][0])
    assert d["errors"][0]["rule"] == "memory" and d["errors"][0]["round"] == 1
    r = cli("check", ip, sp)
    assert r.code == 1 and "INVALID" in r.out and "[memory]" in r.out


@pytest.mark.parametrize(
    "payload, field",
    [
        ("{broken", "not valid JSON"),
        (json.dumps({"format": "kvopt.instance", "version": 1, "memory": 8, "jobs": []}), "format"),
        (
            json.dumps(
                {
                    "format": "kvopt.schedule",
                    "version": 1,
                    "memory": 8,
                    "attempts": [{"job": 0, "start": 1.5, "rounds": 3, "completed": True}],
                }
            ),
            "attempts[0].start",
        ),
        (
            json.dumps(
                {
                    "format": "kvopt.schedule",
                    "version": 1,
                    "memory": 8,
                    "attempts": [{"job": 0, "start": 1, "rounds": 3, "completed": "yes"}],
                }
            ),
            "attempts[0].completed",
        ),
        (
            json.dumps(
                {
                    "format": "kvopt.schedule",
                    "version": 1,
                    "memory": 8,
                    "attempts": [{"job": 0, "start": 1, "rounds": 3}],
                }
            ),
            "attempts[0].completed",
        ),
        (json.dumps({"format": "kvopt.schedule", "version": 1, "attempts": []}), "memory"),
    ],
)
def test_check_unreadable_schedule_exit_2(cli, pair, payload, field):
    inst, ip, tmp = pair
    sp = tmp / "bad.json"
    sp.write_text(payload)
    r = cli("check", ip, sp, "--json")
    assert r.code == 2 and r.out == ""
    assert str(sp) in r.err and field in r.err and len(r.err.strip().splitlines()) == 1


def test_check_names_the_usage_when_the_first_file_is_not_an_instance(cli, pair):
    # kvopt check opt.json inst.json answered "opt.json: format: must be 'kvopt.instance', got
    # 'kvopt.schedule'", and a record before an instance the same (issue 55 walkthrough)
    inst, ip, tmp = pair
    sp = tmp / "s.json"
    save_schedule(Schedule.from_starts(inst, [0, 3]), sp, inst.n)
    r = cli("check", sp, ip)
    assert r.code == 2 and r.out == "" and len(r.err.strip().splitlines()) == 1
    assert f"is a schedule: the instance comes first (kvopt check INSTANCE {sp}" in r.err
    rec = REPO / "instances" / "worst" / "small" / "fcfs.json"
    r = cli("check", rec, ip)
    assert r.code == 2 and r.out == "" and len(r.err.strip().splitlines()) == 1
    assert f"is a record: check it alone (kvopt check {rec})" in r.err
    assert cli("check", ip, sp).code == 0  # the right order still checks


def test_bound_json_keys(cli, pair):
    inst, ip, tmp = pair
    r = cli("bound", ip, "--json")
    assert r.code == 0
    d = r.json()
    assert {"area", "processing", "best", "best_name"} <= set(d)
    assert "lp" not in d
    assert d["best"] == max(d["area"], d["processing"])


def test_bad_option_value_is_exit_2(cli, pair):
    inst, ip, tmp = pair
    r = cli("bound", ip, "--time-limit", "soon")
    assert r.code == 2 and "--time-limit" in r.err and len(r.err.strip().splitlines()) == 1


def _commands(parser, prefix=()):
    """(words, parser) of every command that takes options (``experiment run`` included)."""
    import argparse

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
    for action in subs:
        for name, sub in action.choices.items():
            yield from _commands(sub, (*prefix, name))


def test_a_mistyped_option_is_named_with_the_close_one(cli, pair):
    """Issue 55: ``--polcy`` got "the following arguments are required: --policy"; every
    command now names the unknown option first and suggests the close one (one line, 2)."""
    from kvopt.cli import build_parser

    inst, ip, tmp = pair
    r = cli("simulate", ip, "--polcy", "fcfs")
    assert r.code == 2, r.err
    assert r.err == "kvopt simulate: error: unrecognized option --polcy (did you mean --policy?)\n"
    seen = 0
    for words, parser in _commands(build_parser()):
        options = [o for o in parser._option_string_actions if o.startswith("--")]
        for opt in options:
            if len(opt) < 4:
                continue
            typo = opt[:2] + opt[3] + opt[2] + opt[4:]  # its first two letters swapped
            if opt == "--help" or typo in options or opt[2] == opt[3]:
                continue
            r = cli(*words, f"{typo}=1" if len(opt) % 2 else typo)
            assert r.code == 2 and len(r.err.splitlines()) == 1, (words, typo, r.err)
            assert r.err.startswith(f"kvopt {' '.join(words)}: error: "), r.err
            assert f"unrecognized option {typo} (did you mean {opt}?)" in r.err, r.err
            seen += 1
    assert seen > 100
    r = cli("simulate", ip, "--policy", "fcfs", "stray")  # leftovers: named by the command
    assert r.code == 2 and r.err.startswith("kvopt simulate: error: unrecognized arguments: stray")
    r = cli("simulate", ip, "--pol", "fcfs", "--json")  # a unique prefix is still an option
    assert r.code == 0, r.err
    r = cli("simulat", ip, "--policy", "fcfs")
    assert r.code == 2 and "unknown command 'simulat' (did you mean 'simulate'?)" in r.err


def test_demo_bundled_instances_reproducible(cli, tmp_path):
    r = cli("demo", "--json", "--out", tmp_path)
    assert r.code == 0, r.err
    d = r.json()
    assert d["all_reproducible"] and len(d["instances"]) >= 10
    names = {i["file"] for i in d["instances"]}
    assert "paper/prop1-L3-case2.json" in names
    assert (REPO / "instances" / "traces" / "azure-llm-2023" / "NOTICE.md").exists()
    assert (REPO / "instances" / "traces" / "azure-llm-2023" / "LICENSE").exists()
    # issue 5: every small bundled instance has a certified Opt, and the worst pair is drawn
    comps = d["comparisons"]
    assert comps["random/mixed-n10.json"]["exact"]["status"] == "optimal"
    assert d["worst"]["ratio_opt"] >= 1.0
    assert (tmp_path / "worst-vs-opt.png").stat().st_size > 10_000
    # issue 16 item 6: the trace table is on a sample where memory binds and tells policies apart
    window = "traces/azure-window-n1000-M16384.json"
    info = next(t for t in d["traces"] if t["file"] == window)
    assert info["memory_binds"] and info["peak_all_at_once"] > info["memory"]
    assert info["peak_on_arrival"] > 4 * info["memory"]
    assert info["lb"] < info["ub"] and "out of reach" in info["exact_opt"]
    rows = [p for p in comps[window]["policies"] if p["applicable"]]
    assert len({round(p["ratio_lb"], 3) for p in rows}) >= 3
    assert len({round(p["ratio_ub"], 3) for p in rows}) >= 3
    assert all(1.0 <= p["ratio_ub"] <= p["ratio_lb"] for p in rows)
    assert comps[window]["exact"] is None


def test_text_table_renderer():
    from kvopt.texttable import Column, render_table

    cols = [Column("name"), Column("n", ">"), Column("note", max_width=4)]
    assert render_table(cols, [["ab", "7", "longer"], ["c", "12", "x"]], rule="columns") == [
        "name   n  note",
        "----  --  ----",
        "ab     7  long",
        "c     12  x   ",
    ]
    fixed = [Column("policy", "<", 8), Column("total", ">", 6), Column("kills", ">", 5)]
    lines = render_table(fixed, [["fcfs", "12", "0"], ["rect", "not applicable: x"]],
                         indent="  ", sep=" ", rule="line")  # fmt: skip
    assert lines == [
        "  policy    total kills",
        "  " + "-" * 21,
        "  fcfs         12     0",
        "  rect     not applicable: x",
    ]


def test_demo_is_a_library_function_with_a_typed_report(tmp_path, monkeypatch):
    """``kvopt demo``'s work is :func:`kvopt.demo.run_demo`, which returns a typed report;
    the command line only renders it (text here, JSON above)."""
    import dataclasses
    import shutil

    from kvopt.cli.demo import _print_report
    from kvopt.demo import BundledInstance, DemoReport, SearchSummary, run_demo

    bundled = tmp_path / "instances"  # two bundled instances: the work, not the whole demo
    for rel in ("random/mixed-n10.json", "random/large-n8.json"):
        (bundled / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "instances" / rel, bundled / rel)
    rep = run_demo(bundled, tmp_path / "out", time_limit=20, search_budget=6, validate_budget=4)
    assert [b.file for b in rep.instances] == ["random/large-n8.json", "random/mixed-n10.json"]
    assert isinstance(rep, DemoReport) and isinstance(rep.search, SearchSummary)
    assert all(isinstance(b, BundledInstance) for b in rep.instances) and rep.all_reproducible
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.worst = None
    d = rep.to_dict()
    assert set(d) == {"instances", "all_reproducible", "comparisons", "traces", "worst",
                      "search", "validation", "pictures"}  # fmt: skip
    assert d["search"]["evaluations"] == rep.search.evaluations
    lines = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: lines.append(" ".join(map(str, a))))
    _print_report(rep)
    text = "\n".join(lines)
    assert "Worst ratio to Opt" in text and rep.worst.policy in text and "Pictures:" in text


def test_demo_help_says_what_the_demo_does(cli):
    # `kvopt demo --help` said "Regenerate and check the bundled instances, print their bounds."
    # while the demo also runs every policy against Opt, a search, two validations and pictures
    r = cli("demo", "--help")
    assert r.code == 0
    text = " ".join(r.out.split())
    for words in ("against the proved Opt", "adversarial search", "validations of two claims",
                  "pictures in --out", "getting-started.md"):  # fmt: skip
        assert words in text.replace("getting- started", "getting-started"), words
    assert "--time-limit S" in text and "--search-budget N" in text


def test_simulate_divides_by_the_better_of_area_and_processing(cli):
    # the walkthrough: mcsf on the 40 Azure requests printed "(area bound 21910, ratio <=
    # 172.5)" although the processing bound 3780133 equals its total (the demo: /LB 1.000)
    trace = REPO / "instances" / "traces" / "azure-n40-M4096.json"
    r = cli("simulate", trace, "--policy", "mcsf")
    assert r.code == 0, r.err
    assert "total      3780133   (processing bound 3780133, ratio <= 1)" in r.out
    r = cli("simulate", REPO / "instances" / "random" / "mixed-n10.json", "--policy", "fcfs")
    assert "(area bound 109, ratio <= 2.752)" in r.out


def test_simulate_says_where_it_wrote_on_stdout_as_solve_does(cli, tmp_path):
    # the walkthrough: `kvopt simulate … --out f.json` printed "schedule written to" on stderr
    # and `kvopt solve … --out` on stdout
    inst = REPO / "instances" / "random" / "mixed-n10.json"
    r = cli("simulate", inst, "--policy", "fcfs", "--out", tmp_path / "s.json")
    assert r.code == 0 and f"schedule   written to {tmp_path / 's.json'}" in r.out
    assert "written to" not in r.err
    r = cli("solve", inst, "--time-limit", "10", "--out", tmp_path / "o.json")
    assert r.code == 0 and f"schedule  written to {tmp_path / 'o.json'}" in r.out


def test_no_option_shows_argparses_default_value_name():
    """A value is named ('--dask-timeout S'), never by the option in capitals
    ('--dask-timeout DASK_TIMEOUT'), in every command and subcommand (issue 55 walkthrough)."""
    import argparse

    from kvopt.cli import build_parser

    def actions(parser, path):
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, child in a.choices.items():
                    yield from actions(child, f"{path} {name}")
            elif a.option_strings and a.nargs != 0:
                yield path, a

    unnamed = [(path, a.option_strings) for path, a in actions(build_parser(), "kvopt")
               if a.metavar is None and a.choices is None]  # fmt: skip
    assert unnamed == []


def test_validate_takes_claim_as_search_spells_it(cli):
    """`kvopt validate --claim ID` was argparse's 'ambiguous option' (--claims, --claim-id,
    --claims-file); it is --claims, as `kvopt search --claim` is spelled."""
    r = cli("validate", "--claim", "no-such-claim", "--budget", "1")
    assert r.code == 2 and "ambiguous" not in r.err and "no-such-claim" in r.err


def test_an_invalid_schedule_of_another_instance_says_whose_it_is(cli, pair):
    """A schedule made for another instance lists its errors and says which instance it names
    (issue 55 walkthrough: `kvopt check tiny.json opt.json` with opt.json made for `hand`)."""
    inst, ip, tmp = pair
    other = Instance.from_arrays(8, [2, 3], [3, 2], name="hand")
    sp = tmp / "s.json"
    save_schedule(Schedule.from_starts(other, [0, 0]), sp, other.n)
    r = cli("check", ip, sp)
    assert r.code == 1 and "the schedule names instance 'hand'" in r.out and "'pair'" in r.out
    save_schedule(Schedule.from_starts(inst, [0, 0]), sp, inst.n)
    r = cli("check", ip, sp)
    assert r.code == 1 and "names instance" not in r.out  # its own instance: no such line


@pytest.mark.parametrize(
    "args, close",
    [
        (["validate", "--claims", "greedy-are", "--budget", "1"], "greedy-area"),
        (["gen", "random", "--seed", "1", "--param", "mem=20"], "memory"),
        (["gen", "randon", "--seed", "1"], "random"),
        (["simulate", "{inst}", "--policy", "fcf"], "fcfs"),
        (["simulate", "{inst}", "--policy", "alpha-protect", "--param", "alhpa=0.5"], "alpha"),
        (["simulate", "{inst}", "--policy", "alpha-protect", "--param", "zzz=1"], None),
        (["simulate", "{bad}", "--policy", "fcfs"], "arrival"),
    ],
)
def test_an_unknown_name_close_to_a_known_one_is_named(cli, pair, args, close):
    """Bad input names the close name ("; did you mean 'greedy-area'?") after the list of the
    known ones, in one line, exit 2 (issue 55 walkthrough: `--claims greedy-are`, the job key
    `arival`, `--param mem=20` listed the valid names only)."""
    inst, ip, tmp = pair
    bad = tmp / "bad.json"
    bad.write_text('{"format": "kvopt.instance", "version": 1, "memory": 10, '
                   '"jobs": [{"prompt": 1, "response": 2, "arival": 0}]}')  # fmt: skip
    r = cli(*[a.format(inst=ip, bad=bad) for a in args])
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1, r.err
    if close is None:  # nothing close: no guess
        assert "did you mean" not in r.err
    else:
        assert r.err.rstrip().endswith(f"did you mean {close!r}?"), r.err


def test_demo_hand_made_instance_is_neither_reproducible_nor_a_failure(tmp_path):
    """An instance whose meta names no generator (made by hand) is reported as 'hand', not as a
    failed regeneration; a generated one that no longer regenerates still fails."""
    import json

    from kvopt.demo import check_bundled
    from kvopt.generators import generate

    hand = {"format": "kvopt.instance", "version": 1, "name": "h", "memory": 10,
            "jobs": [{"prompt": 1, "response": 2}], "meta": {"note": "by hand"}}  # fmt: skip
    (tmp_path / "hand.json").write_text(json.dumps(hand))
    gen = generate("random", 1, n=4, memory=20).to_dict()
    gen["jobs"][0]["response"] += 1  # no longer what its seed gives
    (tmp_path / "gen.json").write_text(json.dumps(gen))
    got = {b.file: b.reproducible for b in check_bundled(tmp_path)}
    assert got == {"hand.json": None, "gen.json": False}
