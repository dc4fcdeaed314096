"""``kvopt check INSTANCE SCHEDULE_OR_RECORD [--json]`` — the independent checker.

Exit status: 0 valid, 1 the schedule breaks a rule of SPEC §1, 2 unreadable
or malformed input.  A search record (``format: kvopt.record``) is checked
schedule by schedule; the record's own instance is used when it carries one.
"""

from __future__ import annotations

from ..errors import InputError
from ..fileio import read_json
from ..instance import Instance, load_instance
from ..schedule import FORMAT as SCHEDULE_FORMAT
from ..schedule import Schedule, check_schedule
from .common import EXIT_FAIL, emit_json

RECORD_FORMAT = "kvopt.record"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "check",
        help="re-check a schedule against its instance",
        description="Re-check a schedule (or every schedule in a search record) against SPEC §1.",
    )
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("schedule", help="schedule JSON file or search record")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _schedules(path: str, inst: Instance) -> list[tuple[str, Schedule, Instance]]:
    data = read_json(path)
    fmt = data.get("format") if isinstance(data, dict) else None
    if fmt == SCHEDULE_FORMAT:
        return [("schedule", Schedule.from_dict(data, source=path), inst)]
    if fmt == RECORD_FORMAT:
        rec_inst = inst
        if isinstance(data.get("instance"), dict):
            rec_inst = Instance.from_dict(data["instance"], source=f"{path}: instance")
        out = []
        for key in ("policy_schedule", "reference_schedule"):
            if key in data:
                out.append((key, Schedule.from_dict(data[key], source=f"{path}: {key}"), rec_inst))
        if not out:
            raise InputError("record holds no schedule", field="policy_schedule", source=path)
        return out
    raise InputError(
        f"must be {SCHEDULE_FORMAT!r} or {RECORD_FORMAT!r}, got {fmt!r}",
        field="format",
        source=path,
    )


def run(args) -> int:
    inst = load_instance(args.instance)
    items = _schedules(args.schedule, inst)
    results = [(name, check_schedule(i, s)) for name, s, i in items]
    valid = all(r.valid for _, r in results)
    if args.json:
        if len(results) == 1:
            r = results[0][1]
            emit_json(
                {
                    "valid": r.valid,
                    "errors": [e.to_dict() for e in r.errors],
                    "objective": r.objective,
                    "peak_memory": r.peak_memory,
                }
            )
        else:
            emit_json(
                {
                    "valid": valid,
                    "errors": [
                        dict(e.to_dict(), schedule=name) for name, r in results for e in r.errors
                    ],
                    "objective": {name: r.objective for name, r in results},
                    "schedules": {name: r.to_dict() for name, r in results},
                }
            )
    else:
        for name, r in results:
            label = "" if len(results) == 1 else f"{name}: "
            if r.valid:
                obj = r.objective or {}
                print(
                    f"{label}valid: total_completion={obj.get('total_completion')} "
                    f"makespan={obj.get('makespan')} peak_memory={r.peak_memory}/{inst.memory}"
                )
            else:
                print(f"{label}INVALID: {len(r.errors)} error(s)")
                for e in r.errors:
                    print(f"  [{e.rule}] {e.message}")
    return 0 if valid else EXIT_FAIL
