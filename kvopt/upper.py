"""Cheap clairvoyant kill-free schedules for the search's upper bound ``UB`` (SPEC §8).

:func:`place` is the serial schedule of :func:`kvopt.exact.heuristic.place`
(each job in turn at its earliest feasible start, holes filled; re-exported).

For typed instances (SPEC §9; many copies of a few job types) the serial
orders that keep the jobs of a type consecutive are the natural candidates:
:func:`type_orders` orders the types by shortest response, smallest area,
smallest peak, earliest arrival + response, earliest arrival and smallest
prompt, and :func:`improve_type_order` swaps adjacent types while that lowers
the objective (a deterministic first-improvement local search over the order
of the types; the best order is never worse than the one it starts from).
"""

from __future__ import annotations

import numpy as np

from .exact.heuristic import place
from .instance import Instance


def type_runs(inst: Instance) -> list[np.ndarray]:
    """The job indices of each type (maximal runs of consecutive identical jobs)."""
    n = inst.n
    if n == 0:
        return []
    key = np.stack([inst.prompts, inst.responses, inst.arrivals], axis=1)
    cut = np.flatnonzero(np.any(key[1:] != key[:-1], axis=1)) + 1
    return np.split(np.arange(n, dtype=np.int64), cut)


def type_orders(inst: Instance, runs: list[np.ndarray]) -> list[list[int]]:
    """Orders of the types (indices into ``runs``) by the keys of the module docstring."""
    rep = np.array([r[0] for r in runs], dtype=np.int64)
    s, o, a = inst.prompts[rep], inst.responses[rep], inst.arrivals[rep]
    idx = np.arange(len(runs))
    keys = [o, inst.areas[rep], inst.peaks[rep], a + o, a, s]
    out: list[list[int]] = []
    for k in keys:
        order = np.lexsort((idx, k)).tolist()
        if order not in out:
            out.append(order)
    return out


def jobs_of(runs: list[np.ndarray], types: list[int]) -> np.ndarray:
    return np.concatenate([runs[t] for t in types])


def improve_type_order(inst: Instance, runs: list[np.ndarray], types: list[int], value_of,
                       start_value: int, max_rounds: int = 8) -> tuple[list[int], np.ndarray | None, int]:  # fmt: skip
    """Swap adjacent types while the objective improves (first improvement, fixed scan order).

    Returns the best order, its starts (``None`` when nothing improved) and its
    value; ``value_of(starts)`` is the objective.  At most ``max_rounds``
    passes over the adjacent pairs.
    """
    best, best_v, best_st = list(types), start_value, None
    for _ in range(max_rounds):
        improved = False
        for p in range(len(best) - 1):
            cand = best[:p] + [best[p + 1], best[p]] + best[p + 2 :]
            st = place(inst, jobs_of(runs, cand))
            v = value_of(st)
            if v < best_v:
                best, best_v, best_st, improved = cand, v, st, True
        if not improved:
            break
    return best, best_st, best_v


__all__ = ["improve_type_order", "jobs_of", "place", "type_orders", "type_runs"]
