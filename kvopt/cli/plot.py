"""``kvopt plot SCHEDULE_OR_RECORD [--vs SCHEDULE] [--instance FILE] [--labels A[,B]]
[--out FILE.png]``.

Memory over time (each attempt's footprint stacked, killed attempts hatched,
the budget ``M`` drawn) above a Gantt chart of the attempts.  ``--vs`` draws a
second schedule (typically Opt's, from ``kvopt solve --out``) beside the first
with the same axis limits.

A search campaign folder (``kvopt search --out DIR``) gives ``DIR/progress.png``
(best certified and optimistic ratio so far against evaluations and seconds) and
``DIR/best.png`` (the best record's schedule beside the clairvoyant one).

Accepted inputs: a schedule file (``kvopt.schedule``, as written by ``simulate``
and ``solve``), the ``--json`` output of ``simulate``/``solve`` (an object with a
``schedule`` member), or a search record (``kvopt.record``), whose embedded
instance is used and whose reference schedule is drawn beside the policy's
unless ``--vs`` is given (SPEC §8: ``schedule`` beside ``opt_schedule``).  The instance comes from ``--instance`` (required
unless a record embeds it).  The output defaults to the input path with the
suffix ``.png``.  A schedule that fails the checker is still drawn (so the
violation can be seen), with a warning on stderr and ``[INVALID]`` in its title.
Job 0 is the top row of every Gantt chart.  A panel is named by its policy; an exact
solve's by :func:`kvopt.plotting.readable_label` (``Opt (proved; …)`` from ``solve --json``
when it proved optimality); ``--labels`` names the panels (one name per schedule drawn, else
exit status 2).
"""

from __future__ import annotations

import os
import sys

from ..errors import InputError
from ..fileio import read_json
from ..instance import Instance, load_instance
from ..schedule import FORMAT as SCHEDULE_FORMAT
from ..schedule import Schedule, check_schedule
from .common import emit_json

RECORD_FORMAT = "kvopt.record"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "plot",
        help="memory-over-time and Gantt pictures of schedules",
        description=(
            "Draw memory over time (attempts stacked, killed attempts hatched, budget M) above a "
            "Gantt chart; --vs draws a second schedule beside the first on the same axes."
        ),
    )
    p.add_argument(
        "schedule",
        help="schedule JSON file, simulate/solve --json output, record, or a search campaign folder",
    )
    p.add_argument("--vs", metavar="SCHEDULE", help="second schedule drawn beside the first")
    p.add_argument(
        "--instance", metavar="FILE", help="instance JSON file (required unless a record holds it)"
    )
    p.add_argument("--out", metavar="FILE.png", help="output image (default: input with .png)")
    p.add_argument("--title", help="figure title")
    p.add_argument("--labels", metavar="A[,B]",
                   help="panel names, comma-separated, one per schedule drawn (default: the "
                   "policy, 'Opt (proved; …)' for a solve proved optimal, the solver otherwise)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _solver_label(data: dict) -> str | None:
    """``solve --json``'s panel name: ``Opt (proved; auto, route bnb)`` when proved optimal."""
    from ..plotting import readable_label

    solver = data.get("solver")
    if not solver:
        return None
    how = readable_label(f"exact:{solver}")[len("exact solver (") : -1]
    if data.get("status") == "optimal":
        return f"Opt (proved; {how})"
    return f"best found by the exact solver ({how}; not proved optimal)"


def _labels(text: str | None, k: int) -> list[str] | None:
    """``--labels A,B``: one name per schedule drawn (bad input: :class:`InputError`)."""
    if text is None:
        return None
    names = [x.strip() for x in text.split(",")]
    if len(names) != k or not all(names):
        raise InputError(f"needs {k} non-empty name(s), one per schedule drawn, got {text!r}",
                         source="--labels")  # fmt: skip
    return names


def _read(path: str) -> tuple[list[tuple[str, Schedule]], Instance | None]:
    """Schedules in a file (with a label each) and the instance it embeds, if any."""
    from ..plotting import readable_label

    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError("top level must be a JSON object", source=path)
    fmt = data.get("format")
    if fmt == SCHEDULE_FORMAT:
        s = Schedule.from_dict(data, source=path)
        return [(readable_label(s.producer) or os.path.basename(path), s)], None
    if fmt == RECORD_FORMAT:
        from ..record import Record

        rec = Record.from_dict(data, source=path)
        return rec.labelled_schedules(), rec.instance
    if fmt is None and isinstance(data.get("schedule"), dict):
        s = Schedule.from_dict(data["schedule"], source=f"{path}: schedule")
        label = data.get("policy") or _solver_label(data) or readable_label(s.producer)
        label = label or os.path.basename(path)
        return [(str(label), s)], None
    raise InputError(
        f"must be {SCHEDULE_FORMAT!r}, {RECORD_FORMAT!r} or a simulate/solve --json output, "
        f"got format {fmt!r}",
        field="format",
        source=path,
    )


def _plot_campaign(args) -> int:
    """``kvopt plot DIR``: the campaign's best-so-far curves (and its best record beside Opt)."""
    import json

    from ..campaign import read_history
    from ..plotting import plot_best_so_far

    folder = args.schedule
    log = os.path.join(folder, "evaluations.jsonl")
    if not os.path.exists(log):
        raise InputError("folder holds no search campaign (evaluations.jsonl)", source=folder)
    rows = read_history(folder)
    if not rows:
        raise InputError("the campaign has no evaluation yet", source=log)
    head = {}
    try:
        head = json.loads(open(os.path.join(folder, "campaign.json")).read())
    except (OSError, ValueError):
        pass
    title = (
        f"search {head.get('policy', '?')} ({head.get('strategy', '?')}, seed {head.get('seed', '?')}, "
        f"objective {head.get('objective', 'total')}): best ratio so far"
    )
    out = args.out or os.path.join(folder, "progress.png")
    plot_best_so_far(rows, out, title=args.title or title)
    written = [out]
    best = os.path.join(folder, "best.json")
    if os.path.exists(best) and not args.out:
        from ..plotting import plot_schedules
        from ..record import load_record

        rec = load_record(best)
        p = os.path.join(folder, "best.png")
        labels, schedules = zip(*rec.labelled_schedules())
        plot_schedules(
            rec.instance,
            list(schedules),
            p,
            list(labels),
            title=f"{rec.policy} on its worst case found (n={rec.instance.n}, M={rec.instance.memory}): "
            f"ratio {rec.ratio_certified:.3f}",
        )
        written.append(p)
    if args.json:
        emit_json({"out": written, "evaluations": len(rows)})
    else:
        for p in written:
            print(f"wrote {p}")
    return 0


def run(args) -> int:
    if os.path.isdir(args.schedule):
        return _plot_campaign(args)
    items, embedded = _read(args.schedule)
    if args.instance:
        inst = load_instance(args.instance)
    elif embedded is not None:
        inst = embedded
    else:
        raise InputError("an instance is needed (the file does not embed one)", source="--instance")
    if args.vs:
        vs_items, _ = _read(args.vs)
        items = [items[0], vs_items[0]]
    items = items[:2]
    names = _labels(args.labels, len(items))
    if names:
        items = [(n, s) for n, (_, s) in zip(names, items)]
    for label, s in items:
        if s.memory != inst.memory:
            raise InputError(
                f"schedule {label!r} has memory {s.memory}, the instance has {inst.memory}",
                field="memory",
                source=args.schedule,
            )
        bad = [a.job for a in s.attempts if not 0 <= a.job < inst.n]
        if bad:
            raise InputError(
                f"schedule {label!r} names job {bad[0]}, the instance has {inst.n} jobs",
                field="attempts",
                source=args.schedule,
            )
    checks = [check_schedule(inst, s) for _, s in items]
    for (label, _), res in zip(items, checks):
        if not res.valid:
            sys.stderr.write(
                f"kvopt plot: warning: schedule {label!r} fails the checker "
                f"({res.errors[0].message}); drawing it anyway\n"
            )
    out = args.out or (os.path.splitext(args.schedule)[0] + ".png")
    from ..plotting import plot_schedules

    plot_schedules(inst, [s for _, s in items], out, [lab for lab, _ in items], title=args.title)
    if args.json:
        emit_json(
            {
                "out": out,
                "schedules": [
                    {"label": lab, "valid": r.valid, "objective": r.objectives}
                    for (lab, _), r in zip(items, checks)
                ],
            }
        )
    else:
        print(f"wrote {out}")
    return 0
