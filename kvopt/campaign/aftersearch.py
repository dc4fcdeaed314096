"""Growth sweeps after a campaign (``kvopt search --grow``, validation's discovery claims): the
sweeps (:func:`kvopt.campaign.growth.grow`) of a campaign's best records."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..certify import CERTIFY_SECONDS
from .evaluate import instance_key
from .families import GrowthVerdict, sweep_verdict
from .finder import FIND_BUDGET
from .growth import EXTRA_DOUBLINGS, GrowthResult, grow


@dataclass(frozen=True)
class CampaignGrowth:
    """Growth sweeps of a campaign's best records: one :class:`GrowthResult` per record, the
    overall verdict (:func:`sweep_verdict` over the records' verdicts) and the family found."""

    sweeps: tuple[GrowthResult, ...]
    verdict: GrowthVerdict

    @property
    def best(self) -> GrowthResult | None:
        """The sweep whose best direction grows fastest (``None`` without sweeps)."""
        if not self.sweeps:
            return None

        def key(g: GrowthResult):
            d = g.direction(g.best_direction) if g.best_direction else None
            e = d.exponent if d is not None and d.exponent is not None else -math.inf
            return (g.verdict == GrowthVerdict.GROWS, e)

        return max(self.sweeps, key=key)

    def family(self) -> str:
        b = self.best
        return "no sweep" if b is None else f"{b.source}: {b.family()}"

    def to_dict(self) -> dict[str, Any]:
        b = self.best
        return {"verdict": self.verdict, "family": self.family(),
                "best": None if b is None else b.source,
                "sweeps": [{"record": g.source, "out": g.out, **g.to_dict()}
                           for g in self.sweeps]}  # fmt: skip


def best_records(folder: str | os.PathLike, top: int = 2) -> list[str]:
    """The records of a campaign's ``top`` best distinct evaluations (by certified ratio): its
    ``best.json`` first, then records rebuilt from its log into ``folder/top-<index>.json``."""
    from ..record import save_record
    from .log import BEST_NAME, HEADER_NAME, LOG_NAME, read_log
    from .runner import record_from_log
    from .types import CampaignHeader

    folder = Path(folder)
    out: list[str] = []
    if (folder / BEST_NAME).exists():
        out.append(str(folder / BEST_NAME))
    if top <= len(out) or not (folder / LOG_NAME).exists():
        return out[:top]
    from ..fileio import read_json

    raw = read_json(folder / HEADER_NAME)
    header = CampaignHeader(**{k: raw[k] for k in CampaignHeader.__dataclass_fields__ if k in raw})
    log = [r for r in read_log(folder / LOG_NAME).values() if r.certified]
    log.sort(key=lambda r: (-r.ratio_certified, r.index))
    seen = set()
    if out:
        from ..record import load_record

        seen.add(instance_key(load_record(out[0]).instance))
    for r in log:
        if len(out) >= top:
            break
        if r.key in seen:
            continue
        seen.add(r.key)
        rec = record_from_log(header, r)
        path = folder / f"top-{r.index}.json"
        save_record(rec, path)
        out.append(str(path))
    return out


def grow_campaign(
    folder: str | os.PathLike,
    *,
    top: int = 2,
    steps: int = 4,
    extra: int = EXTRA_DOUBLINGS,
    time_limit: float = 10.0,
    certify: int = 2,
    out: str | os.PathLike | None = None,
    find_budget: int = FIND_BUDGET,
    progress: bool | None = None,
    certify_seconds: float = CERTIFY_SECONDS,
) -> CampaignGrowth:
    """Growth sweeps of the ``top`` best records of the campaign in ``folder`` (directions found
    by :func:`find_directions` with ``find_budget`` probes; sweeps in ``out/<record>``, default
    ``folder/growth``)."""
    base = Path(out) if out is not None else Path(folder) / "growth"
    sweeps = []
    for path in best_records(folder, top):
        sweeps.append(grow(path, steps=steps, extra=extra, time_limit=time_limit, certify=certify,
                           out=base / Path(path).stem, find_budget=find_budget,
                           progress=progress, certify_seconds=certify_seconds))  # fmt: skip
    return CampaignGrowth(tuple(sweeps), sweep_verdict([g.verdict for g in sweeps]))


__all__ = ["CampaignGrowth", "best_records", "grow_campaign"]
