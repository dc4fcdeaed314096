"""``kvopt grow RECORD_OR_INSTANCE [--policy NAME] [--steps K] [--direction V]… [--directions D,…]
[--find-budget N] [--time-limit S] [--certify-seconds S] [--out DIR] [--json]``.

The growth sweep of SPEC §9 (:func:`kvopt.campaign.growth.grow`): each direction (a named
alias or an exponent vector such as ``M=1,size=1,count:0=0.5``) grows the instance step by
step, every point is evaluated with certified ratios and saved as a record in ``DIR``, with
``growth.json`` and the plot ``growth.png``.  Without a direction the sweep finds the
fastest-growing ones itself (coordinate ascent over the exponent lattice, ``--find-budget``
probes).  ``--json`` prints one object: ``policy``, ``directions`` (each ``name``, ``vector``,
``axis``, ``steps``, ``exponent``, ``verdict``, ``limit`` / ``limit_spread`` /
``bounded_rule`` when bounded, ``stopped`` when it ended early), ``best_direction``,
``verdict``, and ``finder`` when the finder ran.  Every step carries its ``bracket``
(:meth:`kvopt.certify.Bracket.to_dict`).  The points that decide the verdict are certified
at the end by an exact solve of at most ``--certify-seconds`` each (0: none).  Progress goes
to stderr.  ``--seconds`` bounds the whole sweep (default :data:`DEFAULT_SECONDS`: with the defaults a record of at most 10 jobs
ends within 5 minutes on 2 cores; 0: no bound); every point is saved in ``DIR/points/`` as it
is evaluated, and a rerun with the same ``--out`` resumes from them.
"""

from __future__ import annotations

from ..certify import CERTIFY_SECONDS
from .common import POLICY_REF_HELP, emit_json, nonneg_int, positive_float, positive_int

#: The default budget of the whole sweep (``--seconds``): with the other defaults a record of at
#: most 10 jobs ends within 5 minutes on 2 cores (issue 55: the finder's 60 probes, the walks'
#: exact solves and a certify stage of up to a minute per point took more than 10 minutes on a
#: 6-job record of M = 18), with a margin for saving the records and the plot.
DEFAULT_SECONDS = 240.0


def _seconds(text: str) -> float:
    """``--seconds``: a positive number, or 0 for no bound."""
    import argparse

    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seconds must be a number, got {text!r}") from None
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"--seconds must be >= 0 (0: no bound), got {text!r}")
    return v


def add_parser(sub) -> None:
    p = sub.add_parser(
        "grow",
        help="growth sweep: is a policy's ratio bounded or growing along a family?",
        description="Grow a record's instance (or an instance with --policy) along directions "
        "— exponent vectors over M and each type's count, prompt, response and arrival, in "
        "{0, 0.5, 1} per step; the types are the runs of identical consecutive jobs — evaluate "
        "every point with certified ratios, save each as a record, fit the exponent of the "
        "certified ratio per doubling of M (of n when M is fixed) and give a verdict (grows, "
        "bounded with a limit estimate, unclear).  Without --direction/--directions the "
        "fastest-growing directions are found by a search over the exponent lattice.  How long: "
        f"--seconds bounds the whole sweep (default {DEFAULT_SECONDS:g} s, so with the defaults "
        "a record of at most 10 jobs ends within 5 minutes on 2 cores).  Every point is saved "
        "in DIR/points/ as it is evaluated; rerunning with the same --out resumes.",
    )
    p.add_argument("record", metavar="RECORD_OR_INSTANCE",
                   help="search record (kvopt.record) or instance (kvopt.instance, needs --policy)")  # fmt: skip
    p.add_argument("--policy", metavar="NAME|REF",
                   help="the policy to sweep (required with an instance; with a record, its own): "
                   + POLICY_REF_HELP)  # fmt: skip
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="policy parameter (with an instance)")  # fmt: skip
    p.add_argument("--seed", type=nonneg_int("--seed"), default=0, metavar="S",
                   help="seed of a seeded policy (with an instance; default 0)")  # fmt: skip
    p.add_argument("--steps", type=positive_int("--steps"), default=4, metavar="K",
                   help="doublings of the axis per direction (default 4; 'grows' needs at "
                   "least 4)")  # fmt: skip
    p.add_argument("--extra", type=nonneg_int("--extra"), default=6, metavar="K",
                   help="further doublings a direction takes until it is bounded (to settle, or to confirm growth) "
                   "(default 6)")  # fmt: skip
    p.add_argument("--direction", action="append", default=[], metavar="V",
                   help="a direction: an alias (memory, count, count:T, memory-count, memory:T+U) "
                   "or an exponent vector 'M=1,size=1,count:0=0.5' (keys M, count, prompt, "
                   "response, arrival, size, each optionally :T; exponents 0, 0.5, 1); "
                   "repeatable")  # fmt: skip
    p.add_argument("--directions", metavar="D,…",
                   help="named directions, comma-separated (vectors: use --direction)")  # fmt: skip
    p.add_argument("--find-budget", type=positive_int("--find-budget"), default=None,
                   metavar="N", help="probes of the direction finder (default 60)")  # fmt: skip
    p.add_argument("--time-limit", type=positive_float("--time-limit"), default=10.0, metavar="S",
                   help="seconds per exact solve (default 10)")  # fmt: skip
    p.add_argument("--certify", type=nonneg_int("--certify"), default=2, metavar="K",
                   help="directions (screened best by ALG/LB) whose points get exact solves "
                   "(default 2)")  # fmt: skip
    p.add_argument("--certify-seconds", type=float, default=CERTIFY_SECONDS, metavar="S",
                   help="at the end, certify every point that decides the verdict with an exact "
                   f"solve of at most S seconds (default {CERTIFY_SECONDS:g}; 0: none)")  # fmt: skip
    p.add_argument("--seconds", type=_seconds, default=DEFAULT_SECONDS, metavar="S",
                   help=f"bound on the whole sweep (default {DEFAULT_SECONDS:g}): the finder, the "
                   "walks and their exact solves stop at a fixed share of it "
                   "(kvopt.campaign.growth.SWEEP_SHARE), the certify stage shares the rest; then "
                   "the points evaluated are judged (0: no bound)")  # fmt: skip
    p.add_argument("--out", metavar="DIR", help="folder of the point records and the plot; "
                   "a rerun with the same folder resumes from its points/ "
                   "(default kvopt-grow/FILE-NAME)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..campaign.growth import FIND_BUDGET, grow
    from ..errors import InputError
    from .common import parse_params

    directions = list(args.direction)
    if args.directions is not None:
        names = [d for d in args.directions.split(",") if d.strip()]
        if not names or any("=" in d for d in names):
            raise InputError("comma-separated named directions (give a vector with --direction)",
                             source="--directions")  # fmt: skip
        directions += names
    res = grow(
        args.record,
        policy=args.policy,
        params=parse_params(args.param) if args.param else None,
        seed=args.seed,
        steps=args.steps,
        extra=args.extra,
        directions=directions if (directions or args.directions is not None) else None,
        find_budget=args.find_budget if args.find_budget is not None else FIND_BUDGET,
        time_limit=args.time_limit,
        certify=args.certify,
        out=args.out,
        progress=True,
        certify_seconds=args.certify_seconds,
        seconds=args.seconds or None,
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
    if res.finder:
        f = res.finder
        lines.append(f"direction finder: {len(f['probes'])} of {f['budget']} probes "
                     f"({f['probe_doublings']} doublings each), swept: {', '.join(f['chosen'])}")  # fmt: skip
    cols = [Column(h) for h in ("direction", "verdict", "exponent", "certified ratio by factor")]
    rows = []
    for d in res.directions:
        ratios = " ".join(f"x{p.factor:g}:{p.ratio_certified:.3f}" for p in d.steps)
        verdict = str(d.verdict)
        if d.limit is not None:
            verdict += f" (limit {d.limit:.4g} ± {d.limit_spread:.2g}, rule {d.rule})"
        exp = "-" if d.exponent is None else f"{d.exponent:.3f}/{d.axis}"
        rows.append([d.name, verdict, exp, ratios + (f" ({d.stopped})" if d.stopped else "")])
    lines.extend(render_table(cols, rows, indent="  ", rule="columns"))
    if res.verdict == "bounded":  # issue 68: a verdict's scope is the directions it swept
        lines.append(f"bounded along the {len(res.directions)} direction(s) swept only "
                     f"({', '.join(d.name for d in res.directions)}); a direction not swept "
                     "may still grow (give it with --direction)")  # fmt: skip
    if res.stopped:
        lines.append(f"{res.stopped}: the verdict is on the points evaluated by then")
    if res.resumed_points:
        lines.append(f"{res.resumed_points} point(s) taken from {res.out}/points (an earlier run)")
    lines.append(f"records and {res.plot or 'no plot'} in {res.out}")
    return "\n".join(lines)
