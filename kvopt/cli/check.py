"""``kvopt check INSTANCE SCHEDULE [--json]`` and ``kvopt check RECORD [--json]`` — the checker.

A schedule is re-checked against its instance (SPEC §1).  A search record
(``format: kvopt.record``, SPEC §8) is re-checked as a whole with
:func:`kvopt.record.verify_record`: both schedules pass the checker on the
record's inline instance, ``alg`` and ``ub`` are their objectives, ``lb ≤ ub``
(equal when ``optimal``), the ratios are ``alg/ub`` and ``alg/lb``, and
re-simulating the policy with its parameters and seed gives the same
schedule.  A record may be given alone or after an instance file (which must
then be the record's instance).  ``--no-replay`` checks all but the replay and
says so; a user's policy is then not loaded, so a record whose policy file
changed or went missing is still checked (JSON ``replayed: false`` and
``note``).

Exit status: 0 valid, 1 the schedule or record breaks a rule (every broken
rule is listed), 2 unreadable or malformed input.
"""

from __future__ import annotations

from ..errors import InputError
from ..fileio import read_json
from ..instance import load_instance
from ..record import Record, is_record_data, replay_skipped, verify_record
from ..schedule import FORMAT as SCHEDULE_FORMAT
from ..schedule import Schedule, check_schedule, read_columnar
from .common import EXIT_FAIL, emit_json


def add_parser(sub) -> None:
    p = sub.add_parser(
        "check",
        help="re-check a schedule against its instance, or a whole search record",
        description="Re-check a schedule against SPEC §1, or a search record against SPEC §8 "
        "(both schedules, alg, ub, lb, the ratios, and a replay of the policy).",
    )
    p.add_argument("instance", metavar="INSTANCE_OR_RECORD", help="instance JSON file, or a record")
    p.add_argument("schedule", nargs="?", metavar="SCHEDULE_OR_RECORD",
                   help="schedule JSON file or search record")  # fmt: skip
    p.add_argument("--no-replay", action="store_true",
                   help="records: check all but the replay (the policy is not re-run or "
                   "loaded: a changed or missing policy file is no error)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _instance_comes_first(first: str, second: str) -> None:
    """Name the usage when the first of two files is not an instance: a record given before
    another file, or a schedule before its instance (``kvopt check opt.json inst.json``)."""
    data = read_json(first)
    fmt = data.get("format") if isinstance(data, dict) else None
    if is_record_data(data):
        raise InputError(
            f"is a record: check it alone (kvopt check {first}) or after its instance "
            f"(kvopt check INSTANCE {first})",
            field="format",
            source=first,
        )
    if fmt == SCHEDULE_FORMAT:
        raise InputError(
            f"is a schedule: the instance comes first (kvopt check INSTANCE {first}; "
            f"is {second} its instance?)",
            field="format",
            source=first,
        )


def run(args) -> int:
    if args.schedule is None:
        data = read_json(args.instance)
        if not is_record_data(data):
            raise InputError(
                "a single file must be a record (kvopt.record); give INSTANCE SCHEDULE otherwise",
                field="format",
                source=args.instance,
            )
        return _check_record(Record.from_dict(data, source=args.instance), args)
    _instance_comes_first(args.instance, args.schedule)
    inst = load_instance(args.instance)
    # a schedule as save_schedule writes it: its attempts read as columns (issue 54)
    sched = read_columnar(args.schedule)
    if sched is None:
        data = read_json(args.schedule)
        if is_record_data(data):
            rec = Record.from_dict(data, source=args.schedule)
            if (rec.instance.memory, rec.instance.jobs) != (inst.memory, inst.jobs):
                raise InputError(
                    f"the record's instance differs from {args.instance}", field="instance",
                    source=args.schedule,
                )  # fmt: skip
            return _check_record(rec, args)
        fmt = data.get("format") if isinstance(data, dict) else None
        if fmt != SCHEDULE_FORMAT:
            raise InputError(
                f"must be {SCHEDULE_FORMAT!r} or 'kvopt.record', got {fmt!r}",
                field="format",
                source=args.schedule,
            )
        sched = Schedule.from_dict(data, source=args.schedule)
    r = check_schedule(inst, sched)
    if args.json:
        emit_json(
            {
                "valid": r.valid,
                "errors": [e.to_dict() for e in r.errors],
                "objective": r.objectives,
                "peak_memory": r.peak_memory,
            }
        )
    elif r.valid:
        obj = r.objectives or {}
        print(
            f"valid: total_completion={obj.get('total_completion')} "
            f"makespan={obj.get('makespan')} peak_memory={r.peak_memory}/{inst.memory}"
        )
    else:
        print(f"INVALID: {len(r.errors)} error(s)")
        for e in r.errors:
            print(f"  [{e.rule}] {e.message}")
        if sched.instance and inst.name and sched.instance != inst.name:
            print(f"  (the schedule names instance {sched.instance!r}, and {args.instance} is "
                  f"{inst.name!r}: is it the schedule's instance?)")  # fmt: skip
    return 0 if r.valid else EXIT_FAIL


def _check_record(rec: Record, args) -> int:
    problems = verify_record(rec, resimulate=not args.no_replay)
    valid = not problems
    note = replay_skipped(rec) if args.no_replay else None
    if args.json:
        objectives = {
            name: check_schedule(rec.instance, s).objectives
            for name, s in (("schedule", rec.schedule), ("opt_schedule", rec.opt_schedule))
        }
        emit_json(
            {
                "valid": valid,
                "kind": "record",
                "errors": [p.to_dict() for p in problems],
                "objective": objectives,
                "record": {"objective": rec.objective, "alg": rec.alg, "ub": rec.ub, "lb": rec.lb},
                "policy": rec.policy,
                "opt_status": rec.opt_status,
                "ratio_certified": rec.ratio_certified,
                "ratio_optimistic": rec.ratio_optimistic,
                "replayed": not args.no_replay,
                "note": note,
            }
        )
        return 0 if valid else EXIT_FAIL
    if valid:
        print(f"valid record: {rec.summary()}")
    else:
        print(f"INVALID record: {len(problems)} problem(s)")
        for p in problems:
            print(f"  [{p.rule}] {p.message}")
        if [p.rule for p in problems] == ["policy"]:  # only the policy's code is in question
            print(f"  (kvopt check {args.schedule or args.instance} --no-replay checks the "
                  "schedules, objectives and bracket without running the policy)")  # fmt: skip
    if note:
        print(f"  {note}")
    return 0 if valid else EXIT_FAIL
