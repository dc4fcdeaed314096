"""``solve()``'s routes as data: which backends run, in which order, for how long.

A :class:`Route` is one row of :data:`ROUTES`: the cases it serves (:class:`When`: the
``solver=`` value, the size range, the objective, the threads, whether the branch and
bound runs compiled (Numba), typed or mixed, how many rounds the responses add up to,
the time limit), what :func:`kvopt.exact.solve` does before the plan (the heuristic's
budget, LP windows or not) and the plan itself: :class:`Phase` rows run in turn
(:func:`kvopt.exact.portfolio.execute.run_phases`) or a :class:`Race`
(:func:`kvopt.exact.portfolio.execute.run_race`).  Each row keeps the provenance of its
numbers (:class:`Source`: the instances, the time limit, the ``models/*.md`` section).

:func:`route_for` is pure: the first row whose :class:`When` holds.  A variant is another
table (``solve(..., portfolio=Portfolio(routes=...))``, or a variant file read by
:func:`load_variant`, as ``benchmarks/exact.py --variant FILE`` does), never a patched
module.  The rows of ``auto`` in order (``models/bnb.md``, ``models/time-indexed.md``,
``models/orders.md``):

====================  =====================================================================
capped-*              an instance with a batch cap (SPEC §10.1): only backends that model it
                      (``cappedrows``: the event model, HiGHS, CP-SAT, the local search)
events-large          time-indexed model > 3e7 nonzeros (Case.cells), n ≤ 60: the event model
no-model              … n > 60: the heuristic and the local search, the cheap bounds only
cliques               n = 15-19, responses as long as the memory (a quarter above M/2), all at
                      round 0, 2+ threads: the LP with the completion cliques, the branch and
                      bound over the windows its prices cut ½, then the event model
cliques-ils           … n = 20-30: the local search 0.2 first, the branch and bound 0.4
cliques-arrivals      … with arrivals, n = 21-60: the local search 0.2, then the event model with
                      those prices (bound workers)
cliques-events        … all at round 0, n = 31-60: as cliques-arrivals
small-race            n ≤ 16, Σo ≤ 400, total, 2+ threads: branch and bound, CP-SAT joins
small-one-thread      … one thread: branch and bound ½ the limit, then CP-SAT
small-makespan        n ≤ 16, Σo ≤ 400, makespan: CP-SAT
compiled-mid          n = 17-18, compiled, mixed, 2+ threads: bnb 0.4, CP-SAT (bound workers)
compiled-split        n = 19-20, compiled, mixed, 2+ threads: bnb 0.65, then the ladder
compiled-one-thread   n = 17-18, compiled, mixed, one thread: as small-one-thread
long-limit-*          n = 17, 18 without Numba, mixed, a long limit: CP-SAT, bnb, CP-SAT
events-small          n ≤ 12, Σo > 400 (long responses), any objective: the event model, two
                      tree searches ½, then the bound workers; quick heuristic
events                n = 13-16, Σo > 400: the LP's prices, then the event model with the
                      Lagrangian rows (bound workers)
events-long           n = 17-60, mixed, Σo ≥ 6000: the event model
events-mid            n = 17-20, mixed, Σo 2000-5999: as events
typed-race-wide       ≤ 4 distinct jobs, total, 3+ threads: two HiGHS models, the block bound
typed-race            … 2 threads: HiGHS on the plain aggregated model races the rows model
typed-serial-blocks   … one thread, limit ≥ 30 s: HiGHS ½, then the block bound
typed-serial          … one thread: HiGHS
ladder                n = 21-30, compiled, mixed, total, 2+ threads: local search, ladder
ils-cpsat             n = 31-60, total, 2+ threads: local search 0.2, CP-SAT (bound workers)
cpsat                 everything else: CP-SAT with its bound workers
====================  =====================================================================

Rejected variants are not rows: ``benchmarks/variants/*.json`` hold them, with their
figures in ``models/`` (``SPLIT_ILS_SHARE``: ``models/bnb.md`` §10; the split search's
race on one thread: §7; the three serial phases: ``models/time-indexed.md`` §9.5).
"""

from __future__ import annotations

import math
from dataclasses import replace

from ...errors import InputError
from .cappedrows import CAPPED_ROUTES
from .cliquerows import (
    CLIQUE_ROUTES,
    CLIQUES_ARRIVALS_BNB_N,
    CLIQUES_ARRIVALS_N,
    CLIQUES_EVENTS_N,
    CLIQUES_ILS_N,
    CLIQUES_N,
    CLIQUES_ROUNDS,
)
from .rows import THREADS, WINDOWS, Case, Phase, Race, Route, Source, When
from .variantfile import load_variant

# the row types live in .rows and are re-exported here, beside the table
__all__ = [
    "CAPPED_ROUTES",
    "CLIQUES_ARRIVALS_BNB_N",
    "CLIQUES_ARRIVALS_N",
    "CLIQUES_EVENTS_N",
    "CLIQUES_ILS_N",
    "CLIQUES_N",
    "CLIQUES_ROUNDS",
    "CLIQUE_ROUTES",
    "EVENTS_ROUNDS",
    "MODEL_MAX_CELLS",
    "ROUTES",
    "SMALL_HEURISTIC",
    "THREADS",
    "TYPED_GROUPS",
    "WINDOWS",
    "Case",
    "Phase",
    "Race",
    "Route",
    "Source",
    "When",
    "load_variant",
    "route_for",
]

#: ``auto``'s heuristic on the quick routes: its local search for at most this many seconds
#: (50 and 100 ms were slower at n = 12: 0.414 s median against 0.464 and 0.532 s)
SMALL_HEURISTIC = 0.02
#: at most this many distinct jobs (prompt, response, arrival): a typed instance
TYPED_GROUPS = 4
#: from n = 17 (mixed), responses adding up to at least this many rounds go to the event
#: model (``models/orders.md`` §6: measured fine up to 4,826 rounds, gigabytes and overruns
#: at 9,652)
EVENTS_ROUNDS = 6000
#: … and n = 17-20 (mixed) from this many on take the event model with the LP's prices
#: (``models/orders.md`` §10.3: better bounds than the time-indexed CP-SAT model on the n = 20
#: Azure samples, Σo 2,413-3,974; below 2,000 rounds not measured, so left to it)
EVENTS_MID_ROUNDS = 2000
#: the plan of the rows 'events' and 'events-mid': the LP's prices, then the event model with
#: the Lagrangian rows and CP-SAT's bound workers (``models/orders.md`` §10.3)
EVENTS_LAGRANGE_PLAN = (Phase("events-lagrange", bound_focus=True),)

_BNB_CPSAT = Source(
    "models/bnb.md §1-§6",
    "n = 10-16 random mixed instances (benchmarks/exact.py --throughput)",
    60.0,
    "CP-SAT alone is far slower at n = 12; joining after max(1 s, 25 % of the limit) it "
    "proved none of the n = 14-16 instances first and slowed the split search by 15-28 %",
)
_LONG = Source(
    "models/bnb.md §6",
    "n = 17 seeds 1-6, n = 18 seeds 1-2 (benchmarks/exact.py), Python search",
    400.0,
    "the two prove different instances: in turn (CP-SAT 0.2, bnb 0.5, CP-SAT) they prove "
    "n = 17 seeds 1-5 within 160 s and n = 18 seeds 1-2 in 252-276 s of 400 s",
)
_LONG_LIMIT = {17: 160.0, 18: 400.0}  # two threads; one thread: twice that


def _long_rows() -> tuple[Route, ...]:
    rows = []
    for n, need in _LONG_LIMIT.items():
        for threads, factor in ((2, 1.0), (1, 2.0)):
            focus = threads >= 2
            rows.append(
                Route(
                    f"long-limit-{n}" + ("" if threads >= 2 else "-one-thread"),
                    When(
                        n_min=n,
                        n_max=n,
                        objective="total",
                        threads_min=threads,
                        threads_max=math.inf if threads >= 2 else 1,
                        compiled=False,
                        typed=False,
                        rounds_max=400,
                        time_limit_min=need * factor,
                    ),
                    (
                        Phase("cpsat", 0.2, bound_focus=focus, windows="tighten"),
                        Phase("bnb", 0.5, windows="tighten"),
                        Phase("cpsat", bound_focus=focus, windows="tighten"),
                    ),
                    f"n = {n} without Numba and a limit of at least {need * factor:g} s: "
                    "CP-SAT and the branch and bound in turn prove what neither does alone",
                    _LONG,
                    lp_windows=False,
                )
            )
    return tuple(rows)


_SMALL = When(n_max=16, objective="total", rounds_max=400)

#: a time-indexed model with more memory-row nonzeros than this (``Case.cells``) is not built
#: (the typed race on n = 6,224 copies of fcfs.json's jobs x4, 1.7e7 nonzeros, peaked at 2.9 GB
#: and overran a 10 s limit by 11 s; certifying a x128 growth point, 6e8, died at 24 GB)
MODEL_MAX_CELLS = 30_000_000
_TOO_LARGE = Source(
    "models/orders.md §6; kvopt solve on grown typed records (issue 35)",
    "fcfs.json's jobs x16 copies, lengths x1 and x4 (n = 6,224); fcfs-growth's x128 point "
    "(n = 12,751, 65,256 rounds)",
    10.0,
    "1.4e6 nonzeros: 0.26 GB, 12 s; 1.7e7: 2.9 GB, 21 s (threads did not stop); 6e8: killed "
    "at 24 GB.  The event model's size follows n, not the lengths",
)

#: ``auto``'s routes, ``race``'s and the named backends', in order: :func:`route_for` takes the
#: first that holds
ROUTES: tuple[Route, ...] = (
    # an instance with a batch cap takes these (the backends that model the cap) and no other
    *CAPPED_ROUTES,
    Route(
        "events-large",
        When(n_max=60, cells_min=MODEL_MAX_CELLS),
        (Phase("events", bound_focus=True),),
        f"a time-indexed model of more than {MODEL_MAX_CELLS:.0e} nonzeros is not built; up to "
        "60 jobs the event model, whose size follows n, not the horizon (both objectives)",
        _TOO_LARGE,
        lp_windows=False,
    ),
    Route(
        "no-model",
        When(n_min=61, cells_min=MODEL_MAX_CELLS),
        (Phase("ils"),),
        f"a time-indexed model of more than {MODEL_MAX_CELLS:.0e} nonzeros is not built, nor "
        "the event model beyond 60 jobs: the heuristic's schedule improved by the local "
        "search, and the cheap lower bounds of SPEC §2 (no model, no proof beyond them)",
        _TOO_LARGE,
        lp_windows=False,
    ),
    *CLIQUE_ROUTES,
    Route(
        "small-race",
        replace(_SMALL, threads_min=2),
        Race(
            Phase("bnb"),
            (Phase("cpsat", threads="rest"),),
            join_after=1.0,
            join_share=0.25,
        ),
        "small instance, two threads: the branch and bound (its tree split between the "
        "threads) proves it in seconds; CP-SAT joins late, for the hard ones",
        _BNB_CPSAT,
        quick=True,
        lp_windows=False,
    ),
    Route(
        "small-one-thread",
        replace(_SMALL, threads_max=1),
        (Phase("bnb", 0.5), Phase("cpsat", threads="one")),
        "small instance, one thread: the branch and bound for half the limit, then CP-SAT "
        "from its best schedule",
        Source(
            "models/bnb.md §5",
            "n = 12 throughput set",
            60.0,
            "three phases (bnb 0.3 s, CP-SAT, bnb) measured no better "
            "(models/time-indexed.md §9.5)",
        ),  # fmt: skip
        quick=True,
        lp_windows=False,
    ),
    Route(
        "small-makespan",
        When(n_max=16, objective="makespan", rounds_max=400),
        (Phase("cpsat"),),
        "small instance, makespan: the branch and bound's makespan bound is weak; CP-SAT",
        Source(
            "models/bnb.md §2",
            "small makespan instances",
            None,
            "the branch and bound's makespan bound is weak",
        ),  # fmt: skip
        quick=True,
        lp_windows=False,
    ),
    Route(
        "compiled-mid",
        When(
            n_min=17,
            n_max=18,
            objective="total",
            threads_min=2,
            compiled=True,
            typed=False,
            rounds_max=400,
        ),  # fmt: skip
        (
            Phase("bnb", 0.4, windows="tighten"),
            Phase("cpsat", bound_focus=True, windows="tighten"),
        ),  # fmt: skip
        "n = 17-18 with the compiled search, two threads: it alone for 0.4 of the limit, "
        "then CP-SAT with its bound workers",
        Source(
            "models/bnb.md §7",
            "n = 17, 18 benchmark instances, seeds 1-6",
            60.0,
            "proved the same 8 of 12 as the race, ended the other four at 0.8-7.5 % "
            "instead of 3.8-8.9 %",
        ),  # fmt: skip
        quick=True,
        lp_windows=False,
    ),
    Route(
        "compiled-split",
        When(
            n_min=19,
            n_max=20,
            objective="total",
            threads_min=2,
            compiled=True,
            typed=False,
            rounds_max=400,
        ),  # fmt: skip
        (Phase("bnb", 0.65, windows="tighten"), Phase("ladder", windows="tighten")),
        "n = 19-20 with the compiled search, two threads: it for 0.65 of the limit, then "
        "the ladder of proven thresholds for the bound",
        Source(
            "models/bnb.md §7, §8",
            "n = 19, 20 benchmark instances, seeds 1-6",
            60.0,
            "proved 3 of 12 (CP-SAT path: none; share 0.4: 1), the others 4.1-9.3 % "
            "from their bound",
        ),  # fmt: skip
        quick=True,
        lp_windows=False,
    ),
    Route(
        "compiled-one-thread",
        When(
            n_min=17,
            n_max=18,
            objective="total",
            threads_max=1,
            compiled=True,
            typed=False,
            rounds_max=400,
        ),  # fmt: skip
        (Phase("bnb", 0.5), Phase("cpsat", threads="one")),
        "n = 17-18 with the compiled search, one thread: as small-one-thread",
        Source(
            "models/bnb.md §7",
            "n = 17, 18 benchmark instances, seeds 1-6",
            60.0,
            "the small path then proved 8 of 12 where CP-SAT proved 3",
        ),  # fmt: skip
        quick=True,
        lp_windows=False,
    ),
    *_long_rows(),
    Route(
        "events-small",
        When(n_max=12),
        (Phase("events", 0.5, proof_focus=True), Phase("events", bound_focus=True)),
        "n <= 12 off the small path (responses adding up to more than 400 rounds): the event "
        "model after the quick heuristic (CP-SAT finds the schedules itself), with two tree "
        "searches for half the limit (the proof is a search there), then as in 'events'",
        Source(
            "models/orders.md §7",
            "Azure 2023 samples n = 8, 10, 12, seeds 1-5, 60 s, 2 threads",
            60.0,
            "the heuristic's 0.5 s local search cost more than it gave: medians 0.44 -> 0.13 s "
            "(n = 8), 0.98 -> 0.52 s (n = 10); two default_lp workers in place of default_lp "
            "and lb_tree_search, five runs each at n = 12: seed 4 8.1-10.9 s against "
            "11.0-22.8 s, seed 5 2.5-3.4 against 3.6-5.7, seed 2 3.8-5.6 against 4.3-7.8; "
            "their bound is the weaker where the search does not end (n = 16, 30 s: 2,344 "
            "against 2,526), hence the bound-moving pair for the second half",
        ),  # fmt: skip
        quick=True,
        lp_windows=False,
    ),
    Route(
        "events",
        When(n_max=16),
        EVENTS_LAGRANGE_PLAN,
        "n <= 16 off the small path (responses adding up to more than 400 rounds): the "
        "time-indexed LP's prices over the heuristic's windows, then CP-SAT's bound workers on "
        "the event model (its size follows n, not the token lengths) with the windows cut by "
        "reduced cost and the Lagrangian rows; makespan: the plain event model",
        Source(
            "models/orders.md §10",
            "Azure 2023 samples n = 16, seeds 1-5 (benchmarks/real_lengths.py), idle",
            60.0,
            "1 of 5 proved against 0; bounds at 60 s 2,541, 2,021, 3,372, 3,064 on the four "
            "open ones against 2,525, 2,004, 3,261, 3,006 with the plain event model (gaps "
            "1.3-7.4 % against 2.1-9.2 %)",
        ),  # fmt: skip
        lp_windows=False,
    ),
    Route(
        "events-long",
        When(n_min=17, n_max=60, typed=False, rounds_min=EVENTS_ROUNDS),
        (Phase("events", bound_focus=True),),
        f"n = 17-60, mixed, responses adding up to at least {EVENTS_ROUNDS} rounds: the "
        "time-indexed models overrun the limit by gigabytes there; the event model (both "
        "objectives)",
        Source(
            "models/orders.md §6",
            "Azure 2023 samples n = 20 seed 1 (lengths x1, x2, x4, x100), n = 30 seed 1 (x2)",
            20.0,
            "n = 20 x4 (9,652 rounds): the time-indexed path ran 46.8 s and 3.1 GB for the "
            "same bound and a worse schedule; x100: it died allocating 57.9 GiB; n = 30 x2: "
            "88.5 s, 7.7 GB; the event model 20.7 s and 124-149 MB each; up to x2 (4,826) "
            "the time-indexed bound was higher",
        ),  # fmt: skip
        lp_windows=False,
    ),
    Route(
        "events-mid",
        When(n_min=17, n_max=20, typed=False, rounds_min=EVENTS_MID_ROUNDS),
        EVENTS_LAGRANGE_PLAN,
        f"n = 17-20, mixed, responses adding up to {EVENTS_MID_ROUNDS}-{EVENTS_ROUNDS - 1} "
        "rounds (real token lengths): as 'events' (the LP's prices, then the event model with "
        "the Lagrangian rows and the bound workers)",
        Source(
            "models/orders.md §10.3",
            "Azure 2023 samples n = 20, seeds 1-5 (benchmarks/real_lengths.py, Σo 2,413-3,974)",
            60.0,
            "the same schedules as the time-indexed CP-SAT model ('cpsat'), bounds 2,719, "
            "4,939, 3,727, 4,667, 3,590 against 2,729, 4,904, 3,639, 4,535, 3,416, at 144-668 "
            "MB against 590-1,171 MB",
        ),  # fmt: skip
        lp_windows=False,
    ),
    Route(
        "typed-race-wide",
        When(objective="total", threads_min=3, typed=True),
        Race(
            Phase("blocks", threads="one"),
            (Phase("highs-plain", threads="one"), Phase("highs", threads="rest")),
            lead_ends=False,
        ),
        "typed instance, three threads or more: HiGHS on the plain aggregated model and on "
        "the model with the rounded rows race, the block bound beside them",
        Source(
            "models/time-indexed.md §9.8, §10",
            "the seven typed records of issue 33; the typed sampler's instances (§9.8)",
            60.0,
            "the two HiGHS models prove or lift different records (typed-race); the block "
            "bound was below HiGHS's on fcfs and sjf but above it on the sampler's instances, "
            "so it runs where a thread is left for it (three racers on two threads cost "
            "HiGHS a third of its time)",
        ),  # fmt: skip
        lp_values=False,
    ),
    Route(
        "typed-race",
        When(objective="total", threads_min=2, typed=True),
        Race(Phase("highs-plain", threads="one"), (Phase("highs", threads="rest"),)),
        "typed instance (at most 4 distinct jobs), two threads: HiGHS on the plain "
        "aggregated model races HiGHS on the model with the rounded rows",
        Source(
            "models/time-indexed.md §10",
            "the seven typed records of issue 33 (instances/worst/typed/)",
            60.0,
            "HiGHS's branch and bound is serial: per CPU second the plain model lifts fcfs "
            "highest (and proves it, Opt 2476, in 157 s), the rounded rows prove mc-benchmark; "
            "the block bound stayed below HiGHS on fcfs and sjf; the LP windows of the other "
            "jobs shrank 12 of fcfs's 389 windows and none of sjf's in their 6 s, and did not "
            "lift the bound (2354 against 2364-2369 with the fixing alone, 60 CPU s)",
        ),  # fmt: skip
        lp_values=False,
    ),
    Route(
        "typed-serial-blocks",
        When(objective="total", threads_max=1, typed=True, time_limit_min=30.0),
        (Phase("highs", 0.5), Phase("blocks", windows="value", min_seconds=0.5)),
        "typed instance, one thread, at least 30 s: HiGHS for half the limit, then the "
        "block bound over the windows of its best schedule",
        Source(
            "models/time-indexed.md §9.8",
            "typed benchmark instances",
            60.0,
            "at 60 s the split closed 3-6 points of gap; at 10 s no better than HiGHS",
        ),  # fmt: skip
    ),
    Route(
        "typed-serial",
        When(objective="total", threads_max=1, typed=True),
        (Phase("highs"),),
        "typed instance, one thread, under 30 s: HiGHS alone (the block bound needs 15 s)",
        Source(
            "models/time-indexed.md §9.8",
            "typed benchmark instances",
            10.0,
            "at a 10 s limit the split was no better than HiGHS alone",
        ),  # fmt: skip
    ),
    Route(
        "ladder",
        When(
            n_min=21, n_max=30, objective="total", threads_min=2, compiled=True, typed=False
        ),  # fmt: skip
        (Phase("ils", 0.2), Phase("ladder", windows="tighten")),
        "n = 21-30 with the compiled search, two threads: the local search's incumbent, "
        "then the ladder's proven thresholds for the bound",
        Source(
            "models/bnb.md §8, §9",
            "n = 20-30 benchmark instances",
            60.0,
            "the ladder's thresholds were above CP-SAT's bound on every instance; the "
            "local search improved the heuristic's schedule on all six n = 22-30",
        ),  # fmt: skip
    ),
    Route(
        "ils-cpsat",
        When(n_min=31, n_max=60, objective="total", threads_min=2),
        (Phase("ils", 0.2), Phase("cpsat", bound_focus=True, windows="tighten")),
        "n = 31-60, two threads: the local search's incumbent, then CP-SAT with its bound workers",
        Source(
            "models/bnb.md §9",
            "n = 35, 40, 60 benchmark instances",
            60.0,
            "schedules 0.5-6.6 % better than CP-SAT's alone; larger n not measured",
        ),  # fmt: skip
    ),
    Route(
        "cpsat",
        When(),
        (Phase("cpsat", bound_focus=True),),
        "beyond every other row: CP-SAT, with two bound-moving full workers on two threads",
        Source(
            "models/time-indexed.md §8",
            "n >= 18 benchmark instances",
            60.0,
            "nothing is proven there in a minute; its bounds are the highest measured",
        ),  # fmt: skip
    ),
    # solver="race": round 1's auto, kept for comparison
    Route(
        "race",
        When(solver="race", threads_min=2),
        Race(Phase("highs", threads="one"), (Phase("cpsat", threads="rest"),)),
        "solver=race: HiGHS on one thread races CP-SAT on the others",
    ),
    Route(
        "race-one-thread",
        When(solver="race", threads_max=1),
        (Phase("cpsat", threads="one"),),
        "solver=race, one thread: CP-SAT",
        label_auto=False,
    ),
    # solver="bnb": the branch and bound alone, no LP windows; the heuristic as on auto's path
    Route(
        "bnb",
        When(solver="bnb", n_max=16),
        (Phase("bnb"),),
        "solver=bnb",
        quick=True,
        lp_windows=False,
        label_auto=False,
    ),  # fmt: skip
    Route(
        "bnb",
        When(solver="bnb", n_max=20, objective="total", threads_min=2, compiled=True, typed=False),
        (Phase("bnb"),),
        "solver=bnb",
        quick=True,
        lp_windows=False,
        label_auto=False,
    ),  # fmt: skip
    Route(
        "bnb",
        When(solver="bnb", n_max=18, objective="total", compiled=True, typed=False),
        (Phase("bnb"),),
        "solver=bnb",
        quick=True,
        lp_windows=False,
        label_auto=False,
    ),  # fmt: skip
    Route(
        "bnb", When(solver="bnb"), (Phase("bnb"),), "solver=bnb", lp_windows=False, label_auto=False
    ),  # fmt: skip
    # solver="events": no LP windows (the time-indexed LP is what the event model avoids)
    Route(
        "events",
        When(solver="events"),
        (Phase("events"),),
        "solver=events",
        lp_windows=False,
        label_auto=False,
    ),  # fmt: skip
    *(
        Route(name, When(solver=name), (Phase(name),), f"solver={name}", label_auto=False)
        for name in ("highs", "cpsat", "pyomo")
    ),
)


def route_for(case: Case, routes: tuple[Route, ...] = ROUTES) -> Route:
    """The first row of ``routes`` that serves ``case`` (pure)."""
    for route in routes:
        if route.when.holds(case):
            return route
    raise InputError(f"no route serves {case.to_dict()}", source="routes")
