"""The rank bound: which jobs cannot share memory, seen one completion rank at a time
(issue 46, ``models/orders.md`` §9).

Every round of a schedule holds one memory *item* per running job (its memory in that
round, SPEC §1), and the items of one round add up to at most ``M``: a round is a bin of
size ``M``.  Job ``i`` contributes the items ``s_i + 1, …, s_i + o_i`` (one per round of
its attempt).  A *dual feasible function* (DFF) ``f`` maps sizes to weights so that any
items fitting in one bin weigh at most ``f(M)`` together; then for the ``k``-th smallest
completion time ``c_(k)`` of any schedule, the ``k`` jobs completed by ``c_(k)`` put all
their items in rounds ``0 … c_(k) − 1``, so

    ``c_(k) ≥ ⌈(sum of the k smallest F_i) / f(M)⌉``,   ``F_i = Σ_u f(s_i + u + 1)``,

and ``Opt = Σ_k c_(k) ≥ Σ_k max_f ⌈…⌉`` — the maximum is taken *per rank*, over the DFFs
below and the processing bound ``c_(k) ≥ k-th smallest (a_i + o_i)``.  With ``f`` the
identity this is the area bound of SPEC §2 with a ceiling per rank; the other DFFs see
which items cannot share a round:

* ``threshold q`` (``q ≥ 1``): weight 1 for an item ``≥ L_q = ⌊M/(q+1)⌋ + 1`` (at most
  ``q`` such items fit), ``f(M) = q``.  ``q = 1``: the jobs' rounds above ``M/2`` form one
  machine; ``q``: ``q`` machines.
* ``fs k`` (Fekete and Schepers, *New classes of fast lower bounds for bin packing
  problems*, Math. Prog. 2001): ``u(x) = x`` if ``(k+1)x`` is an integer, else
  ``⌊(k+1)x⌋ / k``, with ``x = h / M``; kept in integers scaled by ``k(k+1)``.
* ``mt ε`` (Martello and Toth's ``L2`` as a DFF, ``1 ≤ ε ≤ M/2``): ``M`` for an item
  ``> M − ε``, ``h`` for ``ε ≤ h ≤ M − ε``, 0 below ``ε``: a bin with an item above
  ``M − ε`` has only items below ``ε`` beside it.

Pairs of jobs that can never run in a common round (``models/orders.md`` §9, Lemma R3:
if they did, both would run in the last round of the one ending first, where it holds its
peak ``P`` and the other at least ``s + 1``; so ``P_i + s_j + 1 > M`` and
``P_j + s_i + 1 > M`` rule it out) add a ``clique`` family: a set ``Q`` of pairwise such
jobs is one machine, so its ``r``-th completion is at least the sum of the ``r`` smallest
responses in ``Q`` (SPT), and the global ``k``-th completion, for ``k > n − |Q|``, comes
after at least ``k − n + |Q|`` completions of ``Q``.

*Eligibility.*  The ``k`` jobs done by ``c_(k)`` all have ``a_i + o_i ≤ c_(k)``.  So with
the jobs sorted by ``e_i = a_i + o_i``, ``c_(k) ≥ min_{j ≥ k} max(e_(j), b_f(k, j))`` for
each family ``f``, where ``b_f(k, j)`` is the family's bound with the ``k`` jobs taken
among the first ``j`` (if ``c_(k)`` has exactly the first ``j`` jobs eligible, it is at
least ``e_(j)`` and at least ``b_f(k, j)``).  This is what makes the area family beat the
plain area bound: the ``k`` smallest areas need not belong to short jobs.

*Windows* (``windows > 0``, off by default: measured to add nothing once eligibility is
used, ``models/orders.md`` §9.1): from a round ``x`` on, a job started at ``a_i`` or later
holds at least its items from ``u = x − a_i`` on, so ``c_(k) ≥ x + ⌈…⌉`` over those items
whenever their weight is positive (then some job of the ``k`` runs at ``x``).

Exact integer arithmetic throughout (Python integers where int64 could overflow); the
cost is ``O(F n² log n)`` for ``F`` ≈ 100 families up to ``n = JOINT_MAX_N`` and
``O(F n log n)`` above (eligibility then only as ``c_(k) ≥ e_(k)``), independent of the
token lengths.  ``tests/test_conflict_bound.py`` checks every rank against every feasible
schedule of small instances and the value against Opt.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...instance import Instance

#: threshold families ``q = 1 … THRESHOLDS`` (capacity ``q`` items above ``M/(q+1)``)
THRESHOLDS = 40
#: Fekete–Schepers families ``k = 1 … FS_MAX``
FS_MAX = 12
#: Martello–Toth ``ε`` values on a grid of ``M/2`` (besides the jobs' own breakpoints)
MT_GRID = 32


@dataclass(frozen=True)
class RankBound:
    """The rank bound of one instance: ``value`` (a lower bound on Opt, total completion),
    ``ranks`` (the lower bound on each ``c_(k)``), ``makespan`` (a lower bound on the
    optimal makespan, the last rank) and which family gave each rank."""

    value: int
    ranks: tuple[int, ...]
    makespan: int
    families: tuple[str, ...]


def _counts_at_least(s: np.ndarray, o: np.ndarray, level: np.ndarray) -> np.ndarray:
    """``[i, j]`` = how many of job ``i``'s items ``s_i + 1 … s_i + o_i`` are ``≥ level_j``."""
    lo = np.maximum(s[:, None] + 1, level[None, :])
    return np.clip(s[:, None] + o[:, None] - lo + 1, 0, None)


def _sum_between(s: np.ndarray, o: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``[i, j]`` = the sum of job ``i``'s items ``h`` with ``a_j ≤ h ≤ b_j``."""
    lo = np.maximum(s[:, None] + 1, a[None, :])
    hi = np.minimum(s[:, None] + o[:, None], b[None, :])
    cnt = np.clip(hi - lo + 1, 0, None)
    return np.where(cnt > 0, (lo + hi) * cnt // 2, 0)


def family_weights(
    m: int,
    s: np.ndarray,
    o: np.ndarray,
    thresholds: int = THRESHOLDS,
    fs_max: int = FS_MAX,
    mt_grid: int = MT_GRID,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Names, per-job weights ``F[f, i]`` and capacities ``f(M)`` of the DFF families of the
    module doc, for jobs whose items are ``s_i + 1 … s_i + o_i`` (``o_i ≥ 0``)."""
    names: list[str] = []
    rows: list[np.ndarray] = []
    caps: list[int] = []
    # identity: the area
    names.append("area")
    rows.append(_sum_between(s, o, np.array([1]), np.array([m]))[:, 0])
    caps.append(m)
    # thresholds
    q = np.arange(1, min(thresholds, m) + 1, dtype=np.int64)
    levels = m // (q + 1) + 1
    cnt = _counts_at_least(s, o, levels)
    for j, qq in enumerate(q):
        names.append(f"threshold{int(qq)}")
        rows.append(cnt[:, j])
        caps.append(int(qq))
    # Fekete–Schepers, scaled by k(k+1): (k+1)·⌊(k+1)h/M⌋ off the multiples of M/(k+1),
    # k·j at h = jM/(k+1)
    for k in range(1, fs_max + 1):
        js = np.arange(1, k + 2, dtype=np.int64)
        steps = -(-(js * m) // (k + 1))  # ⌈jM/(k+1)⌉: the smallest h with (k+1)h ≥ jM
        w = (k + 1) * _counts_at_least(s, o, steps).sum(axis=1)
        exact = js[(js * m) % (k + 1) == 0]  # j = k + 1 (h = M) among them
        if len(exact):
            h = exact * m // (k + 1)
            inside = (s[:, None] + 1 <= h[None, :]) & (h[None, :] <= s[:, None] + o[:, None])
            w = w - (inside * exact[None, :]).sum(axis=1)  # (k+1)j → kj
        names.append(f"fs{k}")
        rows.append(w)
        caps.append(k * (k + 1))
    # Martello–Toth ε: a grid, and the breakpoints M − P_i + 1 and M − s_i (a job's top
    # items just above M − ε)
    eps = set(np.linspace(1, m // 2, mt_grid, dtype=np.int64).tolist()) if m >= 2 else set()
    for v in np.concatenate([m - (s + o) + 1, m - s]).tolist():
        if 1 <= v <= m // 2:
            eps.add(int(v))
    if eps:
        e = np.array(sorted(eps), dtype=np.int64)
        big = _counts_at_least(s, o, m - e + 1)
        mid = _sum_between(s, o, e, m - e)
        mt = (big * m + mid).T
        names += [f"mt{int(v)}" for v in e]
        rows += list(mt)
        caps += [m] * len(e)
    return names, np.vstack(rows), np.array(caps, dtype=np.int64)


def never_together(inst: Instance) -> np.ndarray:
    """``[i, j]``: jobs ``i ≠ j`` can never run in a common round (module doc, Lemma 1 of
    ``models/orders.md``): whichever ends first, its peak and the other's first item
    exceed ``M``."""
    s = inst.prompts.astype(np.int64)
    p = s + inst.responses.astype(np.int64)
    over = p[:, None] + s[None, :] + 1 > inst.memory  # i ends first and j runs in its last round
    both = over & over.T
    np.fill_diagonal(both, False)
    return both


def _cliques(conflict: np.ndarray, o: np.ndarray) -> list[np.ndarray]:
    """Greedy maximal cliques of ``conflict``, one started from each job (longest first)."""
    n = len(o)
    seen: set[tuple[int, ...]] = set()
    out: list[np.ndarray] = []
    for start in np.argsort(-o, kind="stable"):
        members = [int(start)]
        cand = conflict[start].copy()
        while cand.any():
            idx = np.flatnonzero(cand)
            nxt = int(idx[np.argmax(o[idx])])
            members.append(nxt)
            cand &= conflict[nxt]
        key = tuple(sorted(members))
        if len(key) >= 2 and key not in seen:
            seen.add(key)
            out.append(np.array(key, dtype=np.int64))
        if len(out) >= n:
            break
    return out


#: window starts ``x`` tried (a grid of ``[0, max(a + o))``); 0: none (module doc)
WINDOWS = 0
#: the clique family is built up to this ``n`` (its conflict matrix has ``n²`` cells)
CLIQUE_MAX_N = 2000
#: the families tried in the windows ``x > 0`` (fewer: ``WINDOWS`` times the cost)
WINDOW_FAMILIES = {"thresholds": 8, "fs_max": 4, "mt_grid": 8}


#: up to this ``n`` each rank takes its jobs among those that can be done by then (an
#: ``O(F n² log n)`` pass); above it, among all jobs
JOINT_MAX_N = 64


def _weights_and_windows(
    m: int, s: np.ndarray, o: np.ndarray, a: np.ndarray, windows: int
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Every (family, window) as a row: names, weights ``[r, i]``, capacities and window
    starts ``x`` (module doc, *windows*: from round ``x`` on a job started at ``a_i`` or later
    holds at least its items from ``u = x − a_i`` on)."""
    names, w, caps = family_weights(m, s, o)
    xs_all = [np.zeros(len(names), dtype=np.int64)]
    ws, cs = [w], [caps]
    top = int((a + o).max())
    xs = sorted(set(np.linspace(0, top - 1, windows, dtype=np.int64).tolist()) - {0})
    for x in xs:
        d = np.clip(x - a, 0, o)
        nm, wx, cx = family_weights(m, s + d, o - d, **WINDOW_FAMILIES)
        names += [f"{v}@{x}" for v in nm]
        ws.append(wx)
        cs.append(cx)
        xs_all.append(np.full(len(nm), x, dtype=np.int64))
    return names, np.vstack(ws), np.concatenate(cs), np.concatenate(xs_all)


def rank_bound(inst: Instance, windows: int = WINDOWS) -> RankBound:
    """The rank bound of the module doc (total completion and makespan)."""
    n = inst.n
    if n == 0:
        return RankBound(0, (), 0, ())
    m = int(inst.memory)
    # the largest sum formed is below 2 n · max(o) · M (the ε family's weights); keep int64
    # while that fits, else Python integers
    dt = np.int64 if 2 * n * int(inst.responses.max()) * m < 2**62 else object
    s = inst.prompts.astype(dt)
    o = inst.responses.astype(dt)
    a = inst.arrivals.astype(dt)
    names, w, caps, xs = _weights_and_windows(m, s, o, a, windows)
    e = a + o
    order = np.argsort(e, kind="stable")
    e, w = e[order], w[:, order]
    # rank k: c_(k) ≥ min over j ≥ k of max(e_(j), the family's bound over the first j jobs
    # by e) — the k jobs done by c_(k) all have a + o ≤ c_(k) (module doc, *eligibility*)
    if n <= JOINT_MAX_N and dt is not object:
        best = np.full((len(names), n), np.iinfo(np.int64).max, dtype=np.int64)
        for j in range(1, n + 1):
            cum = np.cumsum(np.sort(w[:, :j], axis=1), axis=1)
            v = np.where(cum > 0, xs[:, None] + (-(-cum // caps[:, None])), 0)
            best[:, :j] = np.minimum(best[:, :j], np.maximum(v, e[j - 1]))
    else:  # the k smallest weights among all jobs, and c_(k) ≥ e_(k)
        cum = np.cumsum(np.sort(w, axis=1), axis=1)
        best = np.where(cum > 0, xs[:, None] + (-(-cum // caps[:, None])), 0)
    cand = [best, e[None, :]]
    labels = [*names, "processing"]
    for k_set in _cliques(never_together(inst), o) if n <= CLIQUE_MAX_N else ():
        spt = np.cumsum(np.sort(o[k_set]))  # j-th completion within the clique
        row = np.zeros(n, dtype=dt)
        row[n - len(k_set) :] = spt
        cand.append(row[None, :])
        labels.append(f"clique{len(k_set)}")
    allr = np.vstack(cand)
    top = allr.max(axis=0)
    which = allr.argmax(axis=0)
    return RankBound(
        value=int(top.sum()),
        ranks=tuple(int(x) for x in top),
        makespan=int(top[-1]),
        families=tuple(labels[int(i)] for i in which),
    )
