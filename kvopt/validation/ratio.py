"""Ratio claims: adversarial campaigns against the bound, longer re-solves; growth sweeps of the
worst records for claims without a constant (:mod:`kvopt.validation.sweeps`).

See :mod:`kvopt.validation` for the procedure and its verdicts.
"""

from __future__ import annotations

from ..campaign.types import Evaluation
from ..claim import Claim
from .context import Context, keep_record, notes_for
from .effort import split
from .result import ClaimVerdict, Verdict, fmt
from .worst import NAME as WORST_NAME
from .worst import save_worst_certified


def ratio_claim(claim: Claim, ctx: Context) -> ClaimVerdict:
    """Campaigns inside the claim's class against its bound (growth sweeps without one)."""
    from ..record import load_record, verify_record

    eff = ctx.eff
    logs: list[Evaluation] = []
    campaigns = []  # (folder, log): where each figure's instance can be rebuilt from
    exact = 0
    records = []
    errors = 0
    for strategy, budget, sec in split(eff):
        res, log = ctx.campaign(claim, strategy, budget, sec)
        logs.extend(log.values())
        campaigns.append((res.out, log))
        exact += res.exact_solves
        errors += res.errors
        if res.best and res.best.record:
            records.append((res.best.score or 0.0, res.best.record))
    good = [r for r in logs if r.certified]
    worst_c = max((r.ratio_certified for r in good), default=None)
    worst_o = max((r.ratio_optimistic for r in good), default=None)
    notes = notes_for(claim)
    worst_record = save_worst_certified(claim, campaigns, ctx.out)
    given = list(getattr(ctx, "given", ()))  # --from records that count (issue 68)
    top = max(given, key=lambda g: g[1].ratio_certified, default=None)
    if top is not None and (worst_c is None or top[1].ratio_certified > worst_c):
        searched = worst_c
        worst_c = top[1].ratio_certified
        worst_record = keep_record(top[1], ctx.out / claim.id / WORST_NAME)
        notes.append(f"worst certified ratio {fmt(worst_c)} on the given record {top[0]} "
                     f"(copied to {worst_record}); the search's own worst certified "
                     f"{fmt(searched)}")  # fmt: skip
    elif worst_record is not None:
        notes.append(f"worst certified ratio {fmt(worst_c)} on the instance of {worst_record}")
    if given:
        worst_o = max([r.ratio_optimistic for _, r in given] + ([worst_o] if worst_o else []))
    if errors:
        notes.append(
            f"{errors} evaluation(s) where the policy broke the model (see the campaign's errors/)"
        )
    base = dict(
        id=claim.id,
        bound=claim.bound if claim.bound is not None else claim.bound_formula,
        bound_text=claim.bound_text(),
        worst_certified_ratio=worst_c,
        worst_optimistic_ratio=worst_o,
        instances=len(logs),
        worst_record=worst_record,
        kind=claim.kind,
        seconds=0.0,
    )
    if claim.bound is None and claim.bound_fn is None:  # "some constant": judged by sweeps
        from .sweeps import judge_constant_free

        worst = [path for _, path in sorted(records, key=lambda r: -r[0])]
        j = judge_constant_free(claim, ctx, worst)
        text = (f"worst certified ratio {fmt(worst_c)} (optimistic {fmt(worst_o)}) over "
                f"{len(good)} campaign instances; {j['text']}")  # fmt: skip
        return ClaimVerdict(
            **base,
            verdict=j["verdict"],
            exact_solves=exact + j["exact_solves"],
            record=j["record"],
            text="; ".join([text, *notes]),
            data={**j["data"], "distribution": _distribution(good, claim, given)},
        )
    # a bound: certified violations, optimistic-only ones, or none
    viol = [r for r in good if (r.score or 0.0) > 1 + 1e-12]
    worst_score = max([r.score or 0.0 for r in good]
                      + [r.ratio_certified / claim.bound_for(r.instance) for _, r in given],
                      default=None)  # fmt: skip
    data = {"worst_score": worst_score, "distribution": _distribution(good, claim, given)}
    if viol:
        best = max(records)[1] if records else None
        rec = load_record(best) if best else None
        if (
            rec is not None
            and not verify_record(rec)
            and rec.ratio_certified > (rec.meta.get("bound") or 0)
        ):
            path = keep_record(rec, ctx.out / claim.id / "violation.json")
            return ClaimVerdict(
                **base,
                verdict=Verdict.VIOLATED,
                exact_solves=exact,
                record=path,
                text="; ".join(
                    [
                        f"certified ratio {rec.ratio_certified:.4g} > bound {rec.meta.get('bound'):.4g} "
                        f"on n={rec.instance.n}, M={rec.instance.memory} ({rec.opt_status} Opt)",
                        *notes,
                    ]
                ),  # fmt: skip
                data=data,
            )
    hopeful = sorted(
        (r for r in good if (r.score_optimistic or 0.0) > 1 + 1e-12),
        key=lambda r: -r.score_optimistic,
    )
    resolved = 0
    for r in hopeful[: eff.resolve]:  # try to decide optimistic-only violations with more time
        out = resolve(claim, r, ctx)
        exact += 1
        if out is None:
            continue
        if out[0] == Verdict.VIOLATED:
            path = keep_record(out[1], ctx.out / claim.id / "violation.json")
            return ClaimVerdict(
                **base, verdict=Verdict.VIOLATED, exact_solves=exact, record=path,
                text="; ".join([f"certified ratio {out[1].ratio_certified:.4g} > bound after a "
                                f"longer exact solve", *notes]), data=data,
            )  # fmt: skip
        resolved += 1
    left = len(hopeful) - resolved
    if hopeful and left > 0:
        return ClaimVerdict(
            **base,
            verdict=Verdict.INCONCLUSIVE,
            exact_solves=exact,
            text="; ".join(
                [
                    f"no certified ratio above the bound, but {left} instance(s) have an optimistic "
                    f"ratio above it (Opt not proved)",
                    *notes,
                ]
            ),  # fmt: skip
            data=data,
        )
    if not good:  # nothing was searched (the policy broke the model on every instance)
        return ClaimVerdict(
            **base,
            verdict=Verdict.INCONCLUSIVE,
            exact_solves=exact,
            text="; ".join(["no instance was evaluated to a ratio: nothing was searched", *notes]),
            data=data,
        )
    where = f"{len(good)} instances" + (f" and {len(given)} given record(s)" if given else "")
    text = (
        f"no certified ratio above the bound in {where}; worst certified "
        f"{fmt(worst_c)}, optimistic {fmt(worst_o)}"
    )
    if claim.bound_fn is not None:
        text += f"; worst ratio/bound {fmt(worst_score)}"
    return ClaimVerdict(
        **base, verdict=Verdict.HOLDS, exact_solves=exact, text="; ".join([text, *notes]), data=data
    )


def _distribution(good: list[Evaluation], claim: Claim, given=()) -> dict[str, list[float]]:
    """What the report plots: every evaluation's ratios; ``given`` the ``--from`` records that
    count (their certified ratio, ratio ÷ bound and path), drawn as their own points."""
    return {
        "ratio_certified": [r.ratio_certified for r in good],
        "ratio_optimistic": [r.ratio_optimistic for r in good],
        "score": [r.score for r in good if r.score is not None],
        "n": [r.n for r in good],
        "memory": [r.memory for r in good],
        "given": [{"record": p, "ratio_certified": r.ratio_certified,
                   "ratio_optimistic": r.ratio_optimistic,
                   "score": r.ratio_certified / claim.bound_for(r.instance)
                   if claim.bound_for(r.instance) else None}
                  for p, r in given],
    }  # fmt: skip


def resolve(claim: Claim, r: Evaluation, ctx: Context):
    """Re-solve one optimistic-only candidate with the longer limit: a violation record, or resolved.

    The candidate's bracket (its log line's) is tightened by one exact solve
    (:func:`kvopt.certify.solve_bracket`): a certified ratio above the bound
    is a violation (its record must pass :func:`~kvopt.record.verify_record`),
    an optimistic ratio at or below it resolves the candidate, anything else
    leaves it open (``None``).
    """
    from ..certify import Effort, solve_bracket, with_policy
    from ..record import record_from_bracket, verify_record
    from ..simulation import simulate

    inst = r.to_instance(name=f"{claim.id}-candidate")
    prior = r.bracket(claim.objective, inst)
    if prior is None:
        return None
    res = simulate(inst, claim.policy, params=dict(claim.params) or None, seed=ctx.seed)
    b = with_policy(prior, inst, res.schedule)
    b = solve_bracket(b, inst, Effort(exact_seconds=ctx.eff.resolve_time_limit))
    bound = claim.bound_for(inst)
    if b.ratio_certified > bound:
        rec = record_from_bracket(
            inst, claim.policy, dict(claim.params), ctx.seed, b,
            found_by={"strategy": "validate-resolve", "evaluation": r.index},
            meta={"claim": claim.id, "bound": bound, "bound_text": claim.bound_text()},
        )  # fmt: skip
        if not verify_record(rec):
            return (Verdict.VIOLATED, rec)
        return None
    if b.ratio_optimistic <= bound:
        return ("resolved", None)
    return None


__all__ = ["ratio_claim", "resolve"]
