"""The rows of ``auto``'s route table that use the completion cliques (issue 52,
``models/cliques.md``): Jaillet et al.'s setting, responses as long as the memory.
:data:`kvopt.exact.portfolio.routes.ROUTES` takes them in place, after ``no-model``; their
constants and the measurements that chose them live here, beside the rows."""

from __future__ import annotations

from dataclasses import replace

from .rows import Phase, Route, Source, When

#: the route 'cliques': n in this range (at n = 13-14 it lost a proof and was slower on two of
#: six draws, faster on three; at n = 15-16 better on all six: models/cliques.md §5; at n = 25
#: and 30 gaps of 11.9-18.5 % against 26.4-27.6 % for the routes before, load 5-6: §10), two
#: threads, mixed, and at least this share of the
#: jobs with a response above M/2 (Jaillet et al.'s setting has about 45 %; the benchmark's
#: mixed instances and the Azure samples none: models/cliques.md §5)
CLIQUES_N = (15, 30)
CLIQUES_LONG_SHARE = 0.25
#: … but the routes with the branch and bound ('cliques', 'cliques-ils') from this share on:
#: priced by the LP with the rows (models/cliques.md §14) it proves draws of the setting with
#: fewer long jobs too (n = 17 with 4 of 17 above M/2: Opt 550 in 5.2 s on one thread, where
#: the route before, 'compiled-mid', ended at an 11.3 % gap); the benchmark's mixed instances,
#: its throughput set, the Azure samples and the setting with o <= 10 have none
CLIQUES_BNB_LONG_SHARE = 0.1
#: from this n on (route 'cliques-ils') the local search runs first, for 0.1 of the limit, and
#: the branch and bound gets 0.7 (priced by the LP with the rows it is the prover: at n = 20,
#: seeds 200-204, 0.1 / 0.7 proved three draws, in 8.7, 41.0 and 14.2 s, where 0.2 / 0.4 proved
#: two, in 14.7 and 18.9 s; models/cliques.md §14); below, the branch and bound keeps half
#: the limit, which proves draws at n = 15-19 (five of five at 17-19, in 2.1-16.2 s; the local
#: search first made every proof 4-8 s slower, §15).  In both rows what is left goes to the
#: branch and bound's ladder ('bnb-cliques-ladder'), not to the event model: the event model
#: added nothing to the LP's bound at n = 20-30, and at 16-19 the ladder's bounds left gaps of
#: 3.9-6.2 % where it left 7.0-10.6 % (§15)
CLIQUES_ILS_N = 20
#: … and responses adding up to at most this many rounds (the branch and bound is for small
#: numbers; the setting's n = 20 has up to about 500; n = 30 a median of 570 and at most 841
#: in 200 draws)
CLIQUES_ROUNDS = 1000
#: … and a time limit of at least this many seconds (measured at 60 s; with 8 s at load 10
#: the LP with the rows was not ready within the first phase, n = 14, and the bound stayed
#: below the LP's)
CLIQUES_TIME_LIMIT = 30.0
#: (and all jobs at round 0: with Poisson arrivals, n = 13-14, 30 s, the route proved none of
#: six draws that the routes before proved three of, in 8.4-20.1 s; models/cliques.md §7)
_CLIQUES = Source(
    "models/cliques.md §5, §8, §10, §15",
    "the summaries' generator of Jaillet et al.'s setting, model 1, n = 13-20 (14 draws), "
    "n = 25 and 30 (3 draws each)",
    60.0,
    "n = 15-16: better on all five draws measured (n16 s1 proved in 25.4 s where the routes "
    "before proved none; gaps left 5.5-11.4 % against 17.7-27.7 %); n = 20: gaps 7.3-11.5 % "
    "against 18.9-26.4 %, schedules 1.6-6.1 % better; n = 13-14 mixed (load 6-9, two threads); "
    "n = 25: gaps 4.8-11.6 % against 19.7-27.0 %, n = 30: 11.9-18.5 % against 26.4-27.6 %, "
    "schedules equal or 0.2-1.6 % worse (load 3-6); round 8, the ladder last in place of the "
    "event model (n = 16-19, four open draws of seeds 1000-1029): gaps 3.9-6.2 % against "
    "7.0-10.6 %, schedules the same to 1.3 % worse; four draws proved as fast (3.8-15.0 s "
    "against 4.1-16.4 s)",
)

#: what the rows of the completion cliques ask besides n, the rounds and the arrivals:
#: total completion, two threads, mixed jobs, the long share and a limit of at least 30 s
_LONG_RESPONSES = When(
    objective="total",
    threads_min=2,
    typed=False,
    long_share_min=CLIQUES_LONG_SHARE,
    time_limit_min=CLIQUES_TIME_LIMIT,
)

#: the route 'cliques-arrivals' (Jaillet et al.'s model 2: Poisson arrivals, more jobs than
#: 'cliques-arrivals-bnb' takes): n in this range, two threads, mixed, the same long share,
#: responses adding up to at most ``CLIQUES_ARRIVALS_ROUNDS`` and a limit of at least
#: ``CLIQUES_TIME_LIMIT``; the local search for the schedule, then the event model with the
#: clique prices for the bound (at 43-58 jobs the branch and bound's plan left larger gaps on
#: three draws of four, 9.1-19.7 % against 7.5-16.9 %: the LP with the rows is not converged
#: there, and the event model's bound is the higher; models/cliques.md §15)
CLIQUES_ARRIVALS_N = (41, 60)
CLIQUES_ARRIVALS_ROUNDS = 1500
_CLIQUES_ARRIVALS = Source(
    "models/cliques.md §11, §15",
    "the summaries' generator of Jaillet et al.'s setting, model 2 (Poisson arrivals), "
    "n = 43-59 (seven draws)",
    60.0,
    "n = 45-59: gaps 14.8-29.7 % against 27.8-33.8 % (ils-cpsat); n = 43-58 (seeds 720-723 of "
    "--n-min 41 --n-max 60): 7.5-16.9 % against 9.1-19.7 % for the branch and bound's plan on "
    "three draws, 9.1 against 8.2 % on the fourth ('cliques-arrivals-bnb' serves up to 40 jobs)",
)

#: the route 'cliques-arrivals-bnb' (model 2 up to 40 jobs): n in this range, the other
#: conditions of 'cliques-arrivals' (which serves the n above it); the local search, the
#: branch and bound priced by the LP with the rows, then its ladder (models/cliques.md §14,
#: §15: at 15-19 jobs six of six draws proved in 7.6-17.9 s, where the routes before proved
#: one; at 22-26 gaps of 2.2-4.5 % against 6.7-9.1 %; at 27-39 one draw proved in 11.3 s and
#: gaps of 1.0-9.2 % against 4.7-10.8 %; at 12-14 small-race proves as much, faster)
CLIQUES_ARRIVALS_BNB_N = (15, CLIQUES_ARRIVALS_N[0] - 1)

#: the route 'cliques-events' (Jaillet et al.'s model 1 beyond the branch and bound's reach:
#: every job at round 0): n in this range, the other conditions of 'cliques-arrivals', the same
#: plan; at n = 32-53 (six draws) gaps of 6.3-23.5 % against 29.9-36.1 % for 'ils-cpsat'
CLIQUES_EVENTS_N = (CLIQUES_N[1] + 1, 60)
_CLIQUES_EVENTS = Source(
    "models/cliques.md §12",
    "the summaries' generator of Jaillet et al.'s setting, model 1, n = 31-60",
    60.0,
    "n = 32-53 (six draws, load 1.4-2.7): gaps 6.3-23.5 % against 29.9-36.1 % for "
    "'ils-cpsat' (n = 32, 33, 40: 8.6, 6.3, 12.5 % against 32.8, 36.1, 29.9 %), the bound "
    "14-47 % higher, schedules within 0.9 % either way",
)


def _row(
    name: str,
    n: tuple[int, int],
    rounds: int,
    arrivals: bool,
    plan,
    text,
    source,
    long_share: float = CLIQUES_LONG_SHARE,
) -> Route:
    """A row of the completion cliques: ``_LONG_RESPONSES`` with ``n``, the rounds, the
    arrivals and the long share; the LP over the windows of the best value, not the LP's own
    (``lp_windows``)."""
    when = replace(
        _LONG_RESPONSES,
        n_min=n[0],
        n_max=n[1],
        rounds_max=rounds,
        arrivals=arrivals,
        long_share_min=long_share,
    )
    return Route(name, when, plan, text, source, lp_windows=False)


#: the event model with the clique prices, the bound workers, the windows of the best value
_EVENTS = Phase("events-cliques", bound_focus=True, windows="value")
#: the local search's schedule first, then ``_EVENTS`` (no branch and bound)
_ILS_EVENTS = (Phase("ils", 0.2), _EVENTS)


def _bnb_ladder(bnb: float, ils: float = 0.0) -> tuple[Phase, ...]:
    """The local search for ``ils`` of the limit (none at 0), the branch and bound priced by
    the rows for ``bnb``, then its ladder of proved thresholds for what is left."""
    search = (Phase("ils", ils),) if ils else ()
    return (
        *search,
        Phase("bnb-cliques", bnb, windows="value"),
        Phase("bnb-cliques-ladder", windows="value"),
    )


#: the rows of the completion cliques, in ``auto``'s order (after ``no-model``)
CLIQUE_ROUTES: tuple[Route, ...] = (
    _row(
        "cliques",
        (CLIQUES_N[0], CLIQUES_ILS_N - 1),
        CLIQUES_ROUNDS,
        False,
        _bnb_ladder(0.5),
        "responses as long as the memory (Jaillet et al.'s setting): the time-indexed LP with "
        "the completion cliques (models/cliques.md), its reduced-cost fixing, the branch and "
        "bound over the cut windows for half the limit, then, if it did not finish, its ladder "
        "of proved thresholds (no event model since round 8)",
        _CLIQUES,
        CLIQUES_BNB_LONG_SHARE,
    ),
    _row(
        "cliques-ils",
        (CLIQUES_ILS_N, CLIQUES_N[1]),
        CLIQUES_ROUNDS,
        False,
        _bnb_ladder(0.7, ils=0.1),
        "as 'cliques', with the local search's schedule first (0.1 of the limit), the "
        "branch and bound over the cut windows for 0.7, then, if it did not finish, its "
        "ladder of proved thresholds from the root bound for the rest (no event model)",
        Source(
            "models/cliques.md §11, §14",
            "the summaries' generator of Jaillet et al.'s setting, model 1, n = 20 (seeds "
            "200-204), 25 (450-452), 30 (400-402)",
            60.0,
            "n = 20: three of five draws proved (8.7-41.0 s) where 0.2 / 0.4 proved two and "
            "the route before the clique duals none (gaps 7.3-11.5 %); the ladder last, in "
            "place of the event model: bounds 0.4-4.7 % higher on the five draws of n = 20-30 "
            "neither plan proved, schedules the same but one 0.7 % worse",
        ),
        CLIQUES_BNB_LONG_SHARE,
    ),
    _row(
        "cliques-arrivals-bnb",
        CLIQUES_ARRIVALS_BNB_N,
        CLIQUES_ARRIVALS_ROUNDS,
        True,
        _bnb_ladder(0.6, ils=0.1),
        "responses as long as the memory, with arrivals, up to 40 jobs: the local search's "
        "schedule (0.1 of the limit), the branch and bound over the windows cut by the prices "
        "of the LP with the completion cliques, priced by them (0.6), then its ladder of "
        "proved thresholds",
        Source(
            "models/cliques.md §14, §15",
            "the summaries' generator of Jaillet et al.'s setting, model 2, n = 15-19 (seeds "
            "730-735 of --n-min 15 --n-max 20), 22-26 (500-503 of --n-min 20 --n-max 26), "
            "27-39 (700-705, 707-709, 711 of --n-min 27 --n-max 40), 12-14 (740-745)",
            60.0,
            "n = 15-19: six of six proved in 7.6-17.9 s, against one (the routes before: "
            "compiled-mid, compiled-split, small-race; gaps 5.8-10.8 %); n = 22-26: gaps "
            "2.2-4.5 % against 6.7-9.1 % ('cliques-arrivals'); n = 27-39: one proved (11.3 s), "
            "gaps 1.0-8.8 % against 4.7-10.8 % on eight more, 9.2 against 9.1 % on one; "
            "n = 12-14: all proved either way, small-race faster (0.6-7.6 s against 7.0-17.3 s), "
            "so the row starts at 15",
        ),
    ),
    _row(
        "cliques-arrivals",
        CLIQUES_ARRIVALS_N,
        CLIQUES_ARRIVALS_ROUNDS,
        True,
        _ILS_EVENTS,
        "responses as long as the memory, with arrivals (Jaillet et al.'s model 2): the local "
        "search's schedule, then the event model with the prices of the time-indexed LP with "
        "the completion cliques (models/cliques.md) and CP-SAT's bound workers",
        _CLIQUES_ARRIVALS,
    ),
    _row(
        "cliques-events",
        CLIQUES_EVENTS_N,
        CLIQUES_ARRIVALS_ROUNDS,
        False,
        _ILS_EVENTS,
        "responses as long as the memory, more jobs than the branch and bound's rows take, all "
        "at round 0 (Jaillet et al.'s model 1 at n = 40-60): the plan of 'cliques-arrivals'",
        _CLIQUES_EVENTS,
    ),
)
