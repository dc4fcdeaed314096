"""Search strategies: propose a batch → evaluate → accept (``kvopt search --strategy``).

A strategy is a small object with :meth:`~Strategy.propose` (a deterministic
batch of candidate instances for batch number ``b`` and a generator seeded
from ``(seed, b)``), :meth:`~Strategy.tell` (the evaluations of that batch, in
proposal order) and ``exhausted``.  Because a batch depends only on the seed,
the batch number and the results told before, a campaign replays exactly:
serial, local processes and Dask propose the same batches, and a resumed
campaign re-proposes the same candidates and takes their results from the
log.

Every proposal lies inside the class (:class:`SearchContext.rule`: the
policy's registry class, and the claim's class when validating), so no
evaluation is wasted on "not applicable".

:data:`STRATEGIES` is the one registry:

``random``      independent samples of the space, or of a ``kvopt gen`` family;
``anneal``      simulated annealing from the best so far with the class-keeping
                moves of :meth:`kvopt.space.Space.mutate`;
``cma``         CMA-ES (the ``cma`` package, optional extra ``kvopt[cma]``) over a
                fixed-size continuous encoding (``[0, 1]`` per M, and per job its
                presence, prompt, response and arrival), decoded to the nearest
                allowed job;
``family``      a grid over list-valued parameters of a construction
                (``--family prop1 --param L=2,3,4,5``), with growth exponents;
``trace``       windows of the bundled Azure trace, scaled to the memory budget,
                and bounded perturbations (±``delta``) of the best window;
``exhaustive``  every member of a small grid (the space's n, M and response
                ranges), in a fixed order: the true worst case of a tiny class.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ...errors import InputError
from .base import Proposal, SearchContext, Strategy, probe, score
from .grid import FAMILY_GRIDS, ExhaustiveStrategy, FamilyStrategy, fit_exponent
from .local import AnnealStrategy, CMAStrategy, RandomStrategy
from .trace import TraceStrategy

#: Every strategy, by its ``--strategy`` name.  Explicit on purpose: grep here.
STRATEGIES: dict[str, type] = {
    cls.name: cls
    for cls in (
        RandomStrategy,
        AnnealStrategy,
        CMAStrategy,
        FamilyStrategy,
        TraceStrategy,
        ExhaustiveStrategy,
    )
}


def make_strategy(name: str, ctx: SearchContext, options: Mapping[str, Any] | None = None):
    """A fresh strategy object; :class:`InputError` naming ``--strategy`` if unknown."""
    if name not in STRATEGIES:
        raise InputError(
            f"unknown strategy {name!r} (known: {', '.join(STRATEGIES)})", source="--strategy"
        )
    ctx = dataclasses.replace(ctx)  # strategies may widen the space; keep the caller's intact
    return STRATEGIES[name](ctx, dict(options or {}))


__all__ = [
    "FAMILY_GRIDS",
    "STRATEGIES",
    "Proposal",
    "SearchContext",
    "Strategy",
    "fit_exponent",
    "make_strategy",
    "probe",
    "score",
]
