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

import time

import numpy as np

from ..instance import Instance
from ..schedule import Schedule, checked
from .common import value_of

_CHUNK = 64


def place(inst: Instance, order) -> np.ndarray:
    """Starts of the serial schedule for ``order`` (earliest feasible start, holes filled).

    The earliest start is searched in chunks of rounds (doubling) rather than
    over the whole horizon, and a job identical to one placed before starts
    its search at that job's start: placing jobs only lowers the free memory,
    so an identical job cannot fit earlier.
    """
    n, M = inst.n, inst.memory
    starts = np.zeros(n, dtype=np.int64)
    if n == 0:
        return starts
    H = int(inst.arrivals.max() + inst.responses.sum()) + 1
    omax = int(inst.responses.max(initial=1))
    slack = np.full(H + omax + 1, M, dtype=np.int64)
    prompts, responses, arrivals = (
        x.tolist() for x in (inst.prompts, inst.responses, inst.arrivals)
    )
    last: dict[tuple[int, int, int], int] = {}
    needs: dict[tuple[int, int], np.ndarray] = {}
    size = len(slack)
    for i in np.asarray(order, dtype=np.int64).tolist():
        s, o, a = prompts[i], responses[i], arrivals[i]
        key = (s, o, a)
        need = needs.get(key[:2])
        if need is None:
            need = needs[key[:2]] = s + 1 + np.arange(o, dtype=np.int64)
        t = max(a, last.get(key, a))
        chunk = _CHUNK
        while not (slack[t : t + o] >= need).all():  # else t itself is the earliest start
            rows = min(chunk, size - t - o + 1)
            if rows < 1:  # cannot happen: slack is M beyond every placed job
                raise AssertionError("serial placement ran past the horizon")
            # rows × o view: row r is slack[t + r : t + r + o] (a C-level strided view)
            win = np.ndarray((rows, o), dtype=slack.dtype, buffer=slack,
                             offset=t * slack.itemsize, strides=(slack.itemsize,) * 2)  # fmt: skip
            ok = np.flatnonzero((win >= need).all(axis=1))
            if len(ok):
                t += int(ok[0])
                break
            t += rows
            chunk *= 2
        slack[t : t + o] -= need
        starts[i] = t
        last[key] = t
    return starts


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
    best_val, best_order, best_starts = None, None, None
    for order in _orders(inst, objective):
        st = place(inst, order)
        v = value_of(inst, st, objective)
        if best_val is None or v < best_val:
            best_val, best_order, best_starts = v, order, st
    rng = np.random.default_rng(seed)
    n = inst.n
    deadline = time.monotonic() + seconds
    cap = 60 * n * n if moves is None else int(moves)
    tries = 0
    while n > 1 and tries < cap and (moves is not None or time.monotonic() < deadline):
        tries += 1
        cand = best_order.copy()
        i, j = rng.choice(n, size=2, replace=False)
        if rng.random() < 0.5:
            cand[i], cand[j] = cand[j], cand[i]
        else:
            job = cand[i]
            cand = np.insert(np.delete(cand, i), j, job)
        st = place(inst, cand)
        v = value_of(inst, st, objective)
        if v <= best_val:
            best_val, best_order, best_starts = v, cand, st
    return best_starts


def heuristic_schedule(
    inst: Instance, objective: str = "total", *, seed: int = 0, seconds: float = 0.5
) -> Schedule:
    """The heuristic's kill-free schedule, checked."""
    st = heuristic_starts(inst, objective, seed=seed, seconds=seconds)
    return checked(inst, Schedule.from_starts(inst, st, producer="exact-heuristic"))
