"""Per-run checks of the per-job and invariant claims of SPEC §7, and per-instance bounds.

:func:`claim_metrics` takes a claim id, an instance and the policy's
simulation (run with ``instrument=True``) and returns

* ``score`` — how close the run comes to breaking the claim: for a per-job
  claim ``max_i lhs_i / rhs_i``, for queue monotonicity the worst ratio of the
  two sides; ``> 1`` exactly when the claim is broken;
* ``violation`` — the first broken inequality (job, round, both sides, in
  words), else ``None``;
* ``bound`` for ratio claims (their constant, or the formula's value on the
  instance).

Checks, with exact integer/fraction arithmetic:

* ``rect-per-job`` (main paper, Lemma 5): ``C_i ≤ 4 p_i + (4/U) Σ_j min(A_i, A_j)``
  with ``A = w·p``, ``w_i = M`` (large) or ``2 s_i``, ``p_i = o_i``,
  ``U = max(δ, M − Δ)`` over the instance's widths ``[δ, Δ]``;
* ``rect-monotone`` (Lemma 4): over Rect's settled states (after every
  admission scan) the minimum pending budget never decreases (states with an
  empty queue have none) and every active attempt's budget is ≤ every
  pending budget (``max active ≤ min pending``);
* ``blackbox-per-job`` (Lemma 10): ``C_i ≤ (2(k+ℓ−1)+1) C_i^ℓ`` (which implies
  ``≤ (4k−1) C_i^ℓ``), ``C_i^ℓ`` the completion of ``i`` when part ``ℓ``'s
  sub-policy runs alone on its part;
* ``route-per-job`` (Lemma 11 / Theorem 1): ``C_i ≤ 7 C^P_i`` (prompt-heavy),
  ``11 C^L_i`` (large), ``max(8 C^P_i + C^R_i, 9 C^R_i)`` (response-heavy);
* ``response-subset`` (Lemma 15): Response on a subset containing ``i``
  finishes ``i`` no later than Response on all jobs — checked on every
  leave-one-out subset and on ``subsets`` further subsets drawn with a
  generator seeded by the instance (so the check is deterministic).

These are the papers' statements for ``lam = 0.25`` and ``base = 2``
(SPEC §7); the claims registry fixes those parameters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .claim import INVARIANT, PER_JOB, RATIO, get_claim
from .instance import Instance


def _per_job(C, rhs, what: str) -> dict[str, Any]:
    score, worst = Fraction(0), None
    for i, (c, r) in enumerate(zip(C, rhs)):
        if r is None:
            continue
        r = Fraction(r)
        s = Fraction(int(c)) / r if r > 0 else Fraction(10**9)
        if s > score:
            score, worst = s, (i, int(c), r)
    violation = None
    if worst is not None and score > 1:
        i, c, r = worst
        violation = {
            "job": i,
            "round": c,
            "lhs": c,
            "rhs": float(r),
            "rhs_exact": str(r),
            "text": f"job {i} completes at round {c} > {what} = {float(r):.4g}",
        }
    return {"score": float(score), "violation": violation}


def _rect_per_job(inst: Instance, res) -> dict[str, Any]:
    from .policy.rect import lemma5_bounds, widths

    lam = Fraction(1, 4)
    w = widths(inst.prompts.tolist(), inst.memory, lam)
    vals, _U = lemma5_bounds(inst.memory, w, inst.responses.tolist())
    return _per_job(res.completion_times, vals, "Lemma 5's 4p_i + (4/U) sum_j min(A_i, A_j)")


def _rect_monotone(inst: Instance, res) -> dict[str, Any]:
    states = (res.instrumentation or {}).get("queue_states", [])
    score, violation = Fraction(0), None
    prev = None
    for t, pend, act in states:
        if pend is not None and act is not None:
            s = Fraction(act, pend)
            if s > score:
                score = s
                if s > 1 and violation is None:
                    violation = {"job": None, "round": int(t), "lhs": int(act), "rhs": int(pend),
                                 "text": f"round {t}: an active budget {act} exceeds the minimum "
                                         f"pending budget {pend}"}  # fmt: skip
        if pend is not None:
            if prev is not None:
                s = Fraction(prev, pend)
                if s > score:
                    score = s
                if s > 1 and violation is None:
                    violation = {"job": None, "round": int(t), "lhs": int(prev), "rhs": int(pend),
                                 "text": f"round {t}: the minimum pending budget fell from {prev} "
                                         f"to {pend}"}  # fmt: skip
            prev = pend
    return {"score": float(score), "violation": violation, "states": len(states)}


def _blackbox_per_job(inst: Instance, res) -> dict[str, Any]:
    rep = res.instrumentation or {}
    return _per_job(res.completion_times, rep.get("bound", []), "(2(k+l-1)+1) C_i^l")


def _route_per_job(inst: Instance, res) -> dict[str, Any]:
    from .engine.core import run_alone
    from .policy.route import route_bounds

    p = dict(res.params)
    lam, base, stagger = p.get("lam", 0.25), p.get("base", 2), p.get("stagger", True)
    b = route_bounds(inst, lam, base, stagger, run=run_alone)
    return _per_job(res.completion_times, b["bound"], "its branch bound (Lemma 11)")


def _response_subset(inst: Instance, res, subsets: int = 6) -> dict[str, Any]:
    from .simulation import simulate

    n = inst.n
    full = res.completion_times
    seed = int(hashlib.sha256(repr(inst.to_dict()["jobs"]).encode()).hexdigest()[:8], 16)
    rng = np.random.default_rng(seed)
    subs = [[j for j in range(n) if j != k] for k in range(n)] if n > 1 else []
    for _ in range(subsets if n > 2 else 0):
        mask = rng.random(n) < 0.5
        sub = [j for j in range(n) if mask[j]]
        if 0 < len(sub) < n:
            subs.append(sub)
    score, violation = Fraction(0), None
    for sub in subs:
        r = simulate(inst.subset(sub), "response", params={"base": 2})
        for idx, j in enumerate(sub):
            s = Fraction(int(r.completion_times[idx]), int(full[j]))
            if s > score:
                score = s
            if s > 1 and violation is None:
                violation = {
                    "job": j,
                    "round": int(r.completion_times[idx]),
                    "lhs": int(r.completion_times[idx]),
                    "rhs": int(full[j]),
                    "subset": sub,
                    "text": f"job {j} completes at {r.completion_times[idx]} in Response on the "
                    f"subset {sub} but at {full[j]} on all jobs",
                }
    return {"score": float(score), "violation": violation, "subsets": len(subs)}


@dataclass(frozen=True)
class Check:
    """The per-run check of a per-job or invariant claim, and what it needs from the run.

    ``instrument`` says whether ``run`` reads the policy's instrumentation
    (``simulate(..., instrument=True)``: Rect's queue states, BlackBoxMeta's
    isolated runs); evaluations simulate with it exactly when the check asks.
    """

    run: Callable[[Instance, Any], dict[str, Any]]
    instrument: bool = False


#: The check of every per-job and invariant claim, by claim id.  Explicit on purpose: grep here.
CHECKS: dict[str, Check] = {
    "rect-per-job": Check(_rect_per_job),
    "rect-monotone": Check(_rect_monotone, instrument=True),
    "blackbox-per-job": Check(_blackbox_per_job, instrument=True),
    "route-per-job": Check(_route_per_job),
    "response-subset": Check(_response_subset),
}


def claim_metrics(claim_id: str, inst: Instance, res) -> dict[str, Any]:
    """``score``/``violation`` (per-job and invariant claims) or ``bound`` (ratio claims)."""
    claim = get_claim(claim_id)  # a user's claim too (registered by its campaign's worker)
    if claim.kind in (PER_JOB, INVARIANT):
        return CHECKS[claim_id].run(inst, res)
    if claim.kind == RATIO:
        return {"bound": claim.bound_for(inst)}
    return {}


def needs_instrument(claim_id: str | None) -> bool:
    """Whether the claim's check reads the policy's instrumentation (its :class:`Check` says)."""
    check = CHECKS.get(claim_id) if claim_id else None
    return check is not None and check.instrument


__all__ = ["CHECKS", "Check", "claim_metrics", "needs_instrument"]
