"""``solve()``'s portfolio: the routes as a table (:mod:`.routes`), the two executors
(:mod:`.execute`), ``auto``'s own backends (:mod:`.variants`) and the report of the route
taken (:mod:`.report`).

:class:`Portfolio` is the one object a variant changes: another table of routes, other
backends by name, or (for tests and benchmarks) whether the branch and bound counts as
compiled.  ``solve(..., portfolio=Portfolio(...))``; never a patched module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ...instance import Instance
from ..backend import Backend
from ..common import spec_horizon
from .report import PhaseRun, RouteReport
from .routes import (
    ROUTES,
    SMALL_HEURISTIC,
    TYPED_GROUPS,
    Case,
    Phase,
    Race,
    Route,
    Source,
    When,
    load_variant,
    route_for,
)

__all__ = [
    "ROUTES",
    "Case",
    "Phase",
    "PhaseRun",
    "Portfolio",
    "Race",
    "Route",
    "RouteReport",
    "Source",
    "When",
    "case_of",
    "groups",
    "load_variant",
    "route_for",
]


def _distinct(inst: Instance) -> set[tuple[int, int, int]]:
    """The distinct jobs (prompt, response, arrival)."""
    return set(zip(inst.prompts.tolist(), inst.responses.tolist(), inst.arrivals.tolist()))


def groups(inst: Instance) -> int:
    """The number of distinct jobs (prompt, response, arrival)."""
    return len(_distinct(inst))


@dataclass(frozen=True)
class Portfolio:
    """The routes ``solve()`` chooses from and the backends their phases name.

    ``backends`` (name → backend) are looked up first, then ``auto``'s own
    (:data:`~kvopt.exact.portfolio.variants.VARIANTS`), then
    :data:`kvopt.exact.registry.BACKENDS` — at call time.  ``compiled``: whether the branch
    and bound counts as compiled for routing (``None``: :func:`kvopt.exact.bnb.uses_compiled`,
    i.e. Numba installed and ``n`` large enough); setting it changes the route chosen, not
    how the backends run (give a ``BranchAndBound(compiled=False)`` for that)."""

    routes: tuple[Route, ...] = ROUTES
    backends: Mapping[str, Backend] = field(default_factory=dict)
    compiled: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "backends", MappingProxyType(dict(self.backends)))

    def backend(self, name: str) -> Backend:
        from ..registry import BACKENDS
        from .variants import VARIANTS

        for table in (self.backends, VARIANTS, BACKENDS):
            if name in table:
                return table[name]
        raise KeyError(f"no backend named {name!r}")

    def case(
        self, instance: Instance, objective: str, time_limit: float, threads: int, solver: str
    ) -> Case:
        from ..bnb import uses_compiled

        compiled = uses_compiled(instance.n) if self.compiled is None else self.compiled
        return case_of(instance, objective, time_limit, threads, solver, compiled=compiled)

    def route(
        self, instance: Instance, objective: str, time_limit: float, threads: int, solver: str
    ) -> Route:
        return route_for(self.case(instance, objective, time_limit, threads, solver), self.routes)


def case_of(
    instance: Instance,
    objective: str,
    time_limit: float,
    threads: int,
    solver: str = "auto",
    *,
    compiled: bool,
) -> Case:
    """What :func:`route_for` reads of a solve (pure)."""
    distinct = _distinct(instance)
    typed = len(distinct) <= TYPED_GROUPS
    rounds = int(instance.responses.sum())
    # the memory rows' nonzeros: one column per start of each job, or of each distinct job
    # when typed (the aggregated model), each in o rows
    per_start = sum(o for _, o, _ in distinct) if typed else rounds
    horizon = spec_horizon(instance) if instance.n else 0
    return Case(
        solver=solver,
        n=instance.n,
        objective=objective,
        threads=int(threads),
        time_limit=float(time_limit),
        compiled=bool(compiled),
        typed=typed,
        rounds=rounds,
        cells=int(per_start) * int(horizon),
        long=int((2 * instance.responses > instance.memory).sum()),
        arrivals=bool(instance.n and instance.arrivals.max() > 0),
        capped=instance.max_batch is not None,
    )


#: the default portfolio
DEFAULT = Portfolio()

__all__ += ["DEFAULT", "SMALL_HEURISTIC"]
