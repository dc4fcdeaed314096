"""The files of a campaign folder: ``campaign.json``, ``evaluations.jsonl``, the lock.

``evaluations.jsonl`` holds one :class:`~kvopt.campaign.types.Evaluation` per
line, appended with a single ``write`` as soon as it finishes; :func:`read_log`
reads the lines of any kvopt version back into the same type.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..fileio import write_json_atomic
from .lock import lock_file
from .types import CampaignHeader, Evaluation

CAMPAIGN_FORMAT = "kvopt.campaign"
LOG_NAME = "evaluations.jsonl"
BEST_NAME = "best.json"
HEADER_NAME = "campaign.json"
#: Fields of ``campaign.json`` that must match for a rerun to resume.
IDENTITY = (
    "policy",
    "params",
    "strategy",
    "options",
    "family",
    "family_params",
    "space",
    "claim",
    "objective",
    "seed",
    "batch",
    "exact_time_limit",
    "policy_source",
    "family_source",
)


def read_log(path: Path) -> dict[int, Evaluation]:
    """Parse ``evaluations.jsonl``; a bad line is an :class:`InputError` naming its line number."""
    out: dict[int, Evaluation] = {}
    path = Path(path)
    if not path.exists():
        return out
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    complete = raw.endswith(b"\n") or not raw
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line.decode("utf-8"))
            if not isinstance(d, dict):
                raise ValueError("not a JSON object")
            idx = d["index"]
            if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
                raise ValueError(f"bad index {idx!r}")
            for key in ("key", "instance"):
                if key not in d:
                    raise ValueError(f"missing {key!r}")
            rec = Evaluation.from_dict(d)
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            hint = (
                " (the last line is incomplete: the previous run was killed while writing it)"
                if no == len(lines) and not complete
                else ""
            )
            raise InputError(
                f"line {no} is corrupt ({exc}){hint}; the log is left as it is", source=str(path)
            ) from None
        if idx in out:
            raise InputError(f"line {no}: evaluation {idx} is logged twice", source=str(path))
        out[idx] = rec
    return out


class EvaluationLog:
    """Append-only log: one ``os.write`` per line, so a kill never leaves half a line."""

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, rec: Evaluation) -> None:
        data = (json.dumps(rec.to_dict(), separators=(",", ":"), allow_nan=False) + "\n").encode()
        os.write(self.fd, data)

    def close(self) -> None:
        try:
            os.fsync(self.fd)
        except OSError:
            pass
        os.close(self.fd)


def read_history(out: str | os.PathLike) -> list[dict[str, Any]]:
    """Evaluations of a campaign folder in index order, with best-so-far curves.

    Each row: ``index``, ``t`` (campaign seconds when it finished),
    ``ratio_certified``, ``ratio_optimistic``, ``best_certified`` and
    ``best_optimistic`` (running maxima in index order).
    """
    log = read_log(Path(out) / LOG_NAME)
    rows = []
    bc = bo = -math.inf
    for idx in sorted(log):
        r = log[idx]
        rc, ro = r.ratio_certified, r.ratio_optimistic
        if rc is not None:
            bc = max(bc, rc)
            bo = max(bo, ro)
        rows.append(
            {
                "index": idx,
                "t": r.t,
                "ratio_certified": rc,
                "ratio_optimistic": ro,
                "best_certified": None if bc == -math.inf else bc,
                "best_optimistic": None if bo == -math.inf else bo,
            }
        )
    return rows


def check_header(out: Path, header: CampaignHeader) -> None:
    """Write ``campaign.json``, or refuse (exit 2) a rerun whose identity differs from it."""
    path = out / HEADER_NAME
    new = header.to_dict()
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except ValueError as exc:
            raise InputError(f"not valid JSON ({exc})", source=str(path)) from None
        if isinstance(old.get("space"), dict):  # folders from before the typed space: kind jobs
            old["space"] = {"kind": "jobs", **old["space"]}
        for key in IDENTITY:
            if _norm(old.get(key)) != _norm(new.get(key)):
                raise InputError(
                    f"this campaign was started with {key} = {json.dumps(old.get(key))}, not "
                    f"{json.dumps(new.get(key))} (rerun with the same options, or use another --out)",
                    field=key,
                    source=str(path),
                )
        return
    write_json_atomic(path, {"format": CAMPAIGN_FORMAT, "version": 1, **new})


def _norm(v):
    return json.loads(json.dumps(v, sort_keys=True))


def record_is_for(path: Path, rec: Evaluation) -> bool:
    """Whether ``best.json`` already holds the record of this evaluation (resumed runs)."""
    if not path.exists():
        return False
    try:
        data = json.loads(path.read_text())
        return data.get("found_by", {}).get("evaluation") == rec.index
    except (OSError, ValueError):
        return False


def lock_folder(out: Path):
    """An exclusive lock on the folder: two runs must never append to one log."""
    fh = lock_file(out / ".lock")
    if fh is None:
        raise InputError("another kvopt search is running on this folder", source=f"--out {out}")
    return fh


__all__ = [
    "BEST_NAME",
    "CAMPAIGN_FORMAT",
    "HEADER_NAME",
    "IDENTITY",
    "LOG_NAME",
    "EvaluationLog",
    "check_header",
    "lock_folder",
    "read_history",
    "read_log",
    "record_is_for",
]
