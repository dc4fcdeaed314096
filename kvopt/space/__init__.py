"""Instance spaces: the classes of instances that search and validation explore.

A space describes a class of instances structurally so that one object can
both *decide* membership (``rule``, the broken rule or ``None``) and *produce*
members: ``sample`` (random), ``mutate`` (local moves that stay inside),
``enumerate`` (every member of a small grid).  Two kinds (``--space kind=…``,
SPEC §4 and §9), one registry line each in :data:`SPACES`:

* ``jobs`` — :class:`~kvopt.space.jobs.Space`, every job drawn on its own
  (the instance classes of SPEC §7 and the policies' default spaces);
* ``typed`` — :class:`~kvopt.space.typed.TypedSpace`, a few job types with
  many copies each, under the same class rules.

Spaces only hold numbers and strings, so they pickle to worker processes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from .jobs import MUTATIONS, REGIMES, Space, regime_of
from .typed import STRUCTURE, TYPED_MUTATIONS, JobType, TypedSpace

#: ``kind`` → space class.
SPACES: dict[str, type] = {"jobs": Space, "typed": TypedSpace}


def space_from_dict(data: Mapping[str, Any], base: Space | TypedSpace | None = None):
    """The space of ``data`` (the fields of a space, plus ``kind``: ``jobs`` by default).

    With ``base`` (e.g. a policy's or claim's default space), the fields of
    ``data`` change ``base``; a typed space made from a per-job ``base``
    keeps its class rules (:data:`~kvopt.space.typed.STRUCTURE`) with the
    typed size defaults (:meth:`TypedSpace.from_space`).  Errors name
    ``space.<field>``.
    """
    if not isinstance(data, Mapping):
        raise InputError(f"must be an object, got {type(data).__name__}", source="space")
    fields = dict(data)
    kind = fields.pop("kind", "jobs")
    if kind not in SPACES:
        raise InputError(f"unknown kind {kind!r} (known: {', '.join(SPACES)})",
                         source="space.kind")  # fmt: skip
    start: dict[str, Any] = {}
    if base is not None:
        if kind == "typed" and not isinstance(base, TypedSpace):
            base = TypedSpace.from_space(base)
        elif kind == "jobs" and isinstance(base, TypedSpace):
            base = base.per_job
        start = base.to_dict()
        start.pop("kind", None)
    return SPACES[kind].from_dict({**start, **fields})


__all__ = [
    "MUTATIONS",
    "REGIMES",
    "SPACES",
    "STRUCTURE",
    "TYPED_MUTATIONS",
    "JobType",
    "Space",
    "TypedSpace",
    "regime_of",
    "space_from_dict",
]
