"""``kvopt simulate INSTANCE --policy NAME [--param KEY=VALUE …] [--seed S] [--out FILE] [--json]``.

Runs one policy (SPEC §6) on an instance with the event-driven engine
(:func:`kvopt.simulation.simulate`).  JSON (SPEC §4): ``policy``, ``params``,
``objective`` (``total_completion``, ``makespan``), ``schedule``, ``stats``
(``kills``, ``wasted_rounds``, ``events``, ``seconds``; also ``event_times``).
A policy applied outside its instance class, an unknown policy or parameter,
or a bad value is bad input (exit 2, naming the option and the rule).

``--time-model NAME|c0=…,…`` (SPEC §10) times the rounds; JSON then adds ``"seconds"``:
the lists ``completion``, ``latency``, ``ttft``, ``arrival_round`` (job order),
``metrics`` and ``bound`` (``value``, ``name``: a lower bound on Opt's ``Σ E_i``); the
text output adds the total latency and its ratio to the bound.  A timed instance
(``arrival_time``) gets the block under the default ``unit`` too.  On a timed instance
``--out FILE`` also writes the realized round instance (the rounds the jobs arrived
in, which the schedule was checked against) to ``FILE``'s stem + ``.realized.json``.
"""

from __future__ import annotations

from ..bound import lower_bounds
from ..instance import load_instance
from ..schedule import save_schedule
from .common import POLICY_REF_HELP, TIME_MODEL_HELP, emit_json, nonneg_int, parse_params


def realized_path(out: str) -> str:
    """Where ``simulate --out FILE`` writes the realized instance of a timed instance."""
    stem = out[:-5] if out.endswith(".json") else out
    return stem + ".realized.json"


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
    p.add_argument("--time-model", metavar="NAME|c0=…,c_b=…", default=None,
                   help=TIME_MODEL_HELP)  # fmt: skip
    p.add_argument("--out", metavar="FILE", help="write the schedule JSON here")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..instance import save_instance
    from ..policy import resolve_policy
    from ..serving.seconds import seconds_report
    from ..serving.timemodel import parse_time_model
    from ..simulation import simulate

    inst = load_instance(args.instance)
    params = parse_params(args.param)
    tm = parse_time_model(args.time_model)
    policy = resolve_policy(args.policy, params)  # once; a bad name or parameter: exit 2
    res = simulate(inst, policy, seed=args.seed, time_model=tm)
    real = res.instance if res.instance is not None else inst
    if args.out:
        save_schedule(res.schedule, args.out, inst.n)
        if inst.is_timed:
            save_instance(real, realized_path(args.out))
    rep = None
    if args.time_model is not None or inst.is_timed:
        rep = seconds_report(inst, res.schedule, tm, realized=real, clock=res.clock)
    if args.json:
        d = res.to_dict(inst.n)
        if rep is not None:
            d["seconds"] = rep.to_dict()
        emit_json(d)
        return 0
    obj, st = res.objectives, res.stats
    bounds = lower_bounds(inst)  # the better of area and processing: a trace's is processing
    lb = bounds.best
    ratio = f"{obj['total_completion'] / lb:.4g}" if lb else "n/a"
    print(f"instance   {inst.name}  (n={inst.n}, M={inst.memory})")
    print(f"policy     {res.policy}  {dict(res.params)}")
    print(
        f"total      {obj['total_completion']}   ({bounds.best_name} bound {lb}, ratio <= {ratio})"
    )
    print(f"makespan   {obj['makespan']}")
    print(
        f"stats      kills={st.kills} wasted_rounds={st.wasted_rounds} events={st.events} "
        f"seconds={st.seconds:.3f}"
    )
    if rep is not None:
        m = rep.metrics
        print(f"seconds    time model {tm.label()}: total latency {rep.total_latency:.4g} s "
              f"(bound {rep.bound.value:.4g}, {rep.bound.name}; ratio <= {rep.ratio:.4g})")  # fmt: skip
        print(f"latency    mean {m['mean_latency']:.4g} s  median {m['median_latency']:.4g}  "
              f"p95 {m['p95_latency']:.4g}  p99 {m['p99_latency']:.4g}  "
              f"ttft mean {m['mean_ttft']:.4g}")  # fmt: skip
        print(f"throughput {m['throughput']:.4g} tokens/s  utilisation {m['utilisation']:.3f}")
    if args.out:  # on stdout with the rest of the report, as kvopt solve --out says it
        print(f"schedule   written to {args.out}")
        if inst.is_timed:
            print(f"realized instance written to {realized_path(args.out)}")
    return 0
