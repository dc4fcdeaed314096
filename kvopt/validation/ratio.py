"""Ratio claims: adversarial campaigns against the bound, longer re-solves, a scaling sweep.

See :mod:`kvopt.validation` for the procedure and its verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..campaign.strategies import fit_exponent
from ..campaign.types import Evaluation, OptStatus
from ..claim import Claim
from .context import Context, keep_record, notes_for
from .effort import GROWTH_TOLERANCE, split
from .result import ClaimVerdict, Verdict, fmt


def ratio_claim(claim: Claim, ctx: Context) -> ClaimVerdict:
    """Campaigns inside the claim's class against its bound (a scaling sweep without one)."""
    from ..record import load_record, verify_record

    eff = ctx.eff
    logs: list[Evaluation] = []
    exact = 0
    records = []
    errors = 0
    for strategy, budget, sec in split(eff):
        res, log = ctx.campaign(claim, strategy, budget, sec)
        logs.extend(log.values())
        exact += res.exact_solves
        errors += res.errors
        if res.best and res.best.record:
            records.append((res.best.score or 0.0, res.best.record))
    sweep = None
    if claim.bound is None and claim.bound_fn is None:
        sweep, s_exact, s_logs = scaling(claim, ctx)
        exact += s_exact
        logs.extend(s_logs)
    good = [r for r in logs if r.certified]
    worst_c = max((r.ratio_certified for r in good), default=None)
    worst_o = max((r.ratio_optimistic for r in good), default=None)
    notes = notes_for(claim)
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
        kind=claim.kind,
        seconds=0.0,
    )
    if claim.bound is None and claim.bound_fn is None:  # "some constant": growth, no violation
        e_n, e_m = sweep.exponent_n, sweep.exponent_memory
        grows = any(e is not None and e > GROWTH_TOLERANCE for e in (e_n, e_m))
        text = (
            f"no constant given; worst certified ratio {fmt(worst_c)} (optimistic {fmt(worst_o)}) "
            f"over {len(good)} instances; growth exponent of the worst certified ratio "
            f"{fmt(e_n)} in n and {fmt(e_m)} in M over the scaling sweep"
        )
        if grows:
            text += f" (above {GROWTH_TOLERANCE}: a constant bound is not supported by this range)"
        return ClaimVerdict(
            **base,
            verdict=Verdict.INCONCLUSIVE if grows else Verdict.HOLDS,
            exact_solves=exact,
            text="; ".join([text, *notes]),
            data={"scaling": sweep.to_dict(), "distribution": _distribution(good)},
        )
    # a bound: certified violations, optimistic-only ones, or none
    viol = [r for r in good if (r.score or 0.0) > 1 + 1e-12]
    worst_score = max((r.score or 0.0 for r in good), default=None)
    data = {"worst_score": worst_score, "distribution": _distribution(good)}
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
    text = (
        f"no certified ratio above the bound in {len(good)} instances; worst certified "
        f"{fmt(worst_c)}, optimistic {fmt(worst_o)}"
    )
    if claim.bound_fn is not None:
        text += f"; worst ratio/bound {fmt(worst_score)}"
    return ClaimVerdict(
        **base, verdict=Verdict.HOLDS, exact_solves=exact, text="; ".join([text, *notes]), data=data
    )


def _distribution(good: list[Evaluation]) -> dict[str, list[float]]:
    return {
        "ratio_certified": [r.ratio_certified for r in good],
        "ratio_optimistic": [r.ratio_optimistic for r in good],
        "score": [r.score for r in good if r.score is not None],
        "n": [r.n for r in good],
        "memory": [r.memory for r in good],
    }


def resolve(claim: Claim, r: Evaluation, ctx: Context):
    """Re-solve one optimistic-only candidate with the longer limit: a violation record, or resolved."""
    import numpy as np

    from ..campaign.evaluate import cheap_lb, exact_opt
    from ..record import make_record, verify_record
    from ..schedule import Schedule
    from ..simulation import simulate

    inst = r.to_instance(name=f"{claim.id}-candidate")
    ex = exact_opt(inst, claim.objective, ctx.eff.resolve_time_limit, np.asarray(r.ub_starts))
    if ex.objective is None:
        return None
    bound = claim.bound_for(inst)
    alg = r.alg
    if alg / ex.objective > bound:
        res = simulate(inst, claim.policy, params=dict(claim.params) or None)
        lb = max(cheap_lb(inst, claim.objective)[0], ex.bound or 0)
        status = OptStatus.OPTIMAL if ex.optimal else OptStatus.FEASIBLE
        rec = make_record(
            inst, claim.policy, dict(claim.params), ctx.seed, claim.objective, res.schedule,
            Schedule.from_starts(inst, ex.starts, producer="exact"), ex.objective if ex.optimal else lb,
            status, found_by={"strategy": "validate-resolve", "evaluation": r.index},
            meta={"claim": claim.id, "bound": bound, "bound_text": claim.bound_text()},
        )  # fmt: skip
        if not verify_record(rec):
            return (Verdict.VIOLATED, rec)
        return None
    if ex.optimal:
        return ("resolved", None)
    if ex.bound is not None and alg / ex.bound <= bound:
        return ("resolved", None)
    return None


@dataclass(frozen=True)
class Scaling:
    """The scaling sweep of a constant-free ratio claim: worst certified ratio per n and per M,
    the fitted exponents, and every evaluated point (``rows``)."""

    points_n: list[tuple[int, float]]
    points_memory: list[tuple[int, float]]
    exponent_n: float | None
    exponent_memory: float | None
    rows: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "points_n": [list(p) for p in self.points_n],
            "points_memory": [list(p) for p in self.points_memory],
            "exponent_n": self.exponent_n,
            "exponent_memory": self.exponent_memory,
            "rows": self.rows,
        }


def scaling(claim: Claim, ctx: Context) -> tuple[Scaling, int, list[Evaluation]]:
    """Worst certified ratio against n and M on random instances of growing size."""
    from ..campaign import search

    eff = ctx.eff
    fam = "arrivals" if claim.space is not None and claim.space.arrivals else "random"
    params: dict[str, Any] = {"n": list(eff.scaling_ns), "memory": list(eff.scaling_memories)}
    if fam == "random":
        params["max_response"] = 0
    folder = ctx.out / claim.id / "scaling"
    res = search(
        claim.policy,
        strategy="family",
        params=dict(claim.params) or None,
        family=fam,
        family_params=params,
        claim=claim.id,
        seed=ctx.seed,
        out=folder,
        workers=ctx.workers,
        scheduler=ctx.scheduler,
        exact_time_limit=eff.exact_time_limit,
        options={"seeds": eff.scaling_seeds},
        progress=ctx.show,
        label=f"{claim.id}: scaling",
    )
    log = ctx.collect(claim, res, folder, remember=False)
    good = [r for r in log.values() if r.certified]
    by_n: dict[int, float] = {}
    by_m: dict[int, float] = {}
    for r in good:
        by_n[r.n] = max(by_n.get(r.n, 0.0), r.ratio_certified)
        by_m[r.memory] = max(by_m.get(r.memory, 0.0), r.ratio_certified)
    pts_n = sorted(by_n.items())
    pts_m = sorted(by_m.items())
    out = Scaling(
        points_n=pts_n,
        points_memory=pts_m,
        exponent_n=fit_exponent([p[0] for p in pts_n], [p[1] for p in pts_n]),
        exponent_memory=fit_exponent([p[0] for p in pts_m], [p[1] for p in pts_m]),
        rows=[
            {
                "n": r.n,
                "memory": r.memory,
                "ratio_certified": r.ratio_certified,
                "ratio_optimistic": r.ratio_optimistic,
                "opt_status": r.opt_status,
            }
            for r in good
        ],  # fmt: skip
    )
    return out, res.exact_solves, list(log.values())


__all__ = ["ratio_claim", "resolve", "scaling"]
