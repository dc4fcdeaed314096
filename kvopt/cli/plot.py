"""``kvopt plot SCHEDULE_OR_RECORD [--vs SCHEDULE] [--instance FILE] [--out FILE.png]``.

Memory over time (each attempt's footprint stacked, killed attempts hatched,
the budget ``M`` drawn) above a Gantt chart of the attempts.  ``--vs`` draws a
second schedule (typically Opt's, from ``kvopt solve --out``) beside the first
with the same axis limits.

Accepted inputs: a schedule file (``kvopt.schedule``, as written by ``simulate``
and ``solve``), the ``--json`` output of ``simulate``/``solve`` (an object with a
``schedule`` member), or a search record (``kvopt.record``), whose embedded
instance is used and whose reference schedule is drawn beside the policy's
unless ``--vs`` is given (SPEC §8: ``schedule`` beside ``opt_schedule``).  The instance comes from ``--instance`` (required
unless a record embeds it).  The output defaults to the input path with the
suffix ``.png``.  A schedule that fails the checker is still drawn (so the
violation can be seen), with a warning on stderr and ``[INVALID]`` in its title.
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
    p.add_argument("schedule", help="schedule JSON file, simulate/solve --json output, or record")
    p.add_argument("--vs", metavar="SCHEDULE", help="second schedule drawn beside the first")
    p.add_argument(
        "--instance", metavar="FILE", help="instance JSON file (required unless a record holds it)"
    )
    p.add_argument("--out", metavar="FILE.png", help="output image (default: input with .png)")
    p.add_argument("--title", help="figure title")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _read(path: str) -> tuple[list[tuple[str, Schedule]], Instance | None]:
    """Schedules in a file (with a label each) and the instance it embeds, if any."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError("top level must be a JSON object", source=path)
    fmt = data.get("format")
    if fmt == SCHEDULE_FORMAT:
        s = Schedule.from_dict(data, source=path)
        return [(s.producer or os.path.basename(path), s)], None
    if fmt == RECORD_FORMAT:
        from ..record import Record

        rec = Record.from_dict(data, source=path)
        opt_label = "Opt" if rec.optimal else "best clairvoyant (UB)"
        return [
            (f"{rec.policy}: {rec.objective} {rec.alg}", rec.schedule),
            (f"{opt_label}: {rec.ub} (ratio {rec.ratio_certified:.3f})", rec.opt_schedule),
        ], rec.instance
    if fmt is None and isinstance(data.get("schedule"), dict):
        s = Schedule.from_dict(data["schedule"], source=f"{path}: schedule")
        label = data.get("policy") or data.get("solver") or s.producer or os.path.basename(path)
        return [(str(label), s)], None
    raise InputError(
        f"must be {SCHEDULE_FORMAT!r}, {RECORD_FORMAT!r} or a simulate/solve --json output, "
        f"got format {fmt!r}",
        field="format",
        source=path,
    )


def run(args) -> int:
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
                    {"label": lab, "valid": r.valid, "objective": r.objective}
                    for (lab, _), r in zip(items, checks)
                ],
            }
        )
    else:
        print(f"wrote {out}")
    return 0
