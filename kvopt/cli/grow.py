"""``kvopt grow RECORD [--steps K] [--directions D,…] [--time-limit S] [--out DIR] [--json]``.

The growth sweep of a record (SPEC §9, :func:`kvopt.campaign.growth.grow`):
each direction doubles the record's instance ``K`` times, every point is
evaluated with certified ratios and saved as a record in ``DIR``, with
``growth.json`` and the plot ``growth.png``.  ``--json`` prints one object:
``policy``, ``directions`` (each ``name``, ``steps``, ``exponent``,
``verdict``, and ``stopped`` when it ended early), ``best_direction``,
``verdict``.  Progress goes to stderr.
"""

from __future__ import annotations

from .common import emit_json, nonneg_int, positive_float, positive_int


def add_parser(sub) -> None:
    p = sub.add_parser(
        "grow",
        help="growth sweep of a record: is the ratio bounded or growing along a family?",
        description="Double the record's instance along each direction (memory, count, count:T, "
        "memory-count, memory:T+U; T a type index, the types being the runs of identical "
        "consecutive jobs), evaluate every point with certified ratios, save each as a record, "
        "fit the exponent of the certified ratio against the factor and give a verdict "
        "(grows, bounded, unclear).",
    )
    p.add_argument("record", help="search record (kvopt.record)")
    p.add_argument("--steps", type=positive_int("--steps"), default=4, metavar="K",
                   help="doublings per direction (default 4; 'grows' needs at least 4)")  # fmt: skip
    p.add_argument("--directions", metavar="D,…",
                   help="directions to sweep (default: every one that applies)")  # fmt: skip
    p.add_argument("--time-limit", type=positive_float("--time-limit"), default=10.0, metavar="S",
                   help="seconds per exact solve (default 10)")  # fmt: skip
    p.add_argument("--certify", type=nonneg_int("--certify"), default=2, metavar="K",
                   help="directions (screened best by ALG/LB) whose points get exact solves "
                   "(default 2)")  # fmt: skip
    p.add_argument("--out", metavar="DIR", help="folder of the point records and the plot "
                   "(default kvopt-grow/RECORD-NAME)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..campaign.growth import grow

    res = grow(
        args.record,
        steps=args.steps,
        directions=args.directions,
        time_limit=args.time_limit,
        certify=args.certify,
        out=args.out,
        progress=True,
    )
    if args.json:
        emit_json(res.to_dict())
    else:
        print(format_result(res))
    return 0


def format_result(res) -> str:
    from ..texttable import Column, render_table

    lines = [f"kvopt grow {res.source} ({res.policy}): verdict {res.verdict}; best direction "
             f"{res.best_direction}; {res.exact_solves} exact solves, {res.seconds:.1f}s"]  # fmt: skip
    cols = [Column(h) for h in ("direction", "verdict", "exponent", "certified ratio by factor")]
    rows = []
    for d in res.directions:
        ratios = " ".join(f"x{p.factor}:{p.ratio_certified:.3f}" for p in d.steps)
        rows.append([d.name, str(d.verdict), "-" if d.exponent is None else f"{d.exponent:.3f}",
                     ratios + (f" ({d.stopped})" if d.stopped else "")])  # fmt: skip
    lines.extend(render_table(cols, rows, indent="  ", rule="columns"))
    lines.append(f"records and {res.plot or 'no plot'} in {res.out}")
    return "\n".join(lines)
