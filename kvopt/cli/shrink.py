"""``kvopt shrink RECORD --min-ratio R [--out FILE] [--json]`` — make a worst case small.

Delta debugging (:func:`kvopt.campaign.shrink`): removes jobs and lowers
numbers (with ``--space kind=typed`` also removes, halves and merges job
types) while the certified ratio stays ≥ ``R``; writes the new record
(default: ``RECORD`` with ``-shrunk`` before ``.json``).  JSON: the new
record's ``n``, ``memory``, ``ratio_certified``, ``ratio_optimistic``,
``opt_status``, ``record`` and the shrinking effort.
"""

from __future__ import annotations

import os

from .common import emit_json, positive_float


def add_parser(sub) -> None:
    p = sub.add_parser(
        "shrink",
        help="shrink a search record while its certified ratio stays >= R",
        description="Remove jobs and lower numbers (delta debugging) while the certified ratio "
        "stays at least --min-ratio; write the smaller record.",
    )
    p.add_argument("record", help="search record (kvopt.record)")
    p.add_argument("--min-ratio", type=positive_float("--min-ratio"), required=True, metavar="R",
                   help="keep shrinking while the certified ratio (ALG/UB) stays >= R; "
                   "at most the record's own certified ratio")  # fmt: skip
    p.add_argument("--out", metavar="FILE", help="output record (default RECORD-shrunk.json)")
    p.add_argument("--time-limit", type=positive_float("--time-limit"), default=10.0, metavar="S",
                   help="seconds per exact solve (default 10)")  # fmt: skip
    p.add_argument("--seconds", type=positive_float("--seconds"), default=None, metavar="S",
                   help="stop shrinking after S seconds")  # fmt: skip
    p.add_argument("--space", action="append", default=[], metavar="kind=KIND",
                   help="kind=typed also removes, halves and merges job types (SPEC §9)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..campaign import shrink
    from ..params import parse_params
    from ..record import load_record

    rec = load_record(args.record)
    out = args.out or (os.path.splitext(args.record)[0] + "-shrunk.json")
    new = shrink(
        rec,
        min_ratio=args.min_ratio,
        out=out,
        exact_time_limit=args.time_limit,
        seconds=args.seconds,
        progress=None if not args.json else False,
        space=parse_params(args.space, option="--space") or None,
    )
    if args.json:
        emit_json(
            {
                "record": out,
                "n": new.instance.n,
                "memory": new.instance.memory,
                "ratio_certified": new.ratio_certified,
                "ratio_optimistic": new.ratio_optimistic,
                "opt_status": new.opt_status,
                "from": {
                    "n": rec.instance.n,
                    "memory": rec.instance.memory,
                    "ratio_certified": rec.ratio_certified,
                },  # fmt: skip
                "found_by": dict(new.found_by),
            }
        )
    else:
        print(
            f"shrunk n {rec.instance.n} -> {new.instance.n}, M {rec.instance.memory} -> "
            f"{new.instance.memory}; certified ratio {new.ratio_certified:.4f} "
            f"(optimistic {new.ratio_optimistic:.4f}, {new.opt_status}); wrote {out}"
        )
    return 0
