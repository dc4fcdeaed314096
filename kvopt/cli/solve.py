"""``kvopt solve INSTANCE`` — exact clairvoyant Opt (SPEC §4, §5).

Exit status: 0 when the solve ran (whatever its status: ``optimal``,
``feasible``, ``unknown``), 2 on bad input, 1 when a solver is missing or
fails, 130 when interrupted with Ctrl-C (the result found so far is still
printed and ``--out`` still written).
"""

from __future__ import annotations

import sys

from ..instance import load_instance
from ..schedule import save_schedule
from .common import emit_json, nonneg_int, positive_float, positive_int

#: what a solver's own status word means, where it is not plain English
_NATIVE = {
    "exhausted": "the branch and bound searched its whole tree without beating the schedule it "
    "started from, which is therefore optimal",
}


def add_parser(sub) -> None:
    p = sub.add_parser(
        "solve",
        help="exact clairvoyant Opt (auto picks a route by size: branch and bound, event model, "
        "time-indexed IP or CP-SAT; --explain shows it)",
        description=(
            "Exact clairvoyant optimum (SPEC §5). The schedule passes the checker before it is "
            "reported; 'optimal' only when the proven bound meets the objective."
        ),
    )
    p.add_argument("instance", help="instance JSON file")
    p.add_argument(
        "--objective",
        choices=["total", "makespan"],
        default="total",
        help="total completion time (default) or makespan",
    )
    p.add_argument(
        "--solver",
        choices=["auto", "race", "highs", "cpsat", "bnb", "pyomo", "events"],
        default="auto",
        help="auto (default) picks a route from a table by size, objective, threads, "
        "Numba, typed or not (--explain shows it); race is round 1's default; bnb the "
        "branch and bound alone; pyomo the readable reference model (slow to build); events "
        "the event model, whose size follows n, not the token lengths (models/orders.md)",
    )
    p.add_argument(
        "--time-limit",
        type=positive_float("--time-limit"),
        default=60.0,
        help="seconds for the whole solve (default 60)",
    )
    p.add_argument(
        "--threads", type=positive_int("--threads"), default=2, help="threads (default 2)"
    )
    p.add_argument("--seed", type=nonneg_int("--seed"), default=0, help="solver seed (default 0)")
    p.add_argument(
        "--gap",
        type=float,
        default=0.0,
        help="stop at this relative gap (default 0: prove optimality)",
    )
    p.add_argument("--out", metavar="FILE", help="write the checked schedule here (atomically)")
    p.add_argument(
        "--export",
        metavar="FILE.mps|.lp",
        help="write the time-indexed model (kvopt's tightened form) and exit without solving",
    )
    p.add_argument("--progress", action="store_true", help="progress messages on stderr")
    p.add_argument(
        "--explain",
        action="store_true",
        help="print the route taken: the row of the routes table, why, the case it was "
        "chosen for, the provenance of its numbers, each phase's backend, share and seconds "
        "(--json always holds it, as 'route')",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..errors import InputError
    from ..exact import export_model, solve

    inst = load_instance(args.instance)
    if not (0 <= args.gap < 1):
        raise InputError(f"must be in [0, 1), got {args.gap}", source="--gap")
    if args.export:
        export_model(inst, args.export, objective=args.objective)
        if args.json:
            emit_json({"exported": args.export, "objective_name": args.objective})
        else:
            print(f"wrote {args.export}")
        return 0
    res = solve(
        inst,
        objective=args.objective,
        solver=args.solver,
        time_limit=args.time_limit,
        threads=args.threads,
        seed=args.seed,
        gap=args.gap,
        progress=args.progress,
    )
    if args.out and res.schedule is not None:
        save_schedule(res.schedule, args.out, inst.n)
    if args.json:
        emit_json({"instance": inst.name, **res.to_dict()})
    else:
        name = "total_completion" if args.objective == "total" else "makespan"
        print(f"instance  {inst.name}  (n={inst.n}, M={inst.memory})")
        print(f"status    {res.status.value}" + ("  (interrupted)" if res.interrupted else ""))
        print(f"{name:<9} {res.objective}")
        print(f"bound     {res.bound}")
        print(f"gap       {'-' if res.gap is None else f'{100 * res.gap:.2f}%'}")
        said = _NATIVE.get(res.native_status, "kvopt's reading of it is the status above")
        print(
            f"solver    {res.solver} ({res.solver_version}); the solver's own last word: "
            f"{res.native_status} ({said})"
        )
        print(f"seconds   {res.seconds:.2f}")
        if res.route is not None:
            if args.explain:
                for line in res.route.lines():
                    print(line)
            else:
                print(f"route     {res.route.name}: {res.route.why} (--explain for the phases)")
        if args.out and res.schedule is not None:
            print(f"schedule  written to {args.out}")
    if res.interrupted:
        print("kvopt solve: interrupted; reporting the best schedule found", file=sys.stderr)
        return 130
    return 0
