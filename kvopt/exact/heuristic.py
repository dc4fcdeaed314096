"""A small clairvoyant kill-free heuristic: the upper bound and warm start of the exact models.

Serial schedule generation (the list-scheduling scheme of project
scheduling): jobs are taken in a priority order and each starts at the
earliest round ``t ≥ a_i`` at which its staircase ``s_i + u + 1``
(``u = 0 … o_i−1``) fits under ``M`` on top of the jobs already placed
(holes left earlier are filled).  Several orders are tried (response, area,
peak, arrival + response, for makespan also the reverses), then a short
seeded local search swaps and reinserts jobs in the best order.  The
result is only an upper bound; it passes :func:`kvopt.schedule.checked`.
"""

from __future__ import annotations

import random
import time
from operator import add as _add

import numpy as np

from ..instance import Instance
from ..schedule import Schedule, checked
from .common import first_fit


def _placer(inst: Instance):
    """``place`` for this instance, as a function of a list order returning the starts (a
    list); the profile is kept as ``gm[τ] = used(τ) + τ`` so that a job fits at ``t`` iff
    ``max(gm[t : t + o]) ≤ M − s − 1 + t`` (one C-level slice and max per test)."""
    n, M = inst.n, inst.memory
    prompts, responses, arrivals = (
        x.tolist() for x in (inst.prompts, inst.responses, inst.arrivals)
    )
    H = max(arrivals) + sum(responses) + 1 if n else 1
    base = list(range(H + max(responses, default=1) + 1))
    stairs: dict[tuple[int, int], list[int]] = {}
    for s, o in zip(prompts, responses):
        if (s, o) not in stairs:
            stairs[s, o] = list(range(s + 1, s + 1 + o))

    def run(order: list[int]) -> list[int]:
        gm = base.copy()
        starts = [0] * n
        last: dict[tuple[int, int, int], int] = {}
        for i in order:
            s, o, a = prompts[i], responses[i], arrivals[i]
            key = (s, o, a)
            t = last.get(key, a)
            t = first_fit(gm, t, o, M - s - 1, H)  # found: after every placed job all is free
            gm[t : t + o] = map(_add, gm[t : t + o], stairs[s, o])
            starts[i] = t
            last[key] = t
        return starts

    return run


def place(inst: Instance, order) -> np.ndarray:
    """Starts of the serial schedule for ``order`` (earliest feasible start, holes filled).

    A failed start jumps past the fullest round of its window, or to the first start
    at which that round could fit; a job identical to one placed before starts its
    search at that job's start: placing jobs only lowers the free memory, so an
    identical job cannot fit earlier.
    """
    order = [int(i) for i in order]
    return np.asarray(_placer(inst)(order), dtype=np.int64)


def _orders(inst: Instance, objective: str) -> list[np.ndarray]:
    s, o, a = inst.prompts, inst.responses, inst.arrivals
    idx = np.arange(inst.n)
    keys = [o, inst.areas, inst.peaks, a + o, a, s]
    if objective == "makespan":
        keys += [-inst.areas, -o, -inst.peaks]
    return [np.lexsort((idx, k)) for k in keys]


def heuristic_starts(
    inst: Instance,
    objective: str = "total",
    *,
    seed: int = 0,
    seconds: float = 0.5,
    moves: int | None = None,
) -> np.ndarray:
    """Best serial schedule found over fixed orders plus ``seconds`` of seeded local search.

    With ``moves`` the local search makes exactly that many moves and ignores the
    clock, so the result depends only on the instance and the seed.
    """
    if inst.n == 0:
        return np.zeros(0, dtype=np.int64)
    run = _placer(inst)
    responses = inst.responses.tolist()
    total = objective == "total"

    def value(starts: list[int]) -> int:
        ends = list(map(_add, starts, responses))
        return sum(ends) if total else max(ends)

    best_val, best_order, best_starts = None, None, None
    for order in _orders(inst, objective):
        order = order.tolist()
        st = run(order)
        v = value(st)
        if best_val is None or v < best_val:
            best_val, best_order, best_starts = v, order, st
    rng = random.Random(seed)
    n = inst.n
    deadline = time.monotonic() + seconds
    cap = 60 * n * n if moves is None else int(moves)
    tries = 0
    while n > 1 and tries < cap and (moves is not None or time.monotonic() < deadline):
        tries += 1
        cand = best_order.copy()
        i, j = rng.sample(range(n), 2)
        if rng.random() < 0.5:
            cand[i], cand[j] = cand[j], cand[i]
        else:
            cand.insert(j, cand.pop(i))
        st = run(cand)
        v = value(st)
        if v <= best_val:
            best_val, best_order, best_starts = v, cand, st
    return np.asarray(best_starts, dtype=np.int64)


def heuristic_schedule(
    inst: Instance, objective: str = "total", *, seed: int = 0, seconds: float = 0.5
) -> Schedule:
    """The heuristic's kill-free schedule, checked."""
    st = heuristic_starts(inst, objective, seed=seed, seconds=seconds)
    return checked(inst, Schedule.from_starts(inst, st, producer="exact-heuristic"))
