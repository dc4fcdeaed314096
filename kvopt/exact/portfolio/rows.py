"""The row types of ``solve()``'s route table (:mod:`kvopt.exact.portfolio.routes`): where
a row's numbers come from (:class:`Source`), one backend's run (:class:`Phase`), backends
side by side (:class:`Race`), the cases a row serves (:class:`When`, matched against a
:class:`Case`) and the row itself (:class:`Route`).  Frozen; checked once when built."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from ...errors import InputError

#: ``Phase.threads``: every thread, one, or all but one (at least one)
THREADS = ("all", "one", "rest")
#: ``Phase.windows`` before the phase: ``keep`` the windows as they are (still with the best
#: schedule so far as warm start); ``value`` — intersect with the start windows of the best
#: value; ``tighten`` — ``value``, then the LP windows and reduced-cost fixing
#: (``models/time-indexed.md`` §2, §9), within 5 % of what is left (at most 10 s)
WINDOWS = ("keep", "value", "tighten")


@dataclass(frozen=True)
class Source:
    """Where a row's numbers come from: the measurement that chose them."""

    section: str  # e.g. "models/bnb.md §7"
    instances: str  # which instances, e.g. "n = 17, 18 benchmark instances, seeds 1-6"
    seconds: float | None  # the time limit of the measurement
    finding: str  # what it showed


@dataclass(frozen=True)
class Phase:
    """One backend's turn: ``backend`` (a name of the portfolio's backends), for ``share`` of
    the time limit (``math.inf``: what is left), on ``threads`` (:data:`THREADS`), CP-SAT's
    ``bound_focus`` or ``proof_focus``, the windows it is given (:data:`WINDOWS`); skipped
    when fewer than ``min_seconds`` are left."""

    backend: str
    share: float = math.inf
    threads: str = "all"
    bound_focus: bool = False
    proof_focus: bool = False
    windows: str = "keep"
    min_seconds: float = 0.0

    def __post_init__(self) -> None:
        if not (self.share > 0):
            raise InputError(f"must be > 0, got {self.share!r}", source=f"{self.backend}.share")
        if self.bound_focus and self.proof_focus:
            raise InputError(
                "bound_focus and proof_focus choose CP-SAT's workers: at most one",
                source=f"{self.backend}.proof_focus",
            )
        if self.threads not in THREADS:
            raise InputError(
                f"must be one of {', '.join(THREADS)}, got {self.threads!r}",
                source=f"{self.backend}.threads",
            )
        if self.windows not in WINDOWS:
            raise InputError(
                f"must be one of {', '.join(WINDOWS)}, got {self.windows!r}",
                source=f"{self.backend}.windows",
            )

    def thread_count(self, threads: int) -> int:
        """The threads this phase gets out of ``threads``."""
        return {"all": threads, "one": 1, "rest": max(threads - 1, 1)}[self.threads]


@dataclass(frozen=True)
class Race:
    """Backends at once, sharing incumbents and bounds.  ``lead`` runs in the calling thread
    (it gets Ctrl-C first); each of ``others`` runs in a thread of its own, started after
    ``join_after`` seconds or ``join_share`` of the time limit, whichever is later (0: at
    once), and only while the lead runs (a lead that ends first leaves it unstarted).  A
    racer that finishes ends the race (the lead only if ``lead_ends``), and so does a bound
    meeting an incumbent (within the gap)."""

    lead: Phase
    others: tuple[Phase, ...]
    join_after: float = 0.0
    join_share: float = 0.0
    lead_ends: bool = True

    def join_at(self, time_limit: float) -> float:
        """Seconds after the race starts at which ``others`` start."""
        return max(self.join_after, self.join_share * time_limit)

    @property
    def phases(self) -> tuple[Phase, ...]:
        return (self.lead, *self.others)


@dataclass(frozen=True)
class When:
    """The cases a row serves (all bounds inclusive; ``None``: either)."""

    solver: str = "auto"
    n_min: int = 1
    n_max: float = math.inf
    objective: str | None = None
    threads_min: int = 1
    threads_max: float = math.inf
    compiled: bool | None = None  # the branch and bound runs compiled (Numba) at this n
    typed: bool | None = None  # at most TYPED_GROUPS distinct jobs
    rounds_max: float = math.inf  # Σ o_i
    time_limit_min: float = 0.0
    rounds_min: float = 0.0  # Σ o_i
    cells_min: float = 0.0  # the time-indexed model's size (Case.cells)
    long_share_min: float = 0.0  # at least this share of the jobs has 2·o_i > M (Case.long)
    arrivals: bool | None = None  # some job arrives after round 0 (Case.arrivals)
    capped: bool | None = None  # the instance has a batch cap (Case.capped)

    def holds(self, case: Case) -> bool:
        return (
            self.solver == case.solver
            and self.n_min <= case.n <= self.n_max
            and self.objective in (None, case.objective)
            and self.threads_min <= case.threads <= self.threads_max
            and self.compiled in (None, case.compiled)
            and self.typed in (None, case.typed)
            and self.rounds_min <= case.rounds <= self.rounds_max
            and case.time_limit >= self.time_limit_min
            and case.cells >= self.cells_min
            and case.long >= self.long_share_min * case.n
            and self.arrivals in (None, case.arrivals)
            and self.capped in (None, case.capped)
        )

    def describe(self) -> str:
        """The conditions in words (for ``--explain``)."""
        out = [f"solver={self.solver}"]
        if self.n_min > 1 or self.n_max < math.inf:
            hi = "" if self.n_max == math.inf else f"{int(self.n_max)}"
            out.append(f"n {self.n_min}-{hi}" if hi else f"n >= {self.n_min}")
        if self.objective:
            out.append(self.objective)
        if self.threads_min > 1 or self.threads_max < math.inf:
            out.append("threads 1" if self.threads_max == 1 else f"threads >= {self.threads_min}")
        if self.compiled is not None:
            out.append("Numba" if self.compiled else "no Numba")
        if self.typed is not None:
            out.append("typed" if self.typed else "mixed")
        if self.rounds_min > 0:
            out.append(f"sum of responses >= {int(self.rounds_min)}")
        if self.rounds_max < math.inf:
            out.append(f"sum of responses <= {int(self.rounds_max)}")
        if self.time_limit_min > 0:
            out.append(f"time limit >= {self.time_limit_min:g} s")
        if self.cells_min > 0:
            out.append(f"time-indexed model >= {self.cells_min:.3g} nonzeros")
        if self.long_share_min > 0:
            out.append(f"responses above M/2 for >= {self.long_share_min:.0%} of the jobs")
        if self.arrivals is not None:
            out.append("with arrivals" if self.arrivals else "all jobs at round 0")
        if self.capped is not None:
            out.append("batch cap" if self.capped else "no batch cap")
        return ", ".join(out)


@dataclass(frozen=True)
class Case:
    """What :func:`route_for` reads of a solve: the ``solver=`` value, ``n``, the objective,
    threads, the time limit, whether the branch and bound runs compiled, whether the
    instance is typed, Σ o_i, and ``cells``: the nonzeros of the time-indexed memory rows
    over the SPEC §1 horizon ``H = max a + Σ o`` (``Σ o_g · H`` over the distinct jobs ``g``
    when typed, the aggregated model; ``Σ o_i · H`` over the jobs otherwise), which is what
    a time-indexed model costs to build (:data:`~kvopt.exact.portfolio.routes.MODEL_MAX_CELLS`);
    ``long``: the jobs whose response is longer than half the memory (``2·o_i > M``), where the
    completion cliques of ``models/cliques.md`` lift the LP most; ``arrivals``: some job arrives
    after round 0; ``capped``: the instance has a batch cap (SPEC §10.1, ``max_batch``)."""

    solver: str
    n: int
    objective: str
    threads: int
    time_limit: float
    compiled: bool
    typed: bool
    rounds: int
    cells: int = 0
    long: int = 0
    arrivals: bool = False
    capped: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Route:
    """One row of :data:`ROUTES`: its name, the cases it serves, what runs before the plan
    (``quick``: the heuristic's local search gets at most ``SMALL_HEURISTIC`` s, else
    ``min(0.5 s, 5 %)``; ``lp_windows``: the start windows tightened by the LP and
    reduced-cost fixing; ``lp_values``: with ``lp_windows``, whether the LP values of the
    other jobs cut the windows before the fixing, ``models/time-indexed.md`` §4.1 — off, the
    fixing alone), the plan, whether the result is labelled ``auto(...)``, a line saying
    why, and the provenance of its numbers."""

    name: str
    when: When
    plan: tuple[Phase, ...] | Race
    why: str
    source: Source | None = None
    quick: bool = False
    lp_windows: bool = True
    label_auto: bool = True
    lp_values: bool = True

    @property
    def phases(self) -> tuple[Phase, ...]:
        return self.plan.phases if isinstance(self.plan, Race) else self.plan

    @property
    def kind(self) -> str:
        return "race" if isinstance(self.plan, Race) else "phases"
