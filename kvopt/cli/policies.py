"""``kvopt policies [--json]`` — every registered policy (SPEC §4, §6).

JSON: ``{"policies": [{"name", "clairvoyant", "params", "source", "claims",
"applies_to", "seeded", "kills", "summary"}, …]}`` where ``params`` maps each
parameter name to ``{"default", "help", …}`` and ``kills`` is ``false`` for a
policy that never kills an attempt (the mark its class declares).
"""

from __future__ import annotations

from .common import emit_json


def add_parser(sub) -> None:
    p = sub.add_parser(
        "policies",
        help="list the scheduling policies",
        description="List every policy: name, clairvoyant or not, whether it may kill attempts, "
        "parameters, source, claims.",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..policy import POLICIES

    specs = [POLICIES[k] for k in POLICIES]
    if args.json:
        emit_json({"policies": [s.to_dict() for s in specs]})
        return 0
    for s in specs:
        kind = "clairvoyant" if s.clairvoyant else "non-clairvoyant"
        kills = "may kill" if s.kills else "never kills"
        print(f"{s.name}  ({kind}{', seeded' if s.seeded else ''}, {kills})")
        print(f"    {s.summary}")
        print(f"    source:     {s.source}")
        print(f"    applies to: {s.applies_to}")
        if s.params:
            ps = ", ".join(f"{p.name}={p.default}" for p in s.params)
            print(f"    params:     {ps}")
        if s.claims:
            print(f"    claims:     {', '.join(s.claims)}")
    return 0
