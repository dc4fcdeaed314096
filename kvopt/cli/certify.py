"""``kvopt certify RECORD… [--time-limit S] [--threads K] [--json]`` — tighten records' brackets.

Each record's bracket (SPEC §8) is tightened by the cheap bounds and one exact
solve of at most ``S`` seconds (:func:`kvopt.campaign.certify.certify_file`);
a record whose bracket got tighter is rewritten atomically with its old
bracket kept in ``history``.  Prints each record's bracket before and after;
``--json``: ``{"records": [{"record", "before", "after", "tighter",
"seconds", "time_limit"}, …], "seconds"}``.  Every file is read and checked
before the first solve: a file that is not a record, a record whose schedules
fail the checker, or a negative time limit exits 2 with one line on stderr,
and no file is written.
"""

from __future__ import annotations

import time

from .common import emit_json, positive_int


def add_parser(sub) -> None:
    from ..campaign.certify import CERTIFY_SECONDS, CERTIFY_THREADS

    p = sub.add_parser(
        "certify",
        help="tighten records' brackets (LB <= Opt <= UB) with an exact solve",
        description="Tighten each record's bracket with the cheap bounds and an exact solve; "
        "rewrite the record atomically when it gets tighter (the old bracket kept in its "
        "history); print the brackets before and after.",
    )
    p.add_argument("records", nargs="+", metavar="RECORD", help="search record (kvopt.record)")
    p.add_argument("--time-limit", type=float, default=CERTIFY_SECONDS, metavar="S",
                   help=f"seconds of exact solving per record (default {CERTIFY_SECONDS:g}; "
                   "0: the cheap bounds only)")  # fmt: skip
    p.add_argument("--threads", type=positive_int("--threads"), default=CERTIFY_THREADS,
                   metavar="K", help=f"solver threads (default {CERTIFY_THREADS})")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..campaign.certify import certify_files

    t0 = time.monotonic()
    out = certify_files(args.records, time_limit=args.time_limit, threads=args.threads,
                        say=None if args.json else print)  # fmt: skip
    if args.json:
        emit_json({"records": [c.to_dict() for c in out],
                   "seconds": round(time.monotonic() - t0, 3)})  # fmt: skip
    return 0
