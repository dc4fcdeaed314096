"""Per-job and invariant claims: campaigns that maximise the slack ``max_i lhs_i/rhs_i`` of the
claim's check (:data:`kvopt.claimchecks.CHECKS`), and the check on every other schedule of the
same policy simulated during the validation."""

from __future__ import annotations

from ..claim import Claim
from .context import Context, keep_record, notes_for, policy_key
from .effort import split
from .result import ClaimVerdict, Verdict, fmt


def per_job_claim(claim: Claim, ctx: Context) -> ClaimVerdict:
    """Campaigns maximising the slack, and the check on every other run of the policy."""
    from ..claimchecks import claim_metrics, needs_instrument
    from ..simulation import simulate

    logs = []
    records = []
    for strategy, budget, sec in split(ctx.eff):
        res, log = ctx.campaign(claim, strategy, budget, sec)
        logs.extend(r for r in log.values() if not r.failed)
        if res.best and res.best.record:
            records.append((res.best.score or 0.0, res.best.record))
    scores = [r.score for r in logs]
    # every other schedule of this policy simulated during the validation
    seen_keys = {r.key for r in logs}
    extra = 0
    extra_viol = None
    worst_run = None  # (instance, result, metrics) of the other runs' highest score
    for k, compact in ctx.seen.get(policy_key(claim), {}).items():
        if k in seen_keys:
            continue
        inst = compact.expand()
        if claim.rule(inst) is not None:
            continue
        res = simulate(inst, claim.policy, params=dict(claim.params) or None,
                       instrument=needs_instrument(claim.id))  # fmt: skip
        m = claim_metrics(claim.id, inst, res)
        extra += 1
        scores.append(m["score"])
        if worst_run is None or m["score"] > worst_run[2]["score"]:
            worst_run = (inst, res, m)
        if m["violation"] and extra_viol is None:
            extra_viol = (inst, res, m)
    worst = max(scores, default=None)
    notes = notes_for(claim)
    worst_record = None  # the record behind the worst lhs/rhs, as a ratio claim names its own
    if worst is not None and records and max(records)[0] >= worst:
        worst_record = max(records)[1]  # a campaign's best: it maximised this score
    elif worst is not None and worst_run is not None:  # a run of another claim's campaign
        worst_record = keep_record(_record_for_run(claim, *worst_run, seed=ctx.seed),
                                   ctx.out / claim.id / "worst.json")  # fmt: skip
    if worst_record is not None:
        notes.append(f"worst lhs/rhs {fmt(worst)} on the instance of {worst_record}")
    base = dict(
        id=claim.id, bound=1.0, bound_text="lhs/rhs <= 1", worst_certified_ratio=worst,
        worst_optimistic_ratio=worst, instances=len(logs) + extra, exact_solves=0,
        kind=claim.kind, seconds=0.0, data={"scores": scores}, worst_record=worst_record,
    )  # fmt: skip
    viol = [r for r in logs if (r.score or 0) > 1]
    if viol or extra_viol:
        from ..record import load_record, verify_record

        path = None
        text = ""
        if viol:
            best = max(records)[1]
            rec = load_record(best)
            if not verify_record(rec):
                path = keep_record(rec, ctx.out / claim.id / "violation.json")
            v = max(viol, key=lambda r: r.score).violation
            text = v["text"]
        else:
            rec = _record_for_run(claim, *extra_viol, seed=ctx.seed)
            path = keep_record(rec, ctx.out / claim.id / "violation.json")
            text = extra_viol[2]["violation"]["text"]
        return ClaimVerdict(**base, verdict=Verdict.VIOLATED, record=path,
                            text="; ".join([text, *notes]))  # fmt: skip
    text = (
        f"no violation in {len(logs) + extra} runs ({extra} from other claims' campaigns); "
        f"worst lhs/rhs {fmt(worst)}"
    )
    return ClaimVerdict(**base, verdict=Verdict.HOLDS, text="; ".join([text, *notes]))


def _record_for_run(claim: Claim, inst, res, metrics, seed: int = 0):
    from ..certify import bracket
    from ..record import record_from_bracket

    b = bracket(res.schedule, inst, objective=claim.objective)
    return record_from_bracket(
        inst, claim.policy, dict(claim.params), seed, b, found_by={"strategy": "validate"},
        meta={"claim": claim.id, "violation": metrics["violation"], "score": metrics["score"]},
    )  # fmt: skip


__all__ = ["per_job_claim"]
