"""Theorem-claim validation (``kvopt validate``, SPEC §7): one verdict per claim, with evidence.

For every claim of the registry (:mod:`kvopt.claim`) a procedure of its kind:

* **ratio claims** (``rect-large`` … ``mcsf``): adversarial search campaigns
  inside the claim's class (:func:`kvopt.campaign.search` with ``claim=``; the
  strategies ``anneal`` and ``random`` share the budget) that maximise the
  certified ratio divided by the claim's bound (the bound is a constant or,
  for ``greedy-area``/``svf``, ``1 + 2/(1−α)`` evaluated per instance).
  ``violated`` only when some **certified** ratio exceeds the bound — with a
  record (SPEC §8) that :func:`kvopt.record.verify_record` accepts;
  ``inconclusive`` when only optimistic ratios exceed it (the most promising
  of those are first re-solved with a longer time limit); ``holds``
  otherwise, with the worst certified and optimistic ratios and the effort.
  Claims without a constant (``route``, ``route-makespan``, ``route-online``)
  are judged by growth sweeps (SPEC §9, :mod:`kvopt.validation.sweeps`) of
  their worst records: ``holds`` when every direction swept is ``bounded``,
  ``inconclusive`` when one is ``unclear``, ``violated`` when one ``grows``
  with certified ratios.
* **per-job and invariant claims**: campaigns that maximise the slack
  ``max_i lhs_i/rhs_i`` (:mod:`kvopt.claimchecks`), plus the check on every
  other schedule of the same policy simulated during this validation; a
  violation is a record naming the job, round and both sides.
* **area-lb**: on every instance solved exactly during the validation, plus
  its own sample of instances solved exactly: the area bound never exceeds a
  checked schedule's value (a certified violation otherwise).
* **growth claims** (``single-priority``, ``online-sqrt-n``): the lower-bound
  constructions (:mod:`kvopt.validation.growth`, one experiment per claim id in
  ``GROWTH_EXPERIMENTS``) with fitted exponents; ``reproduced`` when every
  single-priority rule (every attacked policy) grows with exponent ≥
  :data:`REPRODUCED_EXPONENT`, else ``inconclusive``.  ``fcfs-growth`` and
  ``sf-growth`` have no construction: a typed campaign per policy, then growth
  sweeps of its best records; ``reproduced`` with the family found when a
  direction grows for every policy, else ``inconclusive`` with the effort.

Claims that rest on the SPS reconstruction say so in their text (a
violation is then evidence against the reconstruction, not the paper); the
claims of Route and BlackBoxMeta say which slot mode was validated (literal
slots, the paper's reading).

Campaign folders are ``OUT/<claim>/<strategy>/``: a rerun with the same
``--out`` and options resumes them.

Every verdict carries its **scope** (:mod:`~kvopt.validation.scope`): the space
its campaigns searched, the evaluations and the seconds — ``holds`` says
nothing beyond it.  ``records`` (``--from RECORD_OR_DIR``,
:mod:`~kvopt.validation.given`) are checked first: a valid record inside a
ratio claim's class whose certified ratio beats the bound makes the claim
``violated`` at once, with that record as the evidence.

Modules: :mod:`~kvopt.validation.result` (verdicts), :mod:`~kvopt.validation.effort`
(budgets), :mod:`~kvopt.validation.procedures` (the registry of procedures by
claim kind), one module per kind (:mod:`~kvopt.validation.ratio`,
:mod:`~kvopt.validation.perjob`, :mod:`~kvopt.validation.lowerbound`,
:mod:`~kvopt.validation.growth`, :mod:`~kvopt.validation.sweeps`),
:mod:`~kvopt.validation.context` (what they share).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..claim import CLAIMS, Claim, get_claim, register_claim
from ..errors import InputError
from ..fileio import write_json_atomic
from .context import Context
from .effort import GROWTH_TOLERANCE, QUICK, REPRODUCED_EXPONENT, Effort, effort_dict
from .given import applies, check_given, load_given
from .growth import GROWTH_INPUT_CHECKS
from .procedures import PROCEDURES, procedure_for
from .result import VERDICTS, ClaimVerdict, ValidationResult, Verdict, format_table
from .scope import Scope, scope_of


def _resolve_ids(claims: Sequence[str] | str | None) -> list[str]:
    if claims is None:
        return list(CLAIMS)
    if isinstance(claims, str):
        claims = [c.strip() for c in claims.split(",") if c.strip()]
    if not claims:
        raise InputError(f"no claim given (valid: {', '.join(CLAIMS)})", source="--claims")
    ids = []
    for c in claims:
        get_claim(c)  # InputError listing the valid ids
        if c not in ids:
            ids.append(c)
    return ids


def validate(
    claims: Sequence[str] | str | None = None,
    *,
    quick: bool = False,
    budget: int | None = None,
    seconds: float | None = None,
    seed: int = 0,
    workers: int = 1,
    scheduler: str | None = None,
    out: str | os.PathLike | None = None,
    report: str | os.PathLike | None = None,
    progress: bool | None = None,
    effort: Effort | None = None,
    space: dict[str, Any] | None = None,
    user_claims: Sequence[Claim] = (),
    records: Sequence[str | os.PathLike] = (),
) -> ValidationResult:
    """Validate SPEC §7 claims (all by default); return the verdicts (see the module docstring).

    ``quick`` uses small budgets (every claim; about 21 minutes on 2 cores at seed 1,
    most of it in the growth sweeps of the constant-free and discovery claims);
    ``budget`` (evaluations) and ``seconds`` apply per claim;
    ``workers``/``scheduler`` as in :func:`kvopt.campaign.search`; ``out`` keeps
    the campaigns (default ``kvopt-validate``), so a rerun resumes;
    ``report`` writes a Markdown report with PNG plots beside it; ``space``
    overrides the size ranges of every claim's search space (``n_min``,
    ``n_max``, ``memory_min``, ``memory_max``, ``max_response``,
    ``max_arrival``; the structural rules of each class stay); ``kind="typed"``
    (with ``types_max``, ``count_max``) searches the typed space of SPEC §9.
    ``user_claims`` are a user's own claims (SPEC §4; :func:`kvopt.validation.user.make_claim`,
    :func:`~kvopt.validation.user.load_claims_file`), validated with the same procedures;
    with them and no ``claims``, only they run.  ``records`` are record files or folders the
    user already has (``--from``; :mod:`kvopt.validation.given`): one that beats a ratio
    claim's bound inside its class decides the claim (``violated``) before any search.
    Every verdict has its ``scope`` (:class:`~kvopt.validation.scope.Scope`).

    >>> res = validate(["area-lb"], quick=True, out=tmp / "v", progress=False)
    >>> res.verdict("area-lb").verdict == "holds"
    True
    """
    from ..campaign.runner import progress_enabled

    for c in user_claims:
        if not isinstance(c, Claim):
            raise InputError(f"must be Claim objects, got {type(c).__name__}", source="user_claims")
        register_claim(c)
    ids = [] if (claims is None and user_claims) else _resolve_ids(claims)
    ids += [c.id for c in user_claims if c.id not in ids]
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, int) or budget < 1
    ):
        raise InputError(f"must be an integer >= 1, got {budget!r}", source="--budget")
    if seconds is not None and not (isinstance(seconds, int | float) and seconds > 0):
        raise InputError(
            f"must be a positive number of seconds, got {seconds!r}", source="--seconds"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"must be an integer >= 0, got {seed!r}", source="--seed")
    eff = effort or (QUICK if quick else Effort())
    if budget is not None:
        eff = replace(eff, budget=budget)
    if seconds is not None:
        eff = replace(eff, seconds=float(seconds))
    default_out = out is None
    out = Path(out if out is not None else "kvopt-validate")
    _writable(out, "--out")
    if report is not None:
        _writable(Path(report).parent if str(Path(report).parent) else Path("."), "--report")
    show = progress_enabled(progress)
    sizes = dict(space or {})
    allowed = {"n_min", "n_max", "memory_min", "memory_max", "max_response", "max_arrival",
               "kind", "types_max", "count_max"}  # fmt: skip
    bad = sorted(set(sizes) - allowed)
    if bad:
        raise InputError(
            f"only size ranges can change ({', '.join(sorted(allowed))})",
            source=f"--space {bad[0]}",
        )
    if sizes:  # a bad kind or field fails here, before any claim runs
        from ..space import space_from_dict

        space_from_dict(sizes)
    procs = {c: procedure_for(get_claim(c)) for c in ids}  # every claim can run, before any does
    given = load_given([str(r) for r in records]) if records else []
    for c in ids:
        if c in GROWTH_INPUT_CHECKS:
            GROWTH_INPUT_CHECKS[c](eff, sizes)
    ctx = Context(eff, seed, workers, scheduler, out, show, sizes)
    t0 = time.monotonic()
    verdicts: dict[str, ClaimVerdict] = {}
    for cid in sorted(ids, key=lambda c: procs[c].stage):  # stable: the given order within a stage
        claim = get_claim(cid)
        ctx.say(f"claim {cid} ({claim.kind}): {claim.statement}")
        t1 = time.monotonic()
        ctx.used = []
        ctx.given = []
        v, info = None, None
        if given and applies(claim):
            v, info = check_given(claim, given, ctx)  # sets ctx.given: the valid ones in class
        decided = v is not None  # by a given record, before any search
        if v is None:
            v = procs[cid].run(claim, ctx)
        elapsed = time.monotonic() - t1
        scope = scope_of(dict.fromkeys(ctx.used), evaluations=v.instances, seconds=elapsed,
                         seed=seed, records=info, klass=claim.klass, effort=effort_dict(eff),
                         searched="records" if decided else "construction")  # fmt: skip
        if info is not None and v.verdict != Verdict.VIOLATED and info["in_class"]:
            v = replace(v, text=f"{v.text}; --from: {info['in_class']} given record(s) in the "
                        f"class, worst certified {_fmt(info['worst_certified'])}, none above the "
                        "bound (counted in the worst certified ratio above)")  # fmt: skip
        v = replace(v, seconds=elapsed, source=claim.source, scope=scope)
        v = replace(v, bracket=_bracket_of(v.record))
        verdicts[cid] = v
        ctx.say(f"claim {cid}: {v.verdict} [scope: {scope.text()}] ({v.text})")
    result = ValidationResult(
        claims=tuple(verdicts[c] for c in ids),
        seed=seed,
        quick=quick,
        seconds=time.monotonic() - t0,
        out=str(out),
        report=str(report) if report is not None else None,
        effort=effort_dict(eff),
    )
    write_json_atomic(out / "validation.json", result.to_dict())
    if report is not None:
        from .report import write_report

        write_report(result, report)
    if default_out:  # no out= given: say where the campaigns went (the current folder)
        from ..logs import progress_logger

        progress_logger(__name__, True, "kvopt validate")(f"results written to {out.resolve()}")
    return result


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def _bracket_of(record: str | None) -> dict | None:
    """The bracket (:meth:`kvopt.certify.Bracket.to_dict`) of the record deciding a verdict."""
    if record is None or not Path(record).is_file():
        return None
    from ..record import load_record

    return load_record(record).bracket.to_dict()


def _writable(path: Path, option: str) -> None:
    if path.exists() and not path.is_dir():
        raise InputError("is a file, expected a folder", source=f"{option} {path}")
    probe = path
    while not probe.exists():
        probe = probe.parent if probe.parent != probe else Path(".")
    if not os.access(probe, os.W_OK):
        raise InputError("is not writable", source=f"{option} {path}")


__all__ = [
    "GROWTH_TOLERANCE",
    "PROCEDURES",
    "QUICK",
    "REPRODUCED_EXPONENT",
    "VERDICTS",
    "ClaimVerdict",
    "Effort",
    "Scope",
    "ValidationResult",
    "Verdict",
    "format_table",
    "validate",
]
