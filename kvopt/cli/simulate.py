"""``kvopt simulate INSTANCE --policy NAME [--param KEY=VALUE …] [--seed S] [--out FILE] [--json]``.

Runs one policy (SPEC §6) on an instance with the event-driven engine
(:func:`kvopt.simulation.simulate`).  JSON (SPEC §4): ``policy``, ``params``,
``objective`` (``total_completion``, ``makespan``), ``schedule``, ``stats``
(``kills``, ``wasted_rounds``, ``events``, ``seconds``; also ``event_times``).
A policy applied outside its instance class, an unknown policy or parameter,
or a bad value is bad input (exit 2, naming the option and the rule).
"""

from __future__ import annotations

import sys

from ..bound import area_bound
from ..instance import load_instance
from ..schedule import save_schedule
from .common import POLICY_REF_HELP, emit_json, nonneg_int, parse_params


def add_parser(sub) -> None:
    p = sub.add_parser(
        "simulate",
        help="run one policy on an instance",
        description="Simulate one scheduling policy (see `kvopt policies`) on an instance.",
    )
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("--policy", required=True, metavar="NAME|REF",
                   help="policy: " + POLICY_REF_HELP)  # fmt: skip
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="policy parameter (repeatable)",
    )
    p.add_argument("--seed", type=nonneg_int("--seed"), default=None, help="seed (seeded policies)")
    p.add_argument("--out", metavar="FILE", help="write the schedule JSON here")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..policy import get_policy
    from ..simulation import simulate

    inst = load_instance(args.instance)
    params = parse_params(args.param)
    get_policy(args.policy)  # unknown name -> exit 2 before anything else
    res = simulate(inst, args.policy, params, seed=args.seed)
    if args.out:
        save_schedule(res.schedule, args.out, inst.n)
    if args.json:
        emit_json(res.to_dict(inst.n))
        return 0
    obj, st = res.objective, res.stats
    lb = area_bound(inst)
    ratio = f"{obj['total_completion'] / lb:.4g}" if lb else "n/a"
    print(f"instance   {inst.name}  (n={inst.n}, M={inst.memory})")
    print(f"policy     {res.policy}  {dict(res.params)}")
    print(f"total      {obj['total_completion']}   (area bound {lb}, ratio <= {ratio})")
    print(f"makespan   {obj['makespan']}")
    print(
        f"stats      kills={st.kills} wasted_rounds={st.wasted_rounds} events={st.events} "
        f"seconds={st.seconds:.3f}"
    )
    if args.out:
        print(f"schedule   written to {args.out}", file=sys.stderr)
    return 0
