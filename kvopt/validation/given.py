"""Records a user already has (``kvopt validate --from RECORD_OR_DIR``, issue 55).

A search record (SPEC §8) is certified evidence: its ratio ``ALG/UB`` is a lower
bound on the policy's true ratio on its instance.  Before a ratio claim with a
constant (or a formula) is attacked, every given record is checked against it:

* it counts for the claim when it is about the claim's policy with the same
  (resolved) parameters and objective, and its instance is in the claim's class
  (the policy's own class check and the claim's structural rules; the size
  ranges only bound where validation searches);
* such a record that :func:`kvopt.record.verify_record` accepts (both schedules
  pass the checker, the numbers are theirs, the policy replays) and whose
  certified ratio exceeds the claim's bound on its instance makes the claim
  ``violated`` at once, with the record (copied to ``OUT/<claim>/violation.json``)
  as the evidence: no search runs;
* otherwise the claim is searched as usual, and the valid given records in the
  class count as the search's own finds (issue 68): the verdict's worst
  certified and optimistic ratios are over both, and when a given record is the
  worst, it is the verdict's ``worst_record`` (copied to
  ``OUT/<claim>/worst-certified.json``) and a point of the report's plot; the
  scope says how many given records were in the class and their worst certified
  ratio.

A folder is searched recursively for record files (``"format": "kvopt.record"``);
other JSON files there (campaign headers, instances) are skipped.  A file given by
name that is not a readable record is bad input (exit status 2).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..claim import Claim
from ..errors import InputError
from ..record import Record, load_record
from .context import Context, keep_record, notes_for
from .result import ClaimVerdict, Verdict


def load_given(paths: Sequence[str | Path]) -> list[tuple[str, Record]]:
    """The records of ``paths`` (files, or folders searched for record files)."""
    out: list[tuple[str, Record]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            for f in sorted(path.rglob("*.json")):
                if _is_record(f):
                    out.append((str(f), load_record(f)))
        elif path.is_file():
            out.append((str(path), load_record(path)))
        else:
            raise InputError("no such file or folder", source=f"--from {given}")
    if paths and not out:
        raise InputError("holds no record file (kvopt.record)", source=f"--from {paths[0]}")
    return out


def _is_record(path: Path) -> bool:
    try:
        head = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(head, dict) and head.get("format") == "kvopt.record"


def applies(claim: Claim) -> bool:
    """Whether given records can decide ``claim``: a ratio claim about one policy with a bound."""
    return (
        claim.kind == "ratio"
        and claim.policy is not None
        and (claim.bound is not None or claim.bound_fn is not None)
    )


def _same_policy(rec: Record, claim: Claim) -> bool:
    from ..policy import get_policy

    if rec.objective != claim.objective:
        return False
    try:
        mine, theirs = get_policy(claim.policy), get_policy(rec.policy)
    except InputError:
        return False
    if mine.name != theirs.name:
        a, b = mine.code, theirs.code
        if a is None or b is None or (a.path, a.attr) != (b.path, b.attr):
            return False
    try:
        return mine.resolve_params(dict(claim.params)) == mine.resolve_params(dict(rec.params))
    except InputError:
        return False


def _in_class(rec: Record, claim: Claim) -> bool:
    from ..policy import get_policy

    inst = rec.instance
    spec = get_policy(claim.policy)
    try:
        if spec.check and spec.check(inst, spec.resolve_params(dict(claim.params))):
            return False
    except InputError:
        return False
    return claim.rule(inst) is None


def check_given(
    claim: Claim, given: Sequence[tuple[str, Record]], ctx: Context
) -> tuple[ClaimVerdict | None, dict[str, Any]]:
    """A ``violated`` verdict from a given record, or ``None``; and what the scope reports
    (``given``, ``in_class``, ``worst_certified`` and its file ``worst_record``, ``invalid``:
    records in the class that :func:`~kvopt.record.verify_record` refused); sets
    ``ctx.given`` to the valid records in the class (the procedure counts them)."""
    from ..record import verify_record

    mine = [(p, r) for p, r in given if _same_policy(r, claim)]
    inside = [(p, r) for p, r in mine if _in_class(r, claim)]
    info: dict[str, Any] = {"given": len(given), "in_class": len(inside), "worst_certified": None,
                            "invalid": 0}  # fmt: skip
    valid = []
    for path, rec in inside:
        if verify_record(rec):
            info["invalid"] += 1
            continue
        valid.append((path, rec))
    ctx.given = valid
    if valid:
        info["worst_certified"] = max(r.ratio_certified for _, r in valid)
        info["worst_record"] = max(valid, key=lambda g: g[1].ratio_certified)[0]
    beating = [(r.ratio_certified / claim.bound_for(r.instance), p, r) for p, r in valid
               if r.ratio_certified > claim.bound_for(r.instance)]  # fmt: skip
    if not beating:
        return None, info
    _, path, rec = max(beating, key=lambda b: b[0])
    bound = claim.bound_for(rec.instance)
    kept = keep_record(rec, ctx.out / claim.id / "violation.json")
    text = (f"certified ratio {rec.ratio_certified:.4g} > bound {bound:.4g} on the given record "
            f"{path} (n={rec.instance.n}, M={rec.instance.memory}, {rec.opt_status} Opt); "
            "no search was needed")  # fmt: skip
    v = ClaimVerdict(
        id=claim.id,
        verdict=Verdict.VIOLATED,
        bound=claim.bound if claim.bound is not None else claim.bound_formula,
        bound_text=claim.bound_text(),
        worst_certified_ratio=info["worst_certified"],
        worst_optimistic_ratio=max(r.ratio_optimistic for _, r in valid),
        instances=0,
        exact_solves=0,
        seconds=0.0,
        text="; ".join([text, *notes_for(claim)]),
        record=kept,
        kind=claim.kind,
        data={"from": path},
    )
    return v, info


__all__ = ["applies", "check_given", "load_given"]
