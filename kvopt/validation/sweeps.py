"""Growth judged by growth sweeps (SPEC §7 and §9), not by the best ratio found per size.

* :func:`judge_constant_free` — ``route``, ``route-makespan``, ``route-online``
  ("some constant"): growth sweeps of the campaigns' worst records; ``holds``
  when every direction swept is ``bounded``, ``inconclusive`` when one is
  ``unclear``, ``violated`` when one ``grows`` with certified ratios (the
  record of its largest point is the evidence).
* :func:`discovery_claim` — ``fcfs-growth``, ``sf-growth``: for every policy
  of the claim a *typed* campaign inside the claim's class (no construction
  given), then growth sweeps of its best records (and, for a policy whose own
  records do not grow, of the other policies' growing instances: one class,
  several rules); ``reproduced`` when a direction grows for every policy (the
  family found is in the text), ``inconclusive`` otherwise, with the effort
  spent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..campaign.aftersearch import grow_campaign
from ..campaign.growth import GrowthResult, GrowthVerdict, grow
from ..claim import Claim
from ..errors import InputError
from .context import Context, notes_for
from .result import ClaimVerdict, Verdict, fmt


@dataclass(frozen=True)
class Sweeps:
    """The sweeps of one claim and what they say."""

    results: tuple[GrowthResult, ...]

    @property
    def grows(self) -> list[GrowthResult]:
        return [g for g in self.results if g.verdict == GrowthVerdict.GROWS]

    @property
    def verdict(self) -> GrowthVerdict:
        if self.grows:
            return GrowthVerdict.GROWS
        if self.results and all(g.verdict == GrowthVerdict.BOUNDED for g in self.results):
            return GrowthVerdict.BOUNDED
        return GrowthVerdict.UNCLEAR

    @property
    def exact_solves(self) -> int:
        return sum(g.exact_solves for g in self.results)

    @property
    def points(self) -> int:
        return len({p.record for g in self.results for d in g.directions for p in d.steps})

    def worst(self) -> tuple[float | None, float | None]:
        pts = [p for g in self.results for d in g.directions for p in d.steps]
        return (max((p.ratio_certified for p in pts), default=None),
                max((p.ratio_optimistic for p in pts), default=None))  # fmt: skip

    def text(self) -> str:
        parts = []
        for g in self.results:
            dirs = ", ".join(f"{d.name} {d.verdict} ({fmt(d.exponent)}"
                             + (f", limit {d.limit:.4g} ± {d.limit_spread or 0:.2g}"
                                + (" by the ALG/LB ceiling" if d.rule == "upper" else "")
                                if d.limit is not None else "") + ")"
                             for d in g.directions)  # fmt: skip
            parts.append(f"{g.source}: {g.verdict} [{dirs}]")
        return "; ".join(parts) or "no sweep"

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict,
                "sweeps": [{"record": g.source, "out": g.out, **g.to_dict()}
                           for g in self.results]}  # fmt: skip


def sweep_records(claim: Claim, ctx: Context, records: list[str], folder: Path) -> Sweeps:
    """Growth sweeps (every direction that applies) of ``records`` into ``folder/<record>``."""
    eff = ctx.eff
    out = []
    for k, path in enumerate(records):
        ctx.say(f"{claim.id}: growth sweep of {path}")
        out.append(grow(path, steps=eff.sweep_steps, extra=eff.sweep_extra,
                        time_limit=eff.exact_time_limit,
                        certify=eff.sweep_certify, out=folder / f"{k}-{Path(path).stem}",
                        find_budget=eff.find_budget, progress=ctx.show,
                        certify_seconds=eff.certify_seconds))  # fmt: skip
    return Sweeps(tuple(out))


def judge_constant_free(claim: Claim, ctx: Context, records: list[str]) -> dict[str, Any]:
    """The verdict of a constant-free ratio claim from sweeps of its worst ``records`` and (with
    ``Effort.typed_sweeps``) of the best record of a typed campaign per policy of the claim
    (SPEC §9: not only the small per-job records): the fields ``verdict``, ``text``,
    ``record``, ``exact_solves`` and ``data`` of a :class:`ClaimVerdict`.  Every sweep finds
    its directions itself (the direction finder)."""
    typed: list[str] = []
    evaluations = 0
    if ctx.eff.typed_sweeps:
        for policy in claim.policies:
            res, _ = discovery_campaign(claim, policy, ctx)
            evaluations += res.evaluations
            if res.best is not None and res.best.record:
                typed.append(res.best.record)
    chosen = typed + records[: ctx.eff.sweep_records]
    sw = sweep_records(claim, ctx, chosen, ctx.out / claim.id / "growth")
    record = None
    if sw.verdict == GrowthVerdict.GROWS:
        g = sw.grows[0]
        d = g.direction(g.best_direction)
        record = d.steps[-1].record
        verdict = Verdict.VIOLATED
        head = (f"a growing family: {g.family()} (certified ratios; no constant bounds the "
                f"ratio along it)")  # fmt: skip
    elif sw.verdict == GrowthVerdict.BOUNDED:
        # a limit bracketed by rule ``upper`` counts with its upper end (SPEC §9 reading)
        lims = [d.limit + ((d.limit_spread or 0.0) if d.rule == "upper" else 0.0)
                for g in sw.results for d in g.directions if d.limit is not None]  # fmt: skip
        verdict = Verdict.HOLDS
        head = (f"every direction swept is bounded (limit estimates up to "
                f"{max(lims, default=float('nan')):.4g})")  # fmt: skip
    else:
        verdict, head = Verdict.INCONCLUSIVE, "a direction is unclear (neither grows nor settles)"
    text = (f"no constant given; growth sweeps (directions found by the finder, "
            f"{ctx.eff.sweep_steps}+ doublings) of {len(sw.results)} record(s) ({len(typed)} from "
            f"typed campaigns, {evaluations} evaluations): {head}; {sw.text()}")  # fmt: skip
    return {"verdict": verdict, "text": text, "record": record,
            "exact_solves": sw.exact_solves,
            "data": {"growth": sw.to_dict(), "typed_records": typed}}  # fmt: skip


# --------------------------------------------------------------------------- discovery


def typed_sizes(ctx: Context) -> dict[str, Any]:
    """The typed space of a discovery campaign (SPEC §9 sizes, small enough to certify)."""
    eff = ctx.eff
    return {"kind": "typed", "types_max": eff.discovery_types, "n_max": eff.discovery_n_max,
            "memory_max": eff.discovery_memory_max, "max_response": 16}  # fmt: skip


def discovery_campaign(claim: Claim, policy: str, ctx: Context) -> tuple[Any, str | None]:
    """The typed campaign of ``policy`` inside ``claim``'s class; the result and a note when the
    typed space could not be used (then the per-job space of the claim, larger n)."""
    from ..campaign import search

    eff = ctx.eff
    common = dict(claim=claim.id, strategy="anneal", budget=eff.discovery_budget,
                  seconds=eff.discovery_seconds, seed=ctx.seed, workers=ctx.workers,
                  scheduler=ctx.scheduler, exact_time_limit=eff.exact_time_limit,
                  certify_seconds=eff.certify_seconds, progress=ctx.show)  # fmt: skip
    base = ctx.out / claim.id / _folder(policy)
    ctx.used += [base / "typed", base / "jobs"]  # the scope reads whichever ran
    try:
        return search(policy, space=typed_sizes(ctx), out=base / "typed",
                      label=f"{claim.id}: typed {policy}", **common), None  # fmt: skip
    except InputError as err:
        if "space" not in str(err):
            raise
        note = (f"the typed space was refused by kvopt.campaign.search ({err}); a per-job "
                f"campaign (n <= 12) was used instead")  # fmt: skip
    res = search(policy, space={"n_max": 12}, out=base / "jobs",
                 label=f"{claim.id}: {policy}", **common)  # fmt: skip
    return res, note


def discovery_claim(claim: Claim, ctx: Context) -> ClaimVerdict:
    """A growth claim validated by discovery (module docstring)."""
    found: dict[str, Any] = {}
    notes = notes_for(claim)
    evaluations = exact = 0
    worst_c: list[float] = []
    worst_o: list[float] = []
    record = None
    bases: dict[str, str] = {}  # policy -> the record whose sweep grows
    for policy in claim.policies:
        res, note = discovery_campaign(claim, policy, ctx)
        if note:
            notes.append(note)
        evaluations += res.evaluations
        exact += res.exact_solves
        if res.best is None:
            found[policy] = None
            continue
        ctx.say(f"{claim.id}: growth sweeps of {policy}'s best records")
        g = grow_campaign(res.out, top=ctx.eff.sweep_records, steps=ctx.eff.sweep_steps,
                          extra=ctx.eff.sweep_extra,
                          time_limit=ctx.eff.exact_time_limit, certify=ctx.eff.sweep_certify,
                          find_budget=ctx.eff.find_budget, progress=ctx.show,
                          certify_seconds=ctx.eff.certify_seconds)  # fmt: skip
        sw = Sweeps(g.sweeps)
        exact += sw.exact_solves
        c, o = sw.worst()
        worst_c += [c] if c is not None else []
        worst_o += [o] if o is not None else []
        found[policy] = {"campaign": res.out, "evaluations": res.evaluations,
                         "best_certified": res.best.ratio_certified, **sw.to_dict(),
                         "family": g.family()}  # fmt: skip
        if g.verdict == GrowthVerdict.GROWS:
            bases[policy] = g.best.source
            if record is None:
                b = g.best
                record = b.direction(b.best_direction).steps[-1].record
    # One claim, one class, several rules: an instance discovered for one rule is a discovered
    # instance for the others too.  A policy whose own records show no growth gets the sweep
    # (directions found by the finder again, under its own rule) of every growing base
    # instance of the other policies.
    for policy, f in list(found.items()):
        if f is None or f["verdict"] == GrowthVerdict.GROWS:
            continue
        for other, path in bases.items():
            if other == policy:
                continue
            from ..record import load_record

            inst = load_record(path).instance
            if (why := claim.rule(inst)) is not None:  # pragma: no cover - one class per claim
                notes.append(f"{other}'s growing instance is outside {policy}'s class: {why}")
                continue
            ctx.say(f"{claim.id}: growth sweep of {other}'s growing instance under {policy}")
            g = grow(inst, policy=policy, steps=ctx.eff.sweep_steps, extra=ctx.eff.sweep_extra,
                     time_limit=ctx.eff.exact_time_limit, certify=ctx.eff.sweep_certify,
                     find_budget=ctx.eff.find_budget, out=ctx.out / claim.id / _folder(policy) /
                     f"shared-from-{_folder(other)}", progress=ctx.show,
                     certify_seconds=ctx.eff.certify_seconds)  # fmt: skip
            shared = {"record": path, "out": g.out, "shared_from": other, **g.to_dict()}
            exact += g.exact_solves
            c, o = Sweeps((g,)).worst()
            worst_c += [c] if c is not None else []
            worst_o += [o] if o is not None else []
            f["sweeps"] = [*f["sweeps"], shared]
            if g.verdict == GrowthVerdict.GROWS:
                f["verdict"] = GrowthVerdict.GROWS
                f["family"] = f"{other}'s instance {path}: {g.family()}"
                break
    growing = [p for p, f in found.items() if f and f["verdict"] == GrowthVerdict.GROWS]
    ok = len(growing) == len(claim.policies)
    parts = [f"{p}: {f['verdict']}, family {f['family']}" if f else f"{p}: nothing evaluated"
             for p, f in found.items()]  # fmt: skip
    effort = f"{evaluations} campaign evaluations, {exact} exact solves"
    if ok:
        text = ("growing families found by typed campaigns and the direction finder of the growth "
                "sweeps (no construction, no direction given)")  # fmt: skip
    else:
        text = (f"no growing family found for {', '.join(p for p in found if p not in growing)} "
                f"with this effort")  # fmt: skip
    return ClaimVerdict(
        id=claim.id, verdict=Verdict.REPRODUCED if ok else Verdict.INCONCLUSIVE,
        bound="grows", bound_text="ratio grows with M (no constant)",
        worst_certified_ratio=max(worst_c, default=None),
        worst_optimistic_ratio=max(worst_o, default=None), instances=evaluations,
        exact_solves=exact, seconds=0.0, record=record, kind=claim.kind,
        text="; ".join([f"{text} ({effort})", *parts, *notes]), data={"policies": found},
    )  # fmt: skip


def _folder(policy: str) -> str:
    """A folder name for ``policy`` (a user's reference may hold ``/`` and ``:``)."""
    from ..policy import get_policy

    return get_policy(policy).slug


__all__ = ["Sweeps", "discovery_campaign", "discovery_claim", "judge_constant_free",
           "sweep_records", "typed_sizes"]  # fmt: skip
