"""``kvopt bound INSTANCE [--lp] [--cliques] [--json]`` — lower bounds of SPEC §2.

``--cliques`` adds the LP with the completion cliques (``models/cliques.md``, issue 52): the
time-indexed LP plus rows that see how far running jobs grow, the strong bound where
responses are as long as the memory (Jaillet et al.'s setting).  An instance with a batch cap
(SPEC §10.1) also gets ``machines``, the one bound that uses the cap (:func:`kvopt.bound.machines_bound`)."""

from __future__ import annotations

from ..bound import lower_bounds
from ..instance import load_instance
from .common import emit_json, positive_float


def add_parser(sub) -> None:
    p = sub.add_parser(
        "bound",
        help="lower bounds on Opt (area, processing, rank, LP, LP with cliques)",
        description="Lower bounds on the clairvoyant optimum (SPEC §2).",
    )
    p.add_argument("instance", help="instance JSON file")
    p.add_argument(
        "--lp", action="store_true", help="also solve the LP relaxation of the time-indexed model"
    )
    p.add_argument(
        "--cliques",
        action="store_true",
        help="also solve the LP with the completion cliques (models/cliques.md): stronger "
        "than --lp where responses are long against the memory, and slower",
    )
    p.add_argument(
        "--time-limit",
        type=positive_float("--time-limit"),
        default=60.0,
        help="seconds allowed for each LP relaxation (default 60; the cliques' separation "
        "stops there with the bound it has)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    inst = load_instance(args.instance)
    from ..exact.bounds.conflict import rank_bound  # pure numpy; lives with the exact bounds

    rank = rank_bound(inst)
    lp = None
    if args.lp:
        from ..exact import lp_bound  # the only place the LP is built

        lp = lp_bound(inst, time_limit=args.time_limit)
    cliques = None
    if args.cliques:
        from ..exact.bounds.cliques import clique_bound

        cliques = clique_bound(inst, time_limit=args.time_limit)
    b = lower_bounds(inst, lp=lp, rank=rank, cliques=None if cliques is None else cliques.value)
    if args.json:
        emit_json({"instance": inst.name, **b.to_dict()})
        return 0
    print(f"instance   {inst.name}  (n={inst.n}, M={inst.memory})")
    print(f"area       {b.area}   (Lemma 1, exact value {b.area_exact:.6g})")
    print(f"processing {b.processing}   (Lemma 3, with arrivals)")
    if b.machines is not None:
        print(f"machines   {b.machines}   (batch cap {inst.max_batch}: SPT on that many machines)")
    print(f"rank       {b.rank}   (per completion rank: area and conflict families)")
    if b.lp is not None:
        print(f"lp         {b.lp:.6g}   (LP relaxation of the time-indexed model)")
    if cliques is not None:
        print(
            f"cliques    {cliques.value:.6g}   (the LP with {cliques.rows} completion cliques, "
            f"{'converged' if cliques.converged else 'stopped'}, {cliques.seconds:.1f} s"
            + (
                ""
                if cliques.columns is None
                else f"; column generation, {cliques.columns} start columns priced in"
            )
            + ")"
        )
    print(f"best       {b.best}   ({b.best_name})")
    print(
        f"makespan   {b.makespan_best}   ({b.makespan_best_name}; "
        f"processing {b.makespan['processing']}, area {b.makespan['area']}, "
        f"rank {b.makespan['rank']}"
        + (f", machines {b.makespan['machines']}" if "machines" in b.makespan else "")
        + ")"
    )
    return 0
