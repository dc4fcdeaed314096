"""``kvopt compare INSTANCE_OR_DIR… [--policies a,b,…] [--exact] [--time-limit S] [--plot FILE]
[--json]`` — each policy's objective against the lower bounds and, with ``--exact``, Opt.

See :mod:`kvopt.compare` for the ratios (SPEC §8).  Policies that do not apply
to an instance's class are listed as not applicable, not run.  A policy may be
given with parameters, ``NAME[KEY=VALUE;…]`` (e.g. ``pack-and-schedule[packer=nfdh]``),
so variants sit side by side.  ``--plot``
writes a bar chart of the ratios; ``--worst-plot`` (with ``--exact``) the
side-by-side picture of the worst policy and Opt for each instance.
``--time-model`` (SPEC §10) adds each policy's latencies in seconds and their ratio to
the lower bound on Opt's total latency (JSON: ``latency`` per policy, ``time_model`` and
``latency_bound`` per instance).
"""

from __future__ import annotations

import os

from ..comparison import (
    compare,
    format_summary,
    format_table,
    plot_comparison,
    plot_worst_vs_opt,
    split_policies,
)
from ..errors import InputError
from .common import TIME_MODEL_HELP, emit_json, nonneg_int, positive_float, positive_int


def add_parser(sub) -> None:
    p = sub.add_parser(
        "compare",
        help="compare policies with the lower bounds and exact Opt",
        description=(
            "Simulate policies on instances and report total completion time, makespan and the "
            "ratios to the best cheap lower bound (/LB(area) or /LB(processing), SPEC §2; "
            "kvopt bound may give a higher one: its rank bound, or --lp), to the best checked "
            "schedule (/UB) and (with --exact) to Opt."
        ),
    )
    p.add_argument("instances", nargs="+", metavar="INSTANCE_OR_DIR", help="instance files/folders")
    p.add_argument(
        "--policies",
        metavar="A,B,…",
        help="comma-separated policies, NAME[KEY=VALUE;…] for parameters (default: all built-ins); "
        "each a name or a reference path/to/file.py:Class, package.module:Class, entry-point name",
    )
    p.add_argument("--exact", action="store_true", help="also solve for exact Opt")
    p.add_argument(
        "--time-limit",
        type=positive_float("--time-limit"),
        default=60.0,
        help="seconds for the exact solver per instance (default 60)",
    )
    p.add_argument(
        "--solver", choices=("auto", "highs", "cpsat"), default="auto", help="exact solver"
    )
    p.add_argument(
        "--threads", type=positive_int("--threads"), default=2, help="solver threads (default 2)"
    )
    p.add_argument(
        "--seed", type=nonneg_int("--seed"), default=0, help="seed for randomised policies (0)"
    )
    p.add_argument("--plot", metavar="FILE", help="bar chart of the ratios (PNG)")
    p.add_argument(
        "--worst-plot",
        metavar="FILE",
        help="with --exact: worst policy beside Opt (one instance; several: FILE gets a suffix)",
    )
    p.add_argument("--time-model", metavar="NAME|c0=…,c_b=…", default=None,
                   help=TIME_MODEL_HELP)  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    policies = None
    if args.policies is not None:
        policies = split_policies(args.policies)
        if not policies:
            raise InputError("no policy named", source="--policies")
        from ..policy import resolve_policy

        try:  # each resolved once, here; compare() runs these objects
            policies = [resolve_policy(label) for label in policies]
        except InputError as err:
            rule = err.rule if err.source in (None, "--policy") else f"{err.source}: {err.rule}"
            raise InputError(rule, source="--policies") from None
    time_model = None
    if args.time_model is not None:
        from ..serving.timemodel import parse_time_model

        time_model = parse_time_model(args.time_model)
    if args.worst_plot and not args.exact:
        raise InputError("needs --exact (it draws Opt's schedule)", source="--worst-plot")
    cmp = compare(
        args.instances,
        policies,
        exact=args.exact,
        time_limit=args.time_limit,
        threads=args.threads,
        seed=args.seed,
        solver=args.solver,
        progress=True,
        time_model=time_model,
    )
    written = []
    if args.plot:
        written.append(plot_comparison(cmp, args.plot))
    if args.worst_plot:
        for k, ic in enumerate(cmp.instances):
            path = args.worst_plot
            if len(cmp.instances) > 1:
                stem, ext = os.path.splitext(args.worst_plot)
                path = f"{stem}-{k}{ext or '.png'}"
            out = plot_worst_vs_opt(ic, path)
            if out:
                written.append(out)
    if args.json:
        d = cmp.to_dict()
        d["written"] = written
        emit_json(d)
        return 0
    for ic in cmp.instances:
        print(format_table(ic))
        print()
    if len(cmp.instances) > 1:
        print(format_summary(cmp))
    for path in written:
        print(f"wrote {path}")
    return 0
