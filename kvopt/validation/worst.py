"""The instance behind a validation's "worst certified" figure, saved as a record.

A ratio claim's campaigns maximise ratio ÷ bound, so the record of their best find is not
always the evaluation with the highest certified ratio, which the report shows as "worst
certified". :func:`save_worst_certified` rebuilds that evaluation's record from its campaign's
log (:func:`kvopt.campaign.runner.record_from_log`) and saves it as
``OUT/<claim>/worst-certified.json``, so every figure of the report names a record that
``kvopt check`` accepts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import SimpleNamespace

from ..campaign.types import Evaluation
from ..claim import Claim
from .context import keep_record

NAME = "worst-certified.json"


def save_worst_certified(
    claim: Claim, campaigns: Iterable[tuple[str | Path, Mapping[int, Evaluation]]], out: Path
) -> str | None:
    """Save the record of the certified evaluation with the highest certified ratio over the
    ``(campaign folder, log)`` pairs; its path, or ``None`` when nothing was certified."""
    best: tuple[Path, Evaluation] | None = None
    for folder, log in campaigns:
        for ev in log.values():
            if ev.certified and (best is None or ev.ratio_certified > best[1].ratio_certified):
                best = (Path(folder), ev)
    if best is None:
        return None
    folder, ev = best
    from ..campaign.runner import record_from_log

    header = SimpleNamespace(**json.loads((folder / "campaign.json").read_text()))
    meta = {"claim": claim.id, "bound": claim.bound_for(ev.to_instance()),
            "bound_text": claim.bound_text()}  # fmt: skip
    return keep_record(record_from_log(header, ev, meta=meta), Path(out) / claim.id / NAME)


__all__ = ["NAME", "save_worst_certified"]
