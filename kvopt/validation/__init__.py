"""Theorem-claim validation (``kvopt validate``, SPEC §7): one verdict per claim, with evidence.

For every claim of the registry (:mod:`kvopt.claims`) a procedure of its kind:

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
  add a scaling sweep (random instances of growing n and M) and report the
  worst ratio and its growth exponents in n and in M; the verdict is
  ``holds`` unless the ratio grows (exponent > :data:`GROWTH_TOLERANCE`), then
  ``inconclusive``.
* **per-job and invariant claims**: campaigns that maximise the slack
  ``max_i lhs_i/rhs_i`` (:mod:`kvopt.claimchecks`), plus the check on every
  other schedule of the same policy simulated during this validation; a
  violation is a record naming the job, round and both sides.
* **area-lb**: on every instance solved exactly during the validation, plus
  its own sample of instances solved exactly: the area bound never exceeds a
  checked schedule's value (a certified violation otherwise).
* **growth claims** (``single-priority``, ``online-sqrt-n``): the lower-bound
  constructions (:mod:`kvopt.validation.growth`) with fitted exponents;
  ``reproduced`` when every single-priority rule (every attacked policy)
  grows with exponent ≥ :data:`REPRODUCED_EXPONENT`, else ``inconclusive``;
  ``online-linear-n`` (:mod:`kvopt.validation.linear_n`): the ``(n−1)/12``
  check of every never-kill policy at every n (``violated`` with a record
  below it), exponents, and ``--n``/``--memory`` bound its n.

Claims that rest on the SPS reconstruction say so in their text (a
violation is then evidence against the reconstruction, not the paper); the
claims of Route and BlackBoxMeta say which slot mode was validated (literal
slots, the paper's reading).

Campaign folders are ``OUT/<claim>/<strategy>/``: a rerun with the same
``--out`` and options resumes them.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..campaign.evaluate import expand_instance
from ..campaign.runner import read_log
from ..campaign.strategies import fit_exponent
from ..claim import BOUND, CLAIMS, GROWTH, INVARIANT, PER_JOB, RATIO, Claim, get_claim
from ..errors import InputError
from ..fileio import write_json_atomic

#: A constant-free ratio claim is ``inconclusive`` when its ratio grows faster than this
#: exponent in n or M over the searched range.
GROWTH_TOLERANCE = 0.25
#: A lower-bound construction is ``reproduced`` when its ratio grows at least like this.
REPRODUCED_EXPONENT = 0.35
VERDICTS = ("holds", "violated", "reproduced", "inconclusive")


@dataclass(frozen=True)
class Effort:
    """How hard each claim is attacked (``--quick`` and the default differ only here)."""

    budget: int = 160  # evaluations per ratio / per-job claim (shared by the strategies)
    exact_time_limit: float = 10.0
    strategies: tuple[tuple[str, float], ...] = (("anneal", 0.6), ("random", 0.4))
    scaling_ns: tuple[int, ...] = (4, 8, 12, 16, 24)
    scaling_memories: tuple[int, ...] = (24, 48, 96)
    scaling_seeds: int = 2
    prop1_Ls: tuple[int, ...] = (2, 4, 9, 16, 25, 36, 49, 64, 81, 100, 144, 196, 256)
    sqrt_memories: tuple[int, ...] = (16, 36, 64, 100, 144, 256, 400, 576, 784, 1024)
    linear_ns: tuple[int, ...] = (3, 5, 9, 13, 17, 25, 33, 49, 65, 97, 129)  # online-linear-n
    area_solves: int = 40
    resolve: int = 5
    resolve_time_limit: float = 60.0
    seconds: float | None = None  # per claim (split over its strategies by share)


QUICK = Effort(
    budget=300,
    exact_time_limit=3.0,
    strategies=(("anneal", 0.6), ("random", 0.4)),
    scaling_ns=(4, 8, 12, 16),
    scaling_memories=(24, 48),
    scaling_seeds=2,
    prop1_Ls=(2, 4, 9, 16, 25, 36, 64, 100),
    sqrt_memories=(16, 64, 144, 256, 576),
    linear_ns=(3, 5, 9, 17, 33, 65),
    area_solves=16,
    resolve=2,
    resolve_time_limit=10.0,
)


@dataclass(frozen=True)
class ClaimVerdict:
    """The verdict on one claim, with its evidence (``kvopt validate --json``: :meth:`to_dict`)."""

    id: str
    verdict: str
    bound: float | str | None
    bound_text: str
    worst_certified_ratio: float | None
    worst_optimistic_ratio: float | None
    instances: int
    exact_solves: int
    seconds: float
    text: str
    record: str | None = None
    kind: str = RATIO
    source: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = {
            "id": self.id,
            "verdict": self.verdict,
            "bound": self.bound,
            "bound_text": self.bound_text,
            "worst_certified_ratio": self.worst_certified_ratio,
            "worst_optimistic_ratio": self.worst_optimistic_ratio,
            "instances": self.instances,
            "exact_solves": self.exact_solves,
            "seconds": round(self.seconds, 2),
            "text": self.text,
            "kind": self.kind,
            "source": self.source,
            "data": self.data,
        }
        if self.record is not None or self.verdict == "violated":
            d["record"] = self.record
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ClaimVerdict:
        """The inverse of :meth:`to_dict` (e.g. to redraw a report from ``validation.json``)."""
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    def __repr__(self) -> str:
        w = "-" if self.worst_certified_ratio is None else f"{self.worst_certified_ratio:.4g}"
        return f"ClaimVerdict({self.id}: {self.verdict}, worst certified {w} vs bound {self.bound_text})"


@dataclass(frozen=True)
class ValidationResult:
    """All verdicts of one ``kvopt validate`` run."""

    claims: tuple[ClaimVerdict, ...]
    seed: int
    quick: bool
    seconds: float
    out: str
    report: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "claims": [c.to_dict() for c in self.claims],
            "seed": self.seed,
            "quick": self.quick,
            "seconds": round(self.seconds, 2),
            "out": self.out,
            "report": self.report,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ValidationResult:
        """The inverse of :meth:`to_dict`: ``ValidationResult.from_dict(json.load(open(
        "OUT/validation.json")))`` and :func:`kvopt.validation.report.write_report` redraw a report."""
        return cls(
            claims=tuple(ClaimVerdict.from_dict(c) for c in d["claims"]),
            seed=d["seed"], quick=d["quick"], seconds=d["seconds"], out=d["out"],
            report=d.get("report"),
        )  # fmt: skip

    def verdict(self, claim_id: str) -> ClaimVerdict:
        for c in self.claims:
            if c.id == claim_id:
                return c
        raise KeyError(claim_id)

    def table(self) -> str:
        """The verdicts as a Markdown table."""
        return format_table(self.claims)

    def to_dataframe(self):
        """The verdicts as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(
            [{k: v for k, v in c.to_dict().items() if k != "data"} for c in self.claims]
        )

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for c in self.claims:
            counts[c.verdict] = counts.get(c.verdict, 0) + 1
        summary = ", ".join(f"{v} {k}" for k, v in counts.items())
        return f"ValidationResult({len(self.claims)} claims: {summary}; {self.seconds:.0f}s)"


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def format_table(claims: Sequence[ClaimVerdict]) -> str:
    head = (
        "| claim | verdict | bound | worst certified | worst optimistic | instances | exact solves "
        "| seconds |\n|---|---|---|---|---|---|---|---|"
    )
    rows = [
        f"| `{c.id}` | **{c.verdict}** | {c.bound_text} | {_fmt(c.worst_certified_ratio)} | "
        f"{_fmt(c.worst_optimistic_ratio)} | {c.instances} | {c.exact_solves} | {c.seconds:.1f} |"
        for c in claims
    ]
    return "\n".join([head, *rows])


# --------------------------------------------------------------------------- the driver


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
) -> ValidationResult:
    """Validate SPEC §7 claims (all by default); return the verdicts (see the module docstring).

    ``quick`` uses small budgets (every claim within about 10 minutes on 2
    cores); ``budget`` (evaluations) and ``seconds`` apply per claim;
    ``workers``/``scheduler`` as in :func:`kvopt.campaign.search`; ``out`` keeps
    the campaigns (default ``kvopt-validate``), so a rerun resumes;
    ``report`` writes a Markdown report with PNG plots beside it; ``space``
    overrides the size ranges of every claim's search space (``n_min``,
    ``n_max``, ``memory_min``, ``memory_max``, ``max_response``,
    ``max_arrival``; the structural rules of each class stay).

    >>> res = validate(["area-lb"], quick=True, out=tmp / "v", progress=False)
    >>> res.verdict("area-lb").verdict
    'holds'
    """
    from ..campaign.runner import progress_enabled

    ids = _resolve_ids(claims)
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
    out = Path(out if out is not None else "kvopt-validate")
    _writable(out, "--out")
    if report is not None:
        _writable(Path(report).parent if str(Path(report).parent) else Path("."), "--report")
    show = progress_enabled(progress)
    sizes = dict(space or {})
    allowed = {"n_min", "n_max", "memory_min", "memory_max", "max_response", "max_arrival"}
    bad = sorted(set(sizes) - allowed)
    if bad:
        raise InputError(
            f"only size ranges can change ({', '.join(sorted(allowed))})",
            source=f"--space {bad[0]}",
        )
    if "online-linear-n" in ids:  # --n/--memory bound its n: refuse an unusable range up front
        from .linear_n import select_ns

        select_ns(eff.linear_ns, sizes)
    ctx = _Ctx(eff, seed, workers, scheduler, out, show, sizes)
    t0 = time.monotonic()
    verdicts: dict[str, ClaimVerdict] = {}
    order = [c for c in ids if CLAIMS[c].kind in (RATIO, GROWTH)]
    order += [c for c in ids if CLAIMS[c].kind in (PER_JOB, INVARIANT)]
    order += [c for c in ids if CLAIMS[c].kind == BOUND]
    for cid in order:
        claim = CLAIMS[cid]
        ctx.say(f"claim {cid} ({claim.kind}): {claim.statement}")
        t1 = time.monotonic()
        if claim.kind == RATIO:
            v = _ratio_claim(claim, ctx)
        elif claim.kind in (PER_JOB, INVARIANT):
            v = _per_job_claim(claim, ctx)
        elif claim.kind == BOUND:
            v = _area_claim(claim, ctx)
        elif cid == "single-priority":
            v = _single_priority(claim, ctx)
        elif cid == "online-linear-n":
            v = _online_linear_n(claim, ctx)
        else:
            v = _online_sqrt_n(claim, ctx)
        v = replace(v, seconds=time.monotonic() - t1, source=claim.source)
        verdicts[cid] = v
        ctx.say(f"claim {cid}: {v.verdict} ({v.text})")
    result = ValidationResult(
        claims=tuple(verdicts[c] for c in ids),
        seed=seed,
        quick=quick,
        seconds=time.monotonic() - t0,
        out=str(out),
        report=str(report) if report is not None else None,
    )
    write_json_atomic(out / "validation.json", result.to_dict())
    if report is not None:
        from .report import write_report

        write_report(result, report)
    return result


def _writable(path: Path, option: str) -> None:
    if path.exists() and not path.is_dir():
        raise InputError("is a file, expected a folder", source=f"{option} {path}")
    probe = path
    while not probe.exists():
        probe = probe.parent if probe.parent != probe else Path(".")
    if not os.access(probe, os.W_OK):
        raise InputError("is not writable", source=f"{option} {path}")


class _Ctx:
    def __init__(self, eff: Effort, seed, workers, scheduler, out: Path, show: bool, sizes=None):
        self.eff, self.seed, self.workers, self.scheduler = eff, seed, workers, scheduler
        self.out, self.show = out, show
        self.sizes = dict(sizes or {})
        # instances simulated per (policy, params) during this validation, for the per-job checks
        self.seen: dict[tuple[str, str], dict[str, Any]] = {}
        self.exact_logs: list[Path] = []

    def say(self, msg: str) -> None:
        if self.show:
            print(f"[kvopt validate] {msg}", file=sys.stderr, flush=True)

    def campaign(self, claim: Claim, strategy: str, budget: int, seconds=None, **kw):
        from ..campaign import search

        folder = self.out / claim.id / strategy
        res = search(
            claim.policy,
            strategy=strategy,
            params=dict(claim.params) or None,
            claim=claim.id,
            budget=budget,
            seconds=seconds,
            seed=self.seed,
            workers=self.workers,
            scheduler=self.scheduler,
            out=folder,
            exact_time_limit=self.eff.exact_time_limit,
            progress=self.show,
            label=f"{claim.id}: {strategy}",
            space=self.sizes or None,
            **kw,
        )
        if res.stopped == "interrupted":  # Ctrl-C ends the validation; the campaigns resume
            raise KeyboardInterrupt
        log = read_log(folder / "evaluations.jsonl")
        self.exact_logs.append(folder / "evaluations.jsonl")
        key = (claim.policy, repr(sorted(dict(claim.params).items())))
        bucket = self.seen.setdefault(key, {})
        for rec in log.values():
            if "error" not in rec:
                bucket.setdefault(rec["key"], rec["instance"])
        return res, log


def _split(eff: Effort) -> list[tuple[str, int, float | None]]:
    total = sum(s for _, s in eff.strategies)
    out = []
    for name, share in eff.strategies:
        b = max(1, int(round(eff.budget * share / total)))
        sec = None if eff.seconds is None else eff.seconds * share / total
        out.append((name, b, sec))
    return out


def _good(rec: dict[str, Any]) -> bool:
    return "error" not in rec and rec.get("ratio_certified") is not None


def _recon_text(claim: Claim) -> str:
    parts = []
    if claim.reconstruction:
        parts.append(
            "rests on the toolkit's SPS reconstruction (SPEC §6.1): a violation is evidence "
            "against the reconstruction, not the paper"
        )
    if "compact" in claim.params:
        mode = "compact slots" if claim.params["compact"] else "literal slots (the paper's reading)"
        parts.append(f"slot mode: {mode}")
    if claim.params:
        parts.append("parameters " + ", ".join(f"{k}={v}" for k, v in claim.params.items()))
    return "; ".join(parts)


# --------------------------------------------------------------------------- ratio claims


def _ratio_claim(claim: Claim, ctx: _Ctx) -> ClaimVerdict:
    from ..record import load_record, verify_record

    eff = ctx.eff
    logs: list[dict[str, Any]] = []
    exact = 0
    records = []
    errors = 0
    for strategy, budget, sec in _split(eff):
        res, log = ctx.campaign(claim, strategy, budget, sec)
        logs.extend(log.values())
        exact += res.exact_solves
        errors += res.errors
        if res.best and res.best.record:
            records.append((res.best.score or 0.0, res.best.record))
    scaling = None
    if claim.bound is None and claim.bound_fn is None:
        scaling, s_exact, s_logs = _scaling(claim, ctx)
        exact += s_exact
        logs.extend(s_logs)
    good = [r for r in logs if _good(r)]
    worst_c = max((r["ratio_certified"] for r in good), default=None)
    worst_o = max((r["ratio_optimistic"] for r in good), default=None)
    notes = [_recon_text(claim)] if _recon_text(claim) else []
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
        e_n = scaling["exponent_n"]
        e_m = scaling["exponent_memory"]
        grows = any(e is not None and e > GROWTH_TOLERANCE for e in (e_n, e_m))
        text = (
            f"no constant given; worst certified ratio {_fmt(worst_c)} (optimistic {_fmt(worst_o)}) "
            f"over {len(good)} instances; growth exponent of the worst certified ratio "
            f"{_fmt(e_n)} in n and {_fmt(e_m)} in M over the scaling sweep"
        )
        if grows:
            text += f" (above {GROWTH_TOLERANCE}: a constant bound is not supported by this range)"
        return ClaimVerdict(
            **base,
            verdict="inconclusive" if grows else "holds",
            exact_solves=exact,
            text="; ".join([text, *notes]),
            data={"scaling": scaling, "distribution": _distribution(good)},
        )
    # a bound: certified violations, optimistic-only ones, or none
    viol = [r for r in good if r.get("score", 0.0) > 1 + 1e-12]
    worst_score = max((r.get("score", 0.0) for r in good), default=None)
    data = {"worst_score": worst_score, "distribution": _distribution(good)}
    if viol:
        best = max(records)[1] if records else None
        rec = load_record(best) if best else None
        if (
            rec is not None
            and not verify_record(rec)
            and rec.ratio_certified > (rec.meta.get("bound") or 0)
        ):
            path = _keep_record(rec, ctx.out / claim.id / "violation.json")
            return ClaimVerdict(
                **base,
                verdict="violated",
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
        (r for r in good if r.get("score_optimistic", 0.0) > 1 + 1e-12),
        key=lambda r: -r["score_optimistic"],
    )
    resolved = 0
    for r in hopeful[: eff.resolve]:  # try to decide optimistic-only violations with more time
        out = _resolve(claim, r, ctx)
        exact += 1
        if out is None:
            continue
        if out[0] == "violated":
            path = _keep_record(out[1], ctx.out / claim.id / "violation.json")
            return ClaimVerdict(
                **base, verdict="violated", exact_solves=exact, record=path,
                text="; ".join([f"certified ratio {out[1].ratio_certified:.4g} > bound after a "
                                f"longer exact solve", *notes]), data=data,
            )  # fmt: skip
        resolved += 1
    left = len(hopeful) - resolved
    if hopeful and left > 0:
        return ClaimVerdict(
            **base,
            verdict="inconclusive",
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
        f"{_fmt(worst_c)}, optimistic {_fmt(worst_o)}"
    )
    if claim.bound_fn is not None:
        text += f"; worst ratio/bound {_fmt(worst_score)}"
    return ClaimVerdict(
        **base, verdict="holds", exact_solves=exact, text="; ".join([text, *notes]), data=data
    )


def _distribution(good: list[dict[str, Any]]) -> dict[str, list[float]]:
    return {
        "ratio_certified": [r["ratio_certified"] for r in good],
        "ratio_optimistic": [r["ratio_optimistic"] for r in good],
        "score": [r["score"] for r in good if "score" in r],
        "n": [r["n"] for r in good],
        "memory": [r["memory"] for r in good],
    }


def _keep_record(rec, path: Path) -> str:
    from ..record import save_record

    save_record(rec, path)
    return str(path)


def _resolve(claim: Claim, r: dict[str, Any], ctx: _Ctx):
    """Re-solve one optimistic-only candidate with the longer limit: a violation record, or resolved."""
    import numpy as np

    from ..campaign.evaluate import cheap_lb, exact_opt
    from ..engine import simulate
    from ..record import make_record, verify_record
    from ..schedule import Schedule

    inst = expand_instance(r["instance"], name=f"{claim.id}-candidate")
    ex = exact_opt(inst, claim.objective, ctx.eff.resolve_time_limit, np.asarray(r["ub_starts"]))
    if ex["objective"] is None:
        return None
    bound = claim.bound_for(inst)
    alg = r["alg"]
    if alg / ex["objective"] > bound:
        res = simulate(inst, claim.policy, params=dict(claim.params) or None)
        lb = max(cheap_lb(inst, claim.objective)[0], ex["bound"] or 0)
        status = "optimal" if ex["status"] == "optimal" else "feasible"
        rec = make_record(
            inst, claim.policy, dict(claim.params), ctx.seed, claim.objective, res.schedule,
            Schedule.from_starts(inst, ex["starts"], producer="exact"), ex["objective"] if status == "optimal" else lb,
            status, found_by={"strategy": "validate-resolve", "evaluation": r["index"]},
            meta={"claim": claim.id, "bound": bound, "bound_text": claim.bound_text()},
        )  # fmt: skip
        if not verify_record(rec):
            return ("violated", rec)
        return None
    if ex["status"] == "optimal":
        return ("resolved", None)
    if ex["bound"] is not None and alg / ex["bound"] <= bound:
        return ("resolved", None)
    return None


def _scaling(claim: Claim, ctx: _Ctx):
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
    if res.stopped == "interrupted":
        raise KeyboardInterrupt
    log = read_log(folder / "evaluations.jsonl")
    ctx.exact_logs.append(folder / "evaluations.jsonl")
    good = [r for r in log.values() if _good(r)]
    by_n: dict[int, float] = {}
    by_m: dict[int, float] = {}
    for r in good:
        by_n[r["n"]] = max(by_n.get(r["n"], 0.0), r["ratio_certified"])
        by_m[r["memory"]] = max(by_m.get(r["memory"], 0.0), r["ratio_certified"])
    pts_n = sorted(by_n.items())
    pts_m = sorted(by_m.items())
    out = {
        "points_n": [list(p) for p in pts_n],
        "points_memory": [list(p) for p in pts_m],
        "exponent_n": fit_exponent([p[0] for p in pts_n], [p[1] for p in pts_n]),
        "exponent_memory": fit_exponent([p[0] for p in pts_m], [p[1] for p in pts_m]),
        "rows": [
            {
                k: r.get(k)
                for k in ("n", "memory", "ratio_certified", "ratio_optimistic", "opt_status")
            }
            for r in good
        ],  # fmt: skip
    }
    return out, res.exact_solves, list(log.values())


# --------------------------------------------------------------------------- per-job claims


def _per_job_claim(claim: Claim, ctx: _Ctx) -> ClaimVerdict:
    from ..claimchecks import claim_metrics, needs_instrument
    from ..engine import simulate

    logs = []
    records = []
    for strategy, budget, sec in _split(ctx.eff):
        res, log = ctx.campaign(claim, strategy, budget, sec)
        logs.extend(r for r in log.values() if "error" not in r)
        if res.best and res.best.record:
            records.append((res.best.score or 0.0, res.best.record))
    scores = [r["score"] for r in logs]
    # every other schedule of this policy simulated during the validation
    key = (claim.policy, repr(sorted(dict(claim.params).items())))
    seen_keys = {r["key"] for r in logs}
    extra = 0
    extra_viol = None
    for k, inst_d in ctx.seen.get(key, {}).items():
        if k in seen_keys:
            continue
        inst = expand_instance(inst_d)
        if claim.rule(inst) is not None:
            continue
        res = simulate(inst, claim.policy, params=dict(claim.params) or None,
                       instrument=needs_instrument(claim.id))  # fmt: skip
        m = claim_metrics(claim.id, inst, res)
        extra += 1
        scores.append(m["score"])
        if m["violation"] and extra_viol is None:
            extra_viol = (inst, res, m)
    worst = max(scores, default=None)
    notes = [_recon_text(claim)] if _recon_text(claim) else []
    base = dict(
        id=claim.id, bound=1.0, bound_text="lhs/rhs <= 1", worst_certified_ratio=worst,
        worst_optimistic_ratio=worst, instances=len(logs) + extra, exact_solves=0,
        kind=claim.kind, seconds=0.0, data={"scores": scores},
    )  # fmt: skip
    viol = [r for r in logs if r.get("score", 0) > 1]
    if viol or extra_viol:
        from ..record import load_record, verify_record

        path = None
        text = ""
        if viol:
            best = max(records)[1]
            rec = load_record(best)
            if not verify_record(rec):
                path = _keep_record(rec, ctx.out / claim.id / "violation.json")
            v = max(viol, key=lambda r: r["score"])["violation"]
            text = v["text"]
        else:
            rec = _record_for_run(claim, *extra_viol, seed=ctx.seed)
            path = _keep_record(rec, ctx.out / claim.id / "violation.json")
            text = extra_viol[2]["violation"]["text"]
        return ClaimVerdict(**base, verdict="violated", record=path,
                            text="; ".join([text, *notes]))  # fmt: skip
    text = (
        f"no violation in {len(logs) + extra} runs ({extra} from other claims' campaigns); "
        f"worst lhs/rhs {_fmt(worst)}"
    )
    return ClaimVerdict(**base, verdict="holds", text="; ".join([text, *notes]))


def _record_for_run(claim: Claim, inst, res, metrics, seed: int = 0):
    from ..campaign.evaluate import cheap_lb, cheap_ub
    from ..record import make_record
    from ..schedule import Schedule

    st, ub, src = cheap_ub(inst, claim.objective)
    lb, _ = cheap_lb(inst, claim.objective)
    return make_record(
        inst, claim.policy, dict(claim.params), seed, claim.objective, res.schedule,
        Schedule.from_starts(inst, st, producer=src), lb, "optimal" if lb >= ub else "feasible",
        found_by={"strategy": "validate"},
        meta={"claim": claim.id, "violation": metrics["violation"], "score": metrics["score"]},
    )  # fmt: skip


# --------------------------------------------------------------------------- area bound


def _area_claim(claim: Claim, ctx: _Ctx) -> ClaimVerdict:
    """Lemma 1 on every instance solved exactly in this validation, and on a fresh sample."""
    import numpy as np

    from ..bound import area_bound
    from ..campaign.evaluate import cheap_ub, exact_opt

    checked, solves = 0, 0
    worst = None
    violation = None
    seen: set[str] = set()
    for path in ctx.exact_logs:
        for r in read_log(path).values():
            if not _good(r) or r["key"] in seen:
                continue
            if r.get("exact") not in ("solved", "cached") and r["opt_status"] != "optimal":
                continue
            seen.add(r["key"])
            inst = expand_instance(r["instance"])
            area = area_bound(inst)
            ub = _total_ub(inst, r)
            checked += 1
            worst = max(worst or 0.0, area / ub)
            if area > ub and violation is None:
                violation = (inst, area, ub)
    rng = np.random.default_rng([ctx.seed, 17])
    sp = claim.space.replace(**ctx.sizes) if ctx.sizes else claim.space
    for _ in range(ctx.eff.area_solves):
        inst = sp.sample(rng)
        st, ub, _src = cheap_ub(inst, "total")
        ex = exact_opt(inst, "total", ctx.eff.exact_time_limit, st)
        solves += 1
        checked += 1
        if ex["objective"] is not None:
            ub = min(ub, ex["objective"])
        area = area_bound(inst)
        worst = max(worst or 0.0, area / ub)
        if area > ub and violation is None:
            violation = (inst, area, ub)
    base = dict(id=claim.id, bound=1.0, bound_text="area/Opt <= 1", worst_certified_ratio=worst,
                worst_optimistic_ratio=worst, instances=checked, exact_solves=solves,
                kind=claim.kind, seconds=0.0)  # fmt: skip
    if violation:
        inst, area, ub = violation
        return ClaimVerdict(**base, verdict="violated",
                            text=f"area bound {area} exceeds a checked schedule of value {ub} on "
                                 f"n={inst.n}, M={inst.memory}")  # fmt: skip
    return ClaimVerdict(
        **base,
        verdict="holds",
        text=f"area bound <= Opt (or a checked schedule's value) on {checked} instances solved "
        f"exactly; largest area/Opt {_fmt(worst)}",
    )


def _total_ub(inst, r) -> int:
    """The total completion of the evaluation's clairvoyant schedule (its ``ub`` is in its objective)."""
    import numpy as np

    return int((np.asarray(r["ub_starts"]) + inst.responses).sum())


# --------------------------------------------------------------------------- growth claims


def _single_priority(claim: Claim, ctx: _Ctx) -> ClaimVerdict:
    from .growth import SINGLE_PRIORITY_RULES, single_priority

    data = single_priority(ctx.eff.prop1_Ls, exact_max_n=12, time_limit=ctx.eff.exact_time_limit,
                           progress=ctx.say if ctx.show else None)  # fmt: skip
    pol = data["policies"]
    exps = {p: pol[p]["exponent_certified"] for p in pol}
    tails = {p: pol[p]["exponent_tail"] for p in pol}
    ok = all(
        tails[p] is not None and tails[p] >= REPRODUCED_EXPONENT for p in SINGLE_PRIORITY_RULES
    )
    worst_c = max(r["ratio_certified"] for r in data["rows"])
    worst_o = max(r["ratio_optimistic"] for r in data["rows"])
    Ls = ctx.eff.prop1_Ls
    text = (
        f"growth exponent in L of the worst certified ratio over L = {Ls[0]}..{Ls[-1]} (upper half "
        "of the range in brackets): "
        + ", ".join(f"{p} {_fmt(exps[p])} [{_fmt(tails[p])}]" for p in pol)
        + f"; claim: 1/2 for every single-priority rule (each fitted on the family it loses on), "
        f"reproduced when the upper-half exponent is >= {REPRODUCED_EXPONENT}"
    )
    if "route" in pol:
        rc = pol["route"]["by_case"]
        route_max = max(r["ratio_certified"] for r in data["rows"] if r["policy"] == "route")
        grows = any((d.get("exponent_tail") or 0) > GROWTH_TOLERANCE for d in rc.values())
        text += (
            f"; route: worst certified ratio {route_max:.3g}, upper-half exponents "
            + ", ".join(f"case {c} {_fmt(d.get('exponent_tail'))}" for c, d in sorted(rc.items()))
            + (" (still growing over this range)" if grows else " (bounded over this range)")
        )
    return ClaimVerdict(
        id=claim.id, verdict="reproduced" if ok else "inconclusive", bound="sqrt(L)",
        bound_text="growth ~ L^0.5", worst_certified_ratio=worst_c, worst_optimistic_ratio=worst_o,
        instances=len(data["rows"]), exact_solves=0, seconds=0.0, text=text, kind=claim.kind,
        data=data,
    )  # fmt: skip


def _online_sqrt_n(claim: Claim, ctx: _Ctx) -> ClaimVerdict:
    from .growth import online_sqrt_n

    data = online_sqrt_n(ctx.eff.sqrt_memories, claim.policies, exact_max_n=20,
                         time_limit=ctx.eff.exact_time_limit,
                         progress=ctx.say if ctx.show else None)  # fmt: skip
    pol = data["policies"]
    exps = {p: pol[p]["exponent_certified"] for p in pol}
    tails = {p: pol[p]["exponent_tail"] for p in pol}
    ok = all(e is not None and e >= REPRODUCED_EXPONENT for e in tails.values())
    worst_c = max(r["ratio_certified"] for r in data["rows"])
    worst_o = max(r["ratio_optimistic"] for r in data["rows"])
    Ms = ctx.eff.sqrt_memories
    text = (
        f"latency-ratio growth exponent in n over M = {Ms[0]}..{Ms[-1]} (n = {Ms[0] // 2 + 1}.."
        f"{Ms[-1] // 2 + 1}; upper half of the range in brackets): "
        + ", ".join(f"{p} {_fmt(exps[p])} [{_fmt(tails[p])}]" for p in pol)
        + f"; claim: >= 1/2 asymptotically, reproduced when every upper-half exponent is >= "
        f"{REPRODUCED_EXPONENT}"
    )
    return ClaimVerdict(
        id=claim.id, verdict="reproduced" if ok else "inconclusive", bound="sqrt(n)",
        bound_text="growth ~ n^0.5 (latency)", worst_certified_ratio=worst_c,
        worst_optimistic_ratio=worst_o, instances=len(data["rows"]), exact_solves=0, seconds=0.0,
        text=text, kind=claim.kind, data=data,
    )  # fmt: skip


def _online_linear_n(claim: Claim, ctx: _Ctx) -> ClaimVerdict:
    from .linear_n import linear_n_verdict, online_linear_n, select_ns

    data = online_linear_n(select_ns(ctx.eff.linear_ns, ctx.sizes), claim.policies,
                           time_limit=ctx.eff.exact_time_limit, seed=ctx.seed,
                           record_dir=ctx.out / claim.id, progress=ctx.say if ctx.show else None)  # fmt: skip
    return ClaimVerdict(id=claim.id, kind=claim.kind, seconds=0.0, data=data,
                        **linear_n_verdict(data))  # fmt: skip


__all__ = [
    "QUICK",
    "VERDICTS",
    "ClaimVerdict",
    "Effort",
    "ValidationResult",
    "format_table",
    "validate",
]
