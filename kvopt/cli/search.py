"""``kvopt search --policy NAME [--strategy S] [--family F --param K=V …] [--budget N] [--seconds S]
[--seed S] [--workers K | --scheduler ADDRESS] [--out DIR] [--json]`` — adversarial search.

Finds instances on which a policy is far from Opt, with certified ratios
(SPEC §8); see :func:`kvopt.campaign.search`.  ``--json`` prints one object:
``policy``, ``strategy``, ``evaluations``, ``exact_solves``, ``seconds`` and
``best`` (``ratio_certified``, ``ratio_optimistic``, ``record``), plus
``stopped``, ``out`` and the strategy's ``summary``.  Exit status 0 (also
when nothing beat ratio 1), 2 on bad input, 130 when interrupted (the
result so far is still printed and every finished evaluation is logged).
"""

from __future__ import annotations

import sys

from ..certify import CERTIFY_SECONDS
from ..errors import InputError
from ..params import parse_params
from .common import POLICY_REF_HELP, emit_json, nonneg_int, positive_float, positive_int


def _range(option: str):
    def conv(text: str) -> tuple[int, int]:
        import argparse

        try:
            if ":" in text:
                lo, hi = (int(x) for x in text.split(":", 1))
            else:
                lo = hi = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{option} must be MIN:MAX or N, got {text!r}"
            ) from None
        if lo < 0 or hi < lo:
            raise argparse.ArgumentTypeError(f"{option} needs 0 <= MIN <= MAX, got {text!r}")
        return lo, hi

    return conv


def _budget(text: str) -> int:
    import argparse

    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--budget must be an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"--budget must be >= 1 evaluation, got {v}")
    return v


def add_parser(sub) -> None:
    p = sub.add_parser(
        "search",
        help="adversarial search for a policy's worst certified ratio",
        description=(
            "Search for instances on which a policy is far from the clairvoyant optimum. Every "
            "evaluation is logged in DIR/evaluations.jsonl as it finishes; the best certified find "
            "is kept as a record in DIR/best.json; rerunning with the same --out resumes."
        ),
    )
    p.add_argument("--policy", required=True, metavar="NAME|REF",
                   help="policy: " + POLICY_REF_HELP + "; optionally NAME[KEY=VALUE;...]")  # fmt: skip
    p.add_argument("--strategy", default="anneal",
                   help="anneal (default), random, cma, family, trace or exhaustive")  # fmt: skip
    p.add_argument("--family", metavar="F",
                   help="draw instances from a kvopt gen family, or your own: fam.py:function "
                   "(a function of a numpy Generator and keyword parameters returning an "
                   "Instance)")  # fmt: skip
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="family parameter; comma lists (L=2,3,4) span the family strategy's grid")  # fmt: skip
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="strategy option (e.g. t0=0.05 for anneal, delta=0.2 for trace)")  # fmt: skip
    p.add_argument("--policy-param", action="append", default=[], metavar="KEY=VALUE",
                   help="policy parameter (as kvopt simulate --param)")  # fmt: skip
    p.add_argument("--claim", metavar="ID", help="restrict to a SPEC §7 claim's class")
    p.add_argument("--objective", choices=("total", "makespan", "latency"), default=None,
                   help="objective of the ratio (default total, or the claim's)")  # fmt: skip
    p.add_argument("--budget", type=_budget, default=None, metavar="N",
                   help="evaluations for the whole campaign (default 200 without --seconds)")  # fmt: skip
    p.add_argument("--seconds", type=positive_float("--seconds"), default=None, metavar="S",
                   help="wall-clock limit of this run")  # fmt: skip
    p.add_argument("--seed", type=nonneg_int("--seed"), default=0, help="seed (default 0)")
    p.add_argument("--workers", type=positive_int("--workers"), default=1, metavar="K",
                   help="local worker processes (default 1: serial)")  # fmt: skip
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="evaluate on a Dask cluster (tcp://host:8786; needs kvopt[dask])")  # fmt: skip
    p.add_argument(
        "--out", metavar="DIR", help="campaign folder (default kvopt-search/POLICY-STRATEGY-sSEED)"
    )
    p.add_argument("--batch", type=positive_int("--batch"), default=8,
                   help="candidates per batch (part of the campaign's identity; default 8)")  # fmt: skip
    p.add_argument("--time-limit", type=positive_float("--time-limit"), default=10.0, metavar="S",
                   help="seconds per exact solve (default 10)")  # fmt: skip
    p.add_argument("--certify-seconds", type=float, default=CERTIFY_SECONDS, metavar="S",
                   help="at the end, certify the best record's bracket with an exact solve of at "
                   f"most S seconds (default {CERTIFY_SECONDS:g}; 0: no certify stage)")  # fmt: skip
    p.add_argument("--n", type=_range("--n"), metavar="MIN:MAX", help="number of jobs")
    p.add_argument("--memory", type=_range("--memory"), metavar="MIN:MAX", help="memory budget M")
    p.add_argument("--max-response", type=nonneg_int("--max-response"), metavar="R",
                   help="largest response length (0: up to M)")  # fmt: skip
    p.add_argument("--space", action="append", default=[], metavar="KEY=VALUE",
                   help="kind=typed (SPEC §9: types_max, count_max, …) or other space fields: "
                   "arrivals, max_arrival, identical_prompts, regimes=a+b, …")  # fmt: skip
    p.add_argument("--dask-timeout", type=positive_float("--dask-timeout"), default=10.0,
                   help="seconds to wait for the Dask scheduler (default 10)")  # fmt: skip
    p.add_argument("--progress", action="store_true", default=None, help="force the progress bar")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    p.add_argument("--grow", type=nonneg_int("--grow"), default=0, metavar="K",
                   help="then growth sweeps (kvopt grow, 4 doublings) of the K best records; "
                   "reports the verdict and the family (JSON key growth); their deciding "
                   "points are certified for --certify-seconds")  # fmt: skip
    p.add_argument("--grow-extra", type=nonneg_int("--grow-extra"), default=6,
                   metavar="K", help="with --grow: up to K more doublings for a direction not "
                   "yet settled (kvopt grow --extra; default 6)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def family_params(items: list[str]) -> dict:
    """``--param`` values: ints/floats/bools where they parse; ``a,b,c`` becomes a list."""
    out = {}
    for k, v in parse_params(items).items():
        if "," in v:
            out[k] = [_auto(x.strip()) for x in v.split(",") if x.strip()]
        else:
            out[k] = _auto(v)
    return out


def _auto(text: str):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def size_overrides(args) -> dict:
    """``--n``, ``--memory`` and ``--max-response`` as :class:`kvopt.space.Space` fields."""
    out: dict = {}
    if args.n:
        out["n_min"], out["n_max"] = args.n
    if args.memory:
        out["memory_min"], out["memory_max"] = args.memory
    if args.max_response is not None:
        out["max_response"] = args.max_response
    return out


def space_overrides(args) -> dict:
    """``--space KEY=VALUE`` (and the size options) as the fields of a space, with ``kind``.

    Fields of either kind (:class:`kvopt.space.Space`, :class:`kvopt.space.TypedSpace`)
    are accepted here; :func:`kvopt.space.space_from_dict` refuses a field its kind lacks.
    """
    from dataclasses import fields

    from ..space import Space, TypedSpace

    known = {f.name for f in fields(Space)} | {f.name for f in fields(TypedSpace) if f.init}
    known.add("kind")
    out = size_overrides(args)
    for k, v in parse_params(args.space, option="--space").items():
        if k not in known:
            raise InputError(
                f"unknown space field (known: {', '.join(sorted(known))})", source=f"--space {k}"
            )
        if k == "regimes":
            out[k] = tuple(x for x in v.replace(",", "+").split("+") if x)
        elif k == "peak_limit":
            from fractions import Fraction

            out[k] = Fraction(v)
        elif k == "kind":
            out[k] = v
        else:
            val = _auto(v)
            out[k] = val
    return out


def run(args) -> int:
    from ..campaign import search
    from ..exact.workers import DeferredCtrlC

    policy_params = parse_params(args.policy_param, option="--policy-param")
    res = search(
        args.policy,
        strategy=args.strategy,
        params=policy_params or None,
        family=args.family,
        family_params=family_params(args.param),
        space=space_overrides(args) or None,
        claim=args.claim,
        objective=args.objective,
        budget=args.budget,
        seconds=args.seconds,
        seed=args.seed,
        workers=args.workers,
        scheduler=args.scheduler,
        out=args.out,
        batch=args.batch,
        exact_time_limit=args.time_limit,
        options=parse_params(args.option, option="--option"),
        progress=args.progress,
        dask_timeout=args.dask_timeout,
        certify_seconds=args.certify_seconds,
    )
    grown = None
    if args.grow and res.best is not None and res.stopped != "interrupted":
        from ..campaign.aftersearch import grow_campaign

        grown = grow_campaign(
            res.out,
            top=args.grow,
            time_limit=args.time_limit,
            extra=args.grow_extra,
            certify_seconds=args.certify_seconds,
        )
    held = DeferredCtrlC()  # the result is printed whole, even when Ctrl-C comes meanwhile
    try:
        if args.json:
            emit_json({**res.to_dict(), **({"growth": grown.to_dict()} if grown else {})})
        else:
            print(format_result(res))
            if grown is not None:
                print(f"  growth: {grown.verdict}; family {grown.family()}")
    finally:
        came = held.restore()
    return 130 if res.stopped == "interrupted" or came else 0


def _bracket_text(b) -> str:
    rc, ro = b["ratio_certified"], b["ratio_optimistic"]
    return f"{rc:.4f}" if b["opt_status"] == "optimal" else f"{rc:.4f} - {ro:.4f}"


def format_result(res) -> str:
    from ..campaign.types import StopReason

    lines = [
        f"kvopt search {res.policy} ({res.strategy}, seed {res.seed}, objective {res.objective}): "
        f"{res.evaluations} evaluations ({res.new_evaluations} new), {res.exact_solves} exact solves, "
        f"{res.seconds:.1f}s, {StopReason(res.stopped).describe()}"
    ]
    if res.stopped == StopReason.INTERRUPTED:
        lines.append(
            f"  resume: run the same command again (same --out {res.out}): the "
            f"{res.evaluations} finished evaluations are logged in {res.out}/evaluations.jsonl "
            "and are not run again"
        )
    if res.certify is not None:
        c = res.certify
        before, after = c["before"], c["after"]
        lines.append(
            f"  search {res.search_seconds:.1f}s, certify stage {res.certify_seconds:.1f}s: best "
            f"record's bracket {_bracket_text(before)} -> {_bracket_text(after)} "
            f"({after['opt_status']})"
        )
    if res.errors:
        lines.append(
            f"  {res.errors} evaluation(s) where the policy broke the model or raised (each instance kept): {res.out}/errors/"
        )
    b = res.best
    if b is None:
        lines.append("  nothing evaluated")
    else:
        lines.append(
            f"  best certified ratio {b.ratio_certified:.4f} (optimistic {b.ratio_optimistic:.4f}, "
            f"{b.opt_status}) on n={b.n}, M={b.memory}, evaluation {b.evaluation}"
        )
        lines.append(f"  record: {b.record}   (kvopt check {b.record}; kvopt plot {b.record})")
    if res.best_optimistic is not None:
        lines.append(f"  largest optimistic ratio of any evaluation: {res.best_optimistic:.4f}")
    for g in getattr(res.summary, "growth", ()):
        for fit in g.fits:
            fixed = ", ".join(f"{k}={v}" for k, v in fit.fixed.items())
            pts = " ".join(f"{x:g}:{rc:.3f}" for x, rc, _ in fit.points)
            lines.append(
                f"  growth in {g.param} ({fixed or 'nothing fixed'}): exponent "
                f"{fit.exponent_certified:.3f} certified; points {pts}"
            )
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)
