"""Lower-bound claims (``area-lb``, Lemma 1): the bound never exceeds a checked schedule's value,
on every instance solved exactly during the validation and on a fresh sample."""

from __future__ import annotations

from collections.abc import Callable

from ..campaign.log import read_log
from ..campaign.types import Evaluation, ExactStatus, OptStatus
from ..claim import Claim
from .context import Context
from .result import ClaimVerdict, Verdict, fmt

_EXACT = (ExactStatus.SOLVED, ExactStatus.CACHED)


def area_claim(claim: Claim, ctx: Context) -> ClaimVerdict:
    """Lemma 1 on every instance solved exactly in this validation, and on a fresh sample."""
    import numpy as np

    from ..bound import area_bound
    from ..certify import BracketError, Effort, bracket
    from ..space import space_from_dict

    checked, solves = 0, 0
    worst = None
    violation = None
    seen: set[str] = set()
    for path in ctx.exact_logs:
        for r in read_log(path).values():
            if not r.certified or r.key in seen:
                continue
            if r.exact not in _EXACT and r.opt_status != OptStatus.OPTIMAL:
                continue
            seen.add(r.key)
            inst = r.to_instance()
            area = area_bound(inst)
            ub = _total_ub(inst, r)
            checked += 1
            worst = max(worst or 0.0, area / ub)
            if area > ub and violation is None:
                violation = (inst, area, ub)
    rng = np.random.default_rng([ctx.seed, 17])
    sp = space_from_dict(ctx.sizes, base=claim.space) if ctx.sizes else claim.space
    for _ in range(ctx.eff.area_solves):
        inst = sp.sample(rng)
        area = area_bound(inst)
        solves += 1
        checked += 1
        try:  # the bracket's merge rule raises when a lower bound (area's) exceeds a schedule
            ub = bracket(None, inst, Effort(exact_seconds=ctx.eff.exact_time_limit)).ub
        except BracketError as err:
            if violation is None:
                violation = (inst, area, str(err))
            continue
        worst = max(worst or 0.0, area / ub)
        if area > ub and violation is None:
            violation = (inst, area, ub)
    base = dict(id=claim.id, bound=1.0, bound_text="area/Opt <= 1", worst_certified_ratio=worst,
                worst_optimistic_ratio=worst, instances=checked, exact_solves=solves,
                kind=claim.kind, seconds=0.0)  # fmt: skip
    if violation:
        inst, area, ub = violation
        what = f"a checked schedule of value {ub}" if isinstance(ub, int) else f"Opt ({ub})"
        return ClaimVerdict(**base, verdict=Verdict.VIOLATED,
                            text=f"area bound {area} exceeds {what} on "
                                 f"n={inst.n}, M={inst.memory}")  # fmt: skip
    return ClaimVerdict(
        **base,
        verdict=Verdict.HOLDS,
        text=f"area bound <= Opt (or a checked schedule's value) on {checked} instances solved "
        f"exactly; largest area/Opt {fmt(worst)}",
    )


def _total_ub(inst, r: Evaluation) -> int:
    """The total completion of the evaluation's clairvoyant schedule (its ``ub`` is in its objective)."""
    import numpy as np

    return int((np.asarray(r.ub_starts) + inst.responses).sum())


#: The procedure of every lower-bound claim, by claim id (each bound has its own check).
BOUND_CHECKS: dict[str, Callable[[Claim, Context], ClaimVerdict]] = {"area-lb": area_claim}


def bound_check(claim: Claim) -> Callable[[Claim, Context], ClaimVerdict]:
    """The check of lower-bound claim ``claim``; :class:`LookupError` if it has none."""
    try:
        return BOUND_CHECKS[claim.id]
    except KeyError:
        raise LookupError(
            f"bound claim {claim.id!r} has no check in kvopt.validation.lowerbound.BOUND_CHECKS"
        ) from None


def bound_claim(claim: Claim, ctx: Context) -> ClaimVerdict:
    return bound_check(claim)(claim, ctx)


__all__ = ["BOUND_CHECKS", "area_claim", "bound_check", "bound_claim"]
