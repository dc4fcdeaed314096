"""The rows of ``auto``'s route table for an instance with a batch cap (SPEC §10.1,
``Instance.max_batch``: at most ``B`` jobs run in any round).

:data:`kvopt.exact.portfolio.routes.ROUTES` takes them first, so a capped instance never
reaches the rows below them.  Only the backends that model the cap run here (their class
says so with ``batch_cap = True``): the time-indexed IP (HiGHS, Pyomo: the count rows of
``models/time-indexed.md`` §13), the two CP-SAT models (the cumulative of demand 1 and
capacity ``B``, ``models/cpsat.md`` and ``models/orders.md`` §4) and the local search (its
serial placement respects the cap, :mod:`kvopt.exact.heuristic`).  The branch and bound
(``bnb``, ``ladder`` and the clique variants) and the time-block bound do not model the cap:
no capped row names them, and :func:`check_batch_cap` refuses a plan that does
(``solver="bnb"`` on a capped instance is an error naming the backends that work).  The
branch and bound runs here only on the relaxation without the cap (``bnb-without-cap``,
``ladder-without-cap``: :class:`~kvopt.exact.portfolio.variants.WithoutCap`): its bound holds under the cap, and its
schedule is used only when it keeps the cap.

The LP windows and the reduced-cost fixing before the plan stay: they come from the LP
without the count rows, a relaxation of the capped model, so every capped schedule of value
``≤ UB`` keeps its starts (``models/time-indexed.md`` §13).

The rows copy the shape of the uncapped table (the event model where the time-indexed
models get large, HiGHS on the aggregated model for typed instances, the local search
before CP-SAT from 31 jobs); their numbers are those of the uncapped rows, not measured
under a cap, except 'capped-small' (``models/time-indexed.md`` §13 has the one comparison
made).
"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import InputError
from ..backend import Backend
from .rows import Phase, Route, Source, When

#: responses adding up to more than this many rounds go to the event model (the bound of the
#: uncapped small path, ``rounds_max=400``: above it the uncapped table takes the event model
#: up to n = 16, ``models/orders.md`` §6-§7)
CAPPED_EVENTS_ROUNDS = 400
#: the size from which the time-indexed model is not built (``MODEL_MAX_CELLS`` of the routes;
#: repeated here to keep the import one way)
CAPPED_MAX_CELLS = 30_000_000

_CAPPED = Source(
    "models/time-indexed.md §13",
    "none under a cap: the uncapped rows' shape and numbers",
    None,
    "the backends that model the cap, where the uncapped table takes the same model",
)

#: the row 'capped-small': up to this many jobs (the small path's n and the compiled
#: search's; the uncapped branch and bound proves them in seconds, models/bnb.md §5-§7) …
CAPPED_SMALL_N = 20
#: … the relaxation without the cap first, for this share of the limit
CAPPED_RELAXED_SHARE = 0.2
_CAPPED_SMALL = Source(
    "models/time-indexed.md §13",
    "kvopt gen random n = 10, seeds 1-3, caps 2-4 (M = 64), 2 threads",
    60.0,
    "this row proved all 9 in 1.2-4.0 s (uncapped, small-race: 0.6-0.8 s); CP-SAT's "
    "time-indexed model alone proved 6 of 9 (2.7-21.1 s, three open at 60 s); HiGHS none of "
    "the 4 it was given in 30 s, the event model alone those 4 in 4.7-7.2 s",
)

#: the row 'capped-ladder': n from ``CAPPED_SMALL_N + 1`` to this (the uncapped 'ladder' row's
#: range, models/bnb.md §8-§9) and responses adding up to at most this many rounds (beyond, the
#: uncapped table takes the event model alone: 'events-long')
CAPPED_LADDER_N = 30
CAPPED_LADDER_ROUNDS = 5999
_CAPPED_LADDER = Source(
    "models/time-indexed.md §13",
    "kvopt gen random n = 25, seeds 1-3, cap 4 (Σo 362-506), 20 s, 2 threads",
    20.0,
    "schedules 1596, 1660, 2621 and bounds 1333, 1317, 2013, against 1696, 1751, 2632 and "
    "1205, 1183, 1881 for the rows before it (CP-SAT: seeds 1-2, the event model alone: "
    "seed 3); the local search and the event model without the ladder: bounds 1215, 1246, "
    "1824",
)

#: ``auto``'s rows for a capped instance (first in the table)
CAPPED_ROUTES: tuple[Route, ...] = (
    Route(
        "capped-no-model",
        When(capped=True, n_min=61, cells_min=CAPPED_MAX_CELLS),
        (Phase("ils"),),
        "batch cap, a time-indexed model too large to build and more than 60 jobs: the "
        "heuristic's schedule (under the cap) improved by the local search; the cheap bounds",
        _CAPPED,
        lp_windows=False,
    ),
    Route(
        "capped-events",
        When(capped=True, n_max=60, cells_min=CAPPED_MAX_CELLS),
        (Phase("events", bound_focus=True),),
        "batch cap, a time-indexed model too large to build: the event model with the cap's "
        "cumulative",
        _CAPPED,
        lp_windows=False,
    ),
    Route(
        "capped-small",
        When(capped=True, n_max=CAPPED_SMALL_N, objective="total", rounds_max=400),
        (Phase("bnb-without-cap", CAPPED_RELAXED_SHARE), Phase("events", proof_focus=True)),
        "batch cap, small instance: the branch and bound without the cap (its bound holds "
        "under the cap, and its schedule proves Opt when it keeps the cap), then the event "
        "model with the cap's cumulative",
        _CAPPED_SMALL,
        quick=True,
        lp_windows=False,
    ),
    Route(
        "capped-ladder",
        When(
            capped=True,
            n_min=CAPPED_SMALL_N + 1,
            n_max=CAPPED_LADDER_N,
            objective="total",
            threads_min=2,
            compiled=True,
            typed=False,
            rounds_max=CAPPED_LADDER_ROUNDS,
        ),
        (
            Phase("ils", 0.2),
            Phase("ladder-without-cap", 0.4, windows="tighten"),
            Phase("events", bound_focus=True),
        ),
        "batch cap, n = 21-30 with the compiled search, two threads: the local search's "
        "incumbent, the ladder's proven thresholds without the cap (bounds under it too), then "
        "the event model with the cap's cumulative",
        _CAPPED_LADDER,
    ),
    Route(
        "capped-events-long",
        When(capped=True, n_max=60, typed=False, rounds_min=CAPPED_EVENTS_ROUNDS + 1),
        (Phase("events", bound_focus=True),),
        f"batch cap, responses adding up to more than {CAPPED_EVENTS_ROUNDS} rounds: the "
        "event model with the cap's cumulative (its size follows n, not the lengths)",
        _CAPPED,
        lp_windows=False,
    ),
    Route(
        "capped-typed",
        When(capped=True, objective="total", typed=True),
        (Phase("highs"),),
        "batch cap, typed instance: HiGHS on the aggregated time-indexed model with the count rows",
        _CAPPED,
        lp_values=False,
    ),
    Route(
        "capped-ils-cpsat",
        When(capped=True, n_min=31, objective="total", threads_min=2),
        (Phase("ils", 0.2), Phase("cpsat", bound_focus=True, windows="tighten")),
        "batch cap, n > 30, two threads: the local search's incumbent, then CP-SAT with the "
        "cap's cumulative and its bound workers",
        _CAPPED,
    ),
    Route(
        "capped",
        When(capped=True),
        (Phase("cpsat", bound_focus=True),),
        "batch cap: CP-SAT with the cap's cumulative, with two bound-moving full workers on "
        "two threads",
        _CAPPED,
    ),
)


def check_batch_cap(route: Route, backend: Callable[[str], Backend], max_batch: int | None) -> None:
    """Refuse a plan with a backend that does not model the batch cap ``max_batch`` (one
    without ``batch_cap = True``): its schedules could break the cap, and its proofs rest on
    facts of the uncapped model.  Nothing without a cap."""
    if max_batch is None:
        return
    for phase in route.phases:
        if not getattr(backend(phase.backend), "batch_cap", False):
            raise InputError(
                f"backend {phase.backend!r} (route {route.name!r}) does not model the batch cap "
                f"max_batch={max_batch}; use solver auto, cpsat, highs, pyomo, events or race",
                source="solver",
            )
