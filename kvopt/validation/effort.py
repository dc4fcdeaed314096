"""How hard validation attacks each claim (``--quick`` and the default differ only here)."""

from __future__ import annotations

from dataclasses import dataclass

#: A constant-free ratio claim is ``inconclusive`` when its ratio grows faster than this
#: exponent in n or M over the searched range.
GROWTH_TOLERANCE = 0.25
#: A lower-bound construction is ``reproduced`` when its ratio grows at least like this.
REPRODUCED_EXPONENT = 0.35


@dataclass(frozen=True)
class Effort:
    """How hard each claim is attacked (``--quick`` and the default differ only here)."""

    budget: int = 160  # evaluations per ratio / per-job claim (shared by the strategies)
    exact_time_limit: float = 10.0
    strategies: tuple[tuple[str, float], ...] = (("anneal", 0.6), ("random", 0.4))
    sweep_steps: int = 4  # doublings per direction of a growth sweep (grows needs 4)
    sweep_extra: int = 6  # doublings a direction adds until it is bounded (kvopt grow --extra)
    sweep_records: int = 2  # worst records swept per claim (per policy for discovery)
    sweep_certify: int = 2  # directions per sweep whose points get exact solves
    discovery_budget: int = 200  # evaluations of a discovery claim's typed campaign, per policy
    discovery_seconds: float | None = 300.0
    discovery_types: int = 3
    discovery_n_max: int = 128
    discovery_memory_max: int = 128
    find_budget: int = 60  # probes of a sweep's direction finder (SPEC §9), per swept record
    typed_sweeps: bool = True  # constant-free claims also sweep the best record of a typed campaign
    prop1_Ls: tuple[int, ...] = (2, 4, 9, 16, 25, 36, 49, 64, 81, 100, 144, 196, 256)
    sqrt_memories: tuple[int, ...] = (16, 36, 64, 100, 144, 256, 400, 576, 784, 1024)
    linear_ns: tuple[int, ...] = (3, 5, 9, 13, 17, 25, 33, 49, 65, 97, 129)  # online-linear-n
    area_solves: int = 40
    resolve: int = 5
    resolve_time_limit: float = 60.0
    seconds: float | None = None  # per claim (split over its strategies by share)
    #: The certify stage's exact solve (seconds) of each campaign's best record and of every
    #: sweep point that decides a verdict (:mod:`kvopt.campaign.certify`).
    certify_seconds: float = 60.0


QUICK = Effort(
    budget=300,
    exact_time_limit=3.0,
    strategies=(("anneal", 0.6), ("random", 0.4)),
    sweep_steps=4,
    sweep_records=1,
    sweep_certify=1,
    discovery_budget=400,  # typed evaluations cost one simulation and cheap bounds each
    discovery_seconds=45.0,
    discovery_types=3,
    discovery_n_max=128,
    discovery_memory_max=128,
    find_budget=30,
    prop1_Ls=(2, 4, 9, 16, 25, 36, 64, 100),
    sqrt_memories=(16, 64, 144, 256, 576),
    linear_ns=(3, 5, 9, 17, 33, 65),
    area_solves=16,
    resolve=2,
    resolve_time_limit=10.0,
    certify_seconds=5.0,  # per point of the sweeps deciding a verdict, and per campaign best
)


def split(eff: Effort) -> list[tuple[str, int, float | None]]:
    """``(strategy, budget, seconds)`` per strategy: the claim's budget shared by ``strategies``."""
    total = sum(s for _, s in eff.strategies)
    out = []
    for name, share in eff.strategies:
        b = max(1, int(round(eff.budget * share / total)))
        sec = None if eff.seconds is None else eff.seconds * share / total
        out.append((name, b, sec))
    return out


#: The effort's numbers a scope reports (:func:`effort_dict`).
_SHOWN = ("budget", "seconds", "exact_time_limit", "certify_seconds", "resolve",
          "resolve_time_limit", "sweep_steps", "sweep_records", "discovery_budget")  # fmt: skip


def effort_name(eff: Effort) -> str:
    """``default`` (:class:`Effort`'s defaults), ``quick`` (:data:`QUICK`) or ``custom``
    (anything else: a ``--budget``, ``--seconds`` or ``effort=`` of the user's)."""
    if eff == Effort():
        return "default"
    if eff == QUICK:
        return "quick"
    return "custom"


def effort_dict(eff: Effort) -> dict:
    """The effort by its numbers (a verdict's ``scope.effort``): its name (:func:`effort_name`)
    and the budgets and time limits a reader needs to weigh the verdict."""
    return {"name": effort_name(eff), **{k: getattr(eff, k) for k in _SHOWN}}


def effort_text(d) -> str:
    """``budget 32 evaluations per claim, exact solves 10 s (custom effort; default budget
    160)``: the effort by its numbers; "default" only when it is the default (issue 68)."""
    secs = "" if d.get("seconds") is None else f", {d['seconds']:g} s per claim"
    text = (f"budget {d['budget']} evaluations per claim{secs}, exact solves "
            f"{d['exact_time_limit']:g} s")  # fmt: skip
    name = d.get("name", "custom")
    if name == "default":
        return f"{text} (the default effort)"
    if name == "quick":
        return f"{text} (--quick effort)"
    return f"{text} (custom effort; the default is budget {Effort().budget})"


__all__ = ["GROWTH_TOLERANCE", "QUICK", "REPRODUCED_EXPONENT", "Effort", "effort_dict",
           "effort_name", "effort_text", "split"]  # fmt: skip
