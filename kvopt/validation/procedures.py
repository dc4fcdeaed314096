"""The validation procedure of every claim kind, in one registry.

A procedure takes the claim and the run's :class:`~kvopt.validation.context.Context`
and returns its :class:`~kvopt.validation.result.ClaimVerdict`.  ``stage``
orders the procedures of one run: per-job checks (stage 1) also check every
schedule the ratio and growth campaigns (stage 0) simulated, and the area
bound (stage 2) every instance the others solved exactly.  A new kind of
claim needs one new module and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..claim import BOUND, GROWTH, INVARIANT, KINDS, PER_JOB, RATIO, Claim, ClaimKind
from .context import Context
from .growth import growth_claim, growth_experiment
from .lowerbound import bound_check, bound_claim
from .perjob import per_job_claim
from .ratio import ratio_claim
from .result import ClaimVerdict


@dataclass(frozen=True)
class Procedure:
    """How claims of one kind are validated (``run``) and when in a run (``stage``)."""

    run: Callable[[Claim, Context], ClaimVerdict]
    stage: int
    #: Raises when a claim of this kind cannot be validated (checked before anything runs).
    check: Callable[[Claim], object] | None = None


#: The procedure of every claim kind.  Explicit on purpose: grep here.
PROCEDURES: dict[ClaimKind, Procedure] = {
    RATIO: Procedure(ratio_claim, stage=0),
    GROWTH: Procedure(growth_claim, stage=0, check=growth_experiment),
    PER_JOB: Procedure(per_job_claim, stage=1, check=lambda c: _has_check(c)),
    INVARIANT: Procedure(per_job_claim, stage=1, check=lambda c: _has_check(c)),
    BOUND: Procedure(bound_claim, stage=2, check=bound_check),
}
assert set(PROCEDURES) == set(KINDS)


def _has_check(claim: Claim) -> None:
    from ..claimchecks import CHECKS

    if claim.id not in CHECKS:
        raise LookupError(
            f"{claim.kind} claim {claim.id!r} has no check in kvopt.claimchecks.CHECKS"
        )


def procedure_for(claim: Claim) -> Procedure:
    """The claim's procedure, after checking that it can run (:class:`LookupError` otherwise)."""
    proc = PROCEDURES[claim.kind]
    if proc.check is not None:
        proc.check(claim)
    return proc


__all__ = ["PROCEDURES", "Procedure", "procedure_for"]
