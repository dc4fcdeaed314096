"""``kvopt gen FAMILY --seed S [--param KEY=VALUE …] [--out FILE]`` — generate an instance."""

from __future__ import annotations

import sys

from ..errors import InputError
from ..fileio import dumps_json
from ..generators import GENERATORS, generate
from ..instance import save_instance
from .common import emit_json, nonneg_int, parse_params


def add_parser(sub) -> None:
    families = "\n".join(
        f"  {g.name:17s} {g.doc}\n  {'':17s} params: "
        + ", ".join(f"{k}={v!r}" for k, v in g.defaults.items())
        for g in GENERATORS.values()
    )
    p = sub.add_parser(
        "gen",
        # the usage as the rule is: --seed is required to generate, not with --list
        usage="kvopt gen FAMILY --seed SEED [--param KEY=VALUE] [--out OUT] [--json]\n"
        "       kvopt gen --list [--json]",
        help="generate an instance (random regimes, paper constructions, trace samples)",
        description="Generate an instance; deterministic per --seed.\n\nfamilies:\n" + families,
        formatter_class=__import__("argparse").RawDescriptionHelpFormatter,
    )
    p.add_argument("family", nargs="?", help="instance family (see --list)")
    p.add_argument(
        "--seed",
        type=nonneg_int("--seed"),
        help="random seed (required to generate; not with --list)",
    )
    p.add_argument(
        "--param", action="append", metavar="KEY=VALUE", help="family parameter (repeatable)"
    )
    p.add_argument("--out", help="write the instance here (atomically) instead of stdout")
    p.add_argument("--list", action="store_true", help="list the families and their parameters")
    p.add_argument(
        "--json", action="store_true", help="with --list or --out: print one JSON object"
    )
    p.set_defaults(func=run)


def run(args) -> int:
    if args.list:
        if args.json:
            emit_json(
                {
                    "families": {
                        g.name: {"doc": g.doc, "params": g.defaults} for g in GENERATORS.values()
                    }
                }
            )
        else:
            for g in GENERATORS.values():
                params = ", ".join(f"{k}={v!r}" for k, v in g.defaults.items())
                print(f"{g.name:17s} {g.doc}\n{'':17s} params: {params}")
        return 0
    if not args.family:
        raise InputError("missing (one of: " + ", ".join(GENERATORS) + ")", source="FAMILY")
    if args.seed is None:
        raise InputError(
            "required: every generated instance is reproducible from its seed", source="--seed"
        )
    inst = generate(args.family, args.seed, **parse_params(args.param))
    if args.out:
        save_instance(inst, args.out)
        if args.json:
            emit_json({"out": args.out, "name": inst.name, "n": inst.n, "memory": inst.memory})
        else:
            print(f"wrote {args.out}: {inst.name}, n={inst.n}, M={inst.memory}", file=sys.stderr)
    else:
        sys.stdout.write(dumps_json(inst.to_dict()) + "\n")
    return 0
