"""Variant files: ``auto``'s route table with the plans of some rows replaced, read from JSON
(``benchmarks/exact.py --variant FILE``, ``benchmarks/mcsf_jaillet.py --variant FILE``;
``benchmarks/variants/`` holds the rejected variants with their figures).  A variant is
another table handed to ``solve(..., portfolio=Portfolio(routes=...))``, never a patched
module (:mod:`kvopt.exact.portfolio.routes`)."""

from __future__ import annotations

import json
import math
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from ...errors import InputError
from .rows import Phase, Race, Route


def load_variant(path: str | Path, routes: tuple[Route, ...] | None = None) -> tuple[Route, ...]:
    """``routes`` with the edits of a variant file: a JSON list of objects, each naming a row
    (``"route"``) and giving its new ``"plan"`` — a list of phases (objects with the fields
    of :class:`Phase`, ``"share": null`` for the rest) or a race (``{"lead": phase,
    "others": [phase, …], "join_after", "join_share", "lead_ends"}``).  Every row of that
    name changes (``routes``: ``auto``'s table, :data:`~kvopt.exact.portfolio.routes.ROUTES`,
    when not given).  ``benchmarks/variants/`` holds the rejected variants."""
    if routes is None:
        from .routes import ROUTES as routes
    try:
        edits = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read the variant: {e}", source=str(path)) from e
    if not isinstance(edits, list):
        raise InputError("must be a list of {route, plan} objects", source=str(path))
    names = {r.name for r in routes}
    out = list(routes)
    for k, edit in enumerate(edits):
        where = f"{path}[{k}]"
        if not isinstance(edit, dict) or set(edit) - {"route", "plan", "note"}:
            raise InputError("must be an object with route, plan (and note)", source=where)
        if edit.get("route") not in names:
            raise InputError(f"no route named {edit.get('route')!r}", source=where)
        plan = _plan(edit.get("plan"), where)
        out = [replace(r, plan=plan) if r.name == edit["route"] else r for r in out]
    return tuple(out)


def _phase(d: Any, where: str) -> Phase:
    if not isinstance(d, dict) or "backend" not in d:
        raise InputError("a phase must be an object with a backend", source=where)
    known = {f.name for f in fields(Phase)}
    if set(d) - known:
        raise InputError(f"unknown phase fields {sorted(set(d) - known)}", source=where)
    d = dict(d)
    if d.get("share", 0) is None:
        d["share"] = math.inf
    return Phase(**d)


def _plan(d: Any, where: str) -> tuple[Phase, ...] | Race:
    if isinstance(d, list) and d:
        return tuple(_phase(p, where) for p in d)
    if isinstance(d, dict) and "lead" in d:
        rest = {k: v for k, v in d.items() if k not in ("lead", "others")}
        if set(rest) - {"join_after", "join_share", "lead_ends"}:
            raise InputError(f"unknown race fields {sorted(rest)}", source=where)
        others = tuple(_phase(p, where) for p in d.get("others", ()))
        return Race(_phase(d["lead"], where), others, **rest)
    raise InputError("plan must be a list of phases or a race object", source=where)
