"""``kvopt validate [--claims ID,…] [--quick] [--budget N] [--seconds S] [--seed S]
[--workers K | --scheduler ADDRESS] [--out DIR] [--report FILE.md] [--json]`` — SPEC §7.

One verdict per claim (``holds``, ``violated``, ``reproduced``,
``inconclusive``) with the worst certified and optimistic ratios and the
effort; see :func:`kvopt.validation.validate`.  ``--json`` prints one object
with ``claims``: a list, each with ``id``, ``verdict``, ``bound``,
``worst_certified_ratio``, ``worst_optimistic_ratio``, ``instances``,
``exact_solves``, ``seconds``, ``text``, ``scope`` (what the verdict rests on: the
claim's ``class``, the space searched — ``n``, ``memory``, ``max_response``,
``arrivals`` —, the evaluations and their ``distinct_instances``, the ``effort`` by its
numbers, the seconds, the seed; :mod:`kvopt.validation.scope`), ``worst_record`` (the
instance of the worst certified ratio, a given record's when it is the worst), and
``record`` for ``violated``.  ``--from RECORD_OR_DIR`` (repeatable) starts from records the
user has: one inside a ratio claim's class that beats its bound makes the claim
``violated`` at once, with that record as the evidence.
Exit status 0 whatever the verdicts (a violated claim is a finding, not an
error), 2 on bad input, 130 when interrupted.

A user's own claims (SPEC §4): ``--policy REF --ratio-at-most C [--objective …]
[--space …]`` states "REF's ratio is at most C on its class" (``C`` a number or a
formula in ``alpha``, ``n``, ``M``), ``--policy REF --bounded`` "REF's ratio stays
bounded as instances grow"; ``--claims-file FILE.toml`` states several
(:mod:`kvopt.validation.user`).  With them and no ``--claims`` only they run.
"""

from __future__ import annotations

from .common import POLICY_REF_HELP, emit_json, nonneg_int, positive_float, positive_int
from .search import _budget, _range, space_overrides


def add_parser(sub) -> None:
    p = sub.add_parser(
        "validate",
        help="validate the theorem claims of SPEC §7",
        description="Attack every claim (or --claims) with adversarial search inside its class and "
        "report a verdict per claim with certified evidence.",
    )
    p.add_argument("--claims", "--claim", dest="claims", metavar="ID,…",
                   help="comma-separated claim ids (default: all); --claim, as search "
                   "spells it, is the same option")  # fmt: skip
    p.add_argument("--policy", metavar="NAME|REF",
                   help="your own claim about this policy (with --ratio-at-most or --bounded): "
                   + POLICY_REF_HELP + "; parameters as NAME[KEY=VALUE;...]")  # fmt: skip
    own = p.add_mutually_exclusive_group()
    own.add_argument("--ratio-at-most", metavar="C",
                     help="with --policy: the claim 'ALG <= C * Opt on the policy's class' (C a "
                     "number or a formula in alpha, n, M, e.g. '1 + 2/(1-alpha)')")  # fmt: skip
    own.add_argument("--bounded", action="store_true",
                     help="with --policy: the claim 'the ratio stays bounded as instances grow' "
                     "(judged by growth sweeps, SPEC §9)")  # fmt: skip
    p.add_argument("--objective", choices=("total", "makespan", "latency"), default="total",
                   help="with --policy: the objective of the claim (default total)")  # fmt: skip
    p.add_argument("--claim-id", metavar="ID",
                   help="with --policy: the claim's id (default: derived from the policy)")  # fmt: skip
    p.add_argument("--from", dest="records", action="append", default=[],
                   metavar="RECORD_OR_DIR",
                   help="records you already have (a record file, or a folder searched for "
                   "them; repeatable): one inside a ratio claim's class whose certified ratio "
                   "beats the bound makes the claim violated at once, with that record as the "
                   "evidence; the others are counted in the verdict's scope")  # fmt: skip
    p.add_argument("--claims-file", metavar="FILE.toml",
                   help="your own claims: [[claim]] tables with id, policy, kind (ratio or "
                   "bounded), constant, objective, optional params, space, source")  # fmt: skip
    p.add_argument(
        "--quick",
        action="store_true",
        help="small budgets: every claim (tens of minutes on 2 cores: the growth sweeps of the "
        "constant-free and discovery claims take most of it)",
    )
    p.add_argument("--budget", type=_budget, metavar="N", help="evaluations per claim")
    p.add_argument(
        "--seconds", type=positive_float("--seconds"), metavar="S", help="seconds per claim"
    )
    p.add_argument("--seed", type=nonneg_int("--seed"), default=0, help="seed (default 0)")
    p.add_argument("--workers", type=positive_int("--workers"), default=1, metavar="K",
                   help="local worker processes (default 1: serial)")  # fmt: skip
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler (needs kvopt[dask])")
    p.add_argument("--out", metavar="DIR", help="campaign folder (default kvopt-validate)")
    p.add_argument("--report", metavar="FILE.md", help="Markdown report with PNG plots beside it")
    p.add_argument("--n", type=_range("--n"), metavar="MIN:MAX", help="jobs per searched instance")
    p.add_argument(
        "--memory", type=_range("--memory"), metavar="MIN:MAX", help="memory budgets searched"
    )
    p.add_argument("--max-response", type=nonneg_int("--max-response"), metavar="R",
                   help="largest response searched (0: up to M)")  # fmt: skip
    p.add_argument("--space", action="append", default=[], metavar="KEY=VALUE",
                   help="kind=typed (SPEC §9; types_max, count_max) or size fields of every "
                   "claim's space")  # fmt: skip
    p.add_argument("--progress", action="store_true", default=None, help="force progress output")
    p.add_argument(
        "--no-progress", dest="progress", action="store_false", help="no progress output"
    )
    p.add_argument("--list", action="store_true",
                   help="list the claims (id, kind, policy, constant, class, source) and exit; "
                   "alpha in a constant is max_i (s_i + o_i) / M")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


#: The ``--space`` fields that change every claim's search (the others define a user claim's class).
SIZE_FIELDS = {"n_min", "n_max", "memory_min", "memory_max", "max_response", "max_arrival",
               "kind", "types_max", "count_max"}  # fmt: skip


def _user_claims(args, sizes: dict) -> tuple[list, dict]:
    """The user's claims of ``--policy``/``--claims-file``, and the sizes left for every claim."""
    from ..errors import InputError
    from ..validation.user import load_claims_file, make_claim

    claims = []
    if args.policy is None:
        for opt, given in (("--ratio-at-most", args.ratio_at_most is not None),
                           ("--bounded", args.bounded), ("--claim-id", args.claim_id)):  # fmt: skip
            if given:
                raise InputError("needs --policy REF (the policy the claim is about)", source=opt)
    else:
        if args.ratio_at_most is None and not args.bounded:
            raise InputError("needs --ratio-at-most C or --bounded (what is claimed)",
                             source="--policy")  # fmt: skip
        from ..policy import resolve_policy

        policy = resolve_policy(args.policy)  # once: the claim is made from it
        spec = policy.spec
        what = f"ratio-at-most-{args.ratio_at_most}" if not args.bounded else "bounded"
        import re

        # a formula's characters are not an id's: they become "_" (--claim-id names it)
        cid = args.claim_id or re.sub(r"[^A-Za-z0-9_.:-]+", "_", f"{spec.slug}-{what}").strip("_")
        structural = {k: v for k, v in sizes.items() if k not in SIZE_FIELDS}
        sizes = {k: v for k, v in sizes.items() if k in SIZE_FIELDS}
        claims.append(make_claim(
            id=cid, policy=policy, kind="bounded" if args.bounded else "ratio",
            constant=args.ratio_at_most, objective=args.objective, space=structural or None,
            source=f"kvopt validate --policy {args.policy}", where="--policy",
            options={"constant": "--ratio-at-most", "id": "--claim-id", "objective": "--objective"},
        ))  # fmt: skip
    if args.claims_file:
        claims += load_claims_file(args.claims_file)
    ids = [c.id for c in claims]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup:
        raise InputError(f"claim id {dup!r} given twice", source="--claim-id")
    return claims, sizes


def _list_claims(as_json: bool) -> int:
    """``kvopt validate --list``: the claim registry (:data:`kvopt.claim.CLAIMS`)."""
    from ..claim import CLAIMS

    if as_json:
        emit_json({"claims": [{k: v for k, v in c.to_dict().items() if k != "space"}
                              for c in CLAIMS.values()]})  # fmt: skip
        return 0
    for c in CLAIMS.values():
        print(f"{c.id}  [{c.kind}]  policy: {', '.join(c.policies) or '-'}  "
              f"constant: {c.bound_text()}  objective: {c.objective}")  # fmt: skip
        print(f"    {c.statement}")
        print(f"    class: {c.klass}")
        print(f"    source: {c.source}")
    print("alpha = max_i (s_i + o_i) / M, the largest peak of a job as a share of the budget")
    return 0


def run(args) -> int:
    if args.list:
        return _list_claims(args.json)
    from ..validation import validate

    sizes = space_overrides(args)
    user_claims, sizes = _user_claims(args, sizes)
    res = validate(
        args.claims,
        user_claims=user_claims,
        space=sizes or None,
        quick=args.quick,
        budget=args.budget,
        seconds=args.seconds,
        seed=args.seed,
        workers=args.workers,
        scheduler=args.scheduler,
        out=args.out,
        report=args.report,
        progress=args.progress,
        records=args.records,
    )
    if args.json:
        emit_json(res.to_dict())
    else:
        print(res.table())
        print()
        from ..validation.result import scope_text

        for c in res.claims:
            print(
                f"{c.id}: {c.verdict} [scope: {scope_text(c)}] — {c.text}"
                + (f" [record: {c.record}]" if c.record else "")
            )
        if res.report:
            print(f"\nreport: {res.report}")
    return 0
