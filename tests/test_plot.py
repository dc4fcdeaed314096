"""``kvopt plot`` and kvopt.plotting: files are written, inputs are checked."""

from __future__ import annotations

import json

import pytest

from kvopt.cli import main
from kvopt.instance import Instance, save_instance
from kvopt.plotting import plot_ratios, schedule_figure
from kvopt.schedule import Attempt, Schedule, checked, save_schedule

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def toy(tmp_path):
    inst = Instance.from_arrays(20, [3, 2, 4, 1, 5], [4, 6, 3, 8, 2], name="toy")
    pol = Schedule(
        (
            Attempt(0, 0, 4, True),
            Attempt(1, 0, 3, False),
            Attempt(2, 0, 3, True),
            Attempt(1, 4, 6, True),
            Attempt(3, 3, 8, True),
            Attempt(4, 10, 2, True),
        ),
        20,
        "toy",
        "policy",
    )
    opt = Schedule.from_starts(inst, [0, 4, 10, 0, 13], producer="opt")
    checked(inst, pol)
    checked(inst, opt)
    ip, sp, op = tmp_path / "toy.json", tmp_path / "pol.json", tmp_path / "opt.json"
    save_instance(inst, ip)
    save_schedule(pol, sp, inst.n)
    save_schedule(opt, op, inst.n)
    return inst, pol, opt, ip, sp, op


def test_side_by_side_png(toy, tmp_path, capsys):
    inst, pol, opt, ip, sp, op = toy
    out = tmp_path / "pic.png"
    assert main(["plot", str(sp), "--instance", str(ip), "--vs", str(op), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG


def test_figure_content(toy):
    inst, pol, opt, *_ = toy
    fig = schedule_figure(inst, [pol, opt], ["policy", "opt"])
    axes = fig.get_axes()
    assert len(axes) == 4  # memory and Gantt for each schedule
    mem, gantt = axes[0], axes[2]
    # the budget line is drawn at M
    assert any(list(line.get_ydata()) == [20, 20] for line in mem.get_lines())
    # one hatched (killed) bar in the policy's Gantt chart, none in Opt's
    hatched = [p for p in gantt.patches if p.get_hatch()]
    assert len(hatched) == pol.kills == 1
    assert not [p for p in axes[3].patches if p.get_hatch()]
    # shared axis limits so the two pictures compare directly
    assert axes[0].get_xlim() == axes[1].get_xlim()
    assert "ΣC = 40" in mem.get_title()


def test_record_embeds_instance(toy, tmp_path, capsys):
    """A search record (SPEC §8) carries its instance: drawn as the policy beside the clairvoyant one."""
    from kvopt.record import make_record, save_record
    from kvopt.simulation import simulate

    inst, pol, opt, *_ = toy
    res = simulate(inst, "fcfs")
    rec = make_record(inst, "fcfs", {}, None, "total", res.schedule, opt, 1, "feasible")
    rp = tmp_path / "rec.json"
    save_record(rec, rp)
    assert main(["plot", str(rp), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["label"] for s in out["schedules"]] == ["fcfs", "best clairvoyant (UB)"]
    assert (tmp_path / "rec.png").read_bytes()[:8] == PNG


def test_bad_inputs_exit_2(toy, tmp_path, capsys):
    inst, pol, opt, ip, sp, op = toy
    assert main(["plot", str(sp)]) == 2  # no instance
    assert "--instance" in capsys.readouterr().err
    other = tmp_path / "other.json"
    save_instance(Instance.from_arrays(30, [1], [1]), other)
    assert main(["plot", str(sp), "--instance", str(other)]) == 2
    assert "memory" in capsys.readouterr().err


def test_invalid_schedule_drawn_with_warning(toy, tmp_path, capsys):
    inst, pol, opt, ip, sp, op = toy
    bad = Schedule.from_starts(inst, [0, 0, 0, 0, 0], producer="bad")  # over memory
    bp = tmp_path / "bad.json"
    save_schedule(bad, bp, inst.n)
    out = tmp_path / "bad.png"
    assert main(["plot", str(bp), "--instance", str(ip), "--out", str(out)]) == 0
    assert "fails the checker" in capsys.readouterr().err
    assert out.exists()


def test_ratio_chart(tmp_path):
    out = tmp_path / "r.png"
    plot_ratios({"a": {"fcfs": 1.4, "mcsf": 1.0, "rect": None}, "b": {"fcfs": 1.2}}, out)
    assert out.read_bytes()[:8] == PNG


def test_arrivals_are_marked(toy):
    """Issue 55: with arrivals, each job's arrival round is a tick on its Gantt row, dotted until
    its first start; an instance without arrivals gets neither."""
    inst, pol, opt, *_ = toy
    late = Instance.from_arrays(20, [3, 2, 4], [4, 6, 3], [0, 2, 5], name="late")
    sched = checked(late, Schedule.from_starts(late, [0, 4, 5], producer="p"))
    gantt = schedule_figure(late, [sched]).get_axes()[1]
    ticks = [c for c in gantt.collections if c.get_label() == "arrival"]
    assert len(ticks) == 1
    assert [tuple(xy) for xy in ticks[0].get_offsets()] == [(0, 0), (2, 1), (5, 2)]
    waits = [c for c in gantt.collections if c.get_label() == "waiting since arrival"]
    assert len(waits) == 1 and len(waits[0].get_segments()) == 1  # job 1 waits from 2 to 4
    assert [t.get_text() for t in gantt.get_legend().get_texts()] == [
        "waiting since arrival", "arrival"]  # fmt: skip
    plain = schedule_figure(inst, [pol]).get_axes()[1]
    assert not [c for c in plain.collections if c.get_label() in ("arrival",)]
    # no job waits: the legend has no "waiting since arrival" (issue 55 walkthrough)
    prompt = checked(late, Schedule.from_starts(late, [0, 2, 5], producer="p"))
    gantt = schedule_figure(late, [prompt]).get_axes()[1]
    assert [t.get_text() for t in gantt.get_legend().get_texts()] == ["arrival"]


def test_a_figure_shows_itself_in_a_notebook(toy):
    """kvopt draws with the object API; Jupyter shows such a figure only through _repr_png_
    (issue 55: ``fig = kvopt.plot_schedule(…); fig`` printed ``<Figure size …>``)."""
    import kvopt

    inst, pol, opt, *_ = toy
    fig = kvopt.plot_schedule(inst, pol, opt)
    png = fig._repr_png_()
    assert png[:8] == PNG and len(png) > 10_000
