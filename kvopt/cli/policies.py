"""``kvopt policies [--json]`` — every registered policy (SPEC §4, §6); ``--check REF``.

JSON: ``{"policies": [{"name", "clairvoyant", "knowledge", "params", "source", "claims",
"applies_to", "seeded", "kills", "summary"}, …]}`` where ``knowledge`` is
``clairvoyant``, ``prediction-based`` or ``non-clairvoyant``, ``params`` maps each
parameter name to ``{"default", "help", …}`` and ``kills`` is ``false`` for a
policy that never kills an attempt (the mark its class declares).  Policies
that installed packages register in the entry-point group ``kvopt.policies``
are listed after the built-ins (with ``reference``).

``kvopt policies --check REF [--param K=V …] [--seed S] [--out DIR] [--json]``
runs a policy (a reference to your own, SPEC §4, or a built-in name) through
the conformance battery of :mod:`kvopt.conformance`: exit 0 when every check
passes, 1 when one fails (the smallest failing instance saved under ``--out``
and named), 2 on a bad reference or parameter.
"""

from __future__ import annotations

import sys

from .common import POLICY_REF_HELP, emit_json, nonneg_int, parse_params


def add_parser(sub) -> None:
    p = sub.add_parser(
        "policies",
        help="list the scheduling policies; --check REF runs one through the conformance battery",
        description="List every policy: name, clairvoyant or not, whether it may kill attempts, "
        "parameters, source, claims.  With --check REF, run a policy (your own: "
        "path/to/file.py:Class) through the conformance battery: the checker, same seed same "
        "schedule, blindness to unseen responses, visibility of unarrived jobs, the declared "
        "kills, no exception.",
    )
    p.add_argument("--check", metavar="REF",
                   help="run this policy through the conformance battery: " + POLICY_REF_HELP)  # fmt: skip
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="with --check: policy parameter (repeatable)")  # fmt: skip
    p.add_argument("--seed", type=nonneg_int("--seed"), default=0, metavar="S",
                   help="with --check: the seed of the battery and of a seeded policy (default 0)")  # fmt: skip
    p.add_argument("--out", metavar="DIR",
                   help="with --check: where failing instances are saved "
                   "(default kvopt-check/<policy>)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _installed():
    """Specs of the policies installed packages register (entry points), or errors as text."""
    from ..errors import InputError
    from ..policy import POLICIES, get_policy
    from ..usercode import POLICY_GROUP, entry_points

    out, bad = [], []
    for name in sorted(entry_points(POLICY_GROUP)):
        if name in POLICIES:
            bad.append(f"{name}: shadowed by the built-in policy of that name")
            continue
        try:
            out.append(get_policy(name))
        except InputError as err:
            bad.append(str(err))
    return out, bad


def run(args) -> int:
    from ..errors import InputError

    if args.check is None:
        if args.param or args.out:
            raise InputError("needs --check REF", source="--param" if args.param else "--out")
        return _list(args.json)
    from ..conformance import check_policy, format_report
    from ..logs import progress_logger

    say = (
        None if args.json else progress_logger("kvopt.conformance", True, "kvopt policies --check")
    )
    rep = check_policy(args.check, params=parse_params(args.param), seed=args.seed, out=args.out,
                       progress=say)  # fmt: skip
    if args.json:
        emit_json(rep.to_dict())
    else:
        print(format_report(rep))
    if not rep.passed:
        print(f"kvopt policies --check: failing instances saved under {rep.out}", file=sys.stderr)
    return 0 if rep.passed else 1


def _shown(default) -> str:
    """A parameter's default in the listing: an optional one (``None``) is unset."""
    return "unset" if default is None else str(default)


def _list(as_json: bool) -> int:
    from ..policy import POLICIES

    installed, bad = _installed()
    specs = [*POLICIES.values(), *installed]
    for msg in bad:
        print(f"kvopt policies: entry point {msg}", file=sys.stderr)
    if as_json:
        emit_json({"policies": [s.to_dict() for s in specs]})
        return 0
    for s in specs:
        kind = s.knowledge
        kills = "may kill" if s.kills else "never kills"
        where = f", entry point: {s.code.target}" if s.code is not None else ""
        print(f"{s.name}  ({kind}{', seeded' if s.seeded else ''}, {kills}{where})")
        print(f"    {s.summary}")
        print(f"    source:     {s.source}")
        print(f"    applies to: {s.applies_to}")
        if s.params:
            ps = ", ".join(f"{p.name}={_shown(p.default)}" for p in s.params)
            print(f"    params:     {ps}")
        if s.claims:
            print(f"    claims:     {', '.join(s.claims)}")
    return 0
