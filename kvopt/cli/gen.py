"""``kvopt gen FAMILY --seed S [--param KEY=VALUE …] [--out FILE]`` — generate an instance."""

from __future__ import annotations

import argparse
import sys

from ..errors import InputError
from ..fileio import dumps_json
from ..generators import GENERATORS, generate
from ..instance import save_instance
from .common import emit_json, nonneg_int, parse_params


def family_help(name: str) -> str | None:
    """The parameters of family ``name`` with their defaults (``None``: no such family)."""
    g = GENERATORS.get(name)
    if g is None:
        return None
    lines = [f"family {g.name}: {g.doc}", "parameters (--param KEY=VALUE; default):"]
    lines += [f"  {k:17s} {v!r}" for k, v in g.defaults.items()] or ["  (none)"]
    if g.passthrough:
        lines.append("  other parameters are passed to the base family")
    return "\n".join(lines)


class FamilyHelp(argparse.Action):
    """``-h``/``--help``: the command's help and, after ``kvopt gen FAMILY``, that family's
    parameters (issue 68: they were only in ``--list``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        text = parser.format_help()
        family = getattr(namespace, "family", None)
        extra = family_help(family) if family else None
        if extra:
            text = f"{text.rstrip()}\n\n{extra}\n"
        parser._print_message(text, sys.stdout)
        parser.exit()


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
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,  # -h/--help is FamilyHelp: with a family, that family's parameters too
    )
    p.add_argument("-h", "--help", action=FamilyHelp, nargs=0,
                   help="show this help message and exit (kvopt gen FAMILY --help: with that "
                   "family's parameters)")  # fmt: skip
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
