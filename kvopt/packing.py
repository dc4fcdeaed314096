"""Rectangle strip packing for ``pack-and-schedule`` (main paper, Appendix A.3).

A rectangle ``k`` has an integer width ``w_k`` (memory: the job's peak
``s + o``) and an integer height ``h_k`` (rounds: the response ``o``).  A
packing gives each rectangle a lower-left corner ``(x_k, y_k)``; no two
rectangles overlap in their interiors and all lie inside the box.

* :func:`steinberg` — A. Steinberg, *A strip-packing algorithm with absolute
  performance bound 2*, SIAM J. Comput. 26(2):401–409, 1997.  Theorem: a list
  of rectangles with widths ``≤ u``, heights ``≤ v`` and

      2·S ≤ u·v − (2a − u)₊ · (2b − v)₊      (``S`` total area, ``a`` / ``b`` the
                                               largest width / height, ``x₊ = max(x, 0)``)

  packs into the ``u × v`` box.  The algorithm is Steinberg's recursion: in a
  box it applies one of the procedures P1, P−1, P2, P−2, P3, P−3, P0 whose
  condition holds (P−k is Pk with the roles of width and height exchanged),
  which places some rectangles and leaves sub-boxes whose lists again satisfy
  the condition.  It is run with an explicit work list (no Python recursion
  limit) in exact rational arithmetic (:class:`fractions.Fraction`).
* :func:`pack_steinberg` — the form the SPEC uses: total area ``≤ W·L`` and
  heights ``≤ L`` (then ``(2b − v)₊ = 0`` for ``v = 2L``) ⇒ the rectangles
  pack into ``W × 2L``.
* :func:`pack_nfdh` — next-fit decreasing height (Coffman, Garey, Johnson,
  Tarjan 1980): height ``≤ 2·S/W + max h``, so ``≤ 3L`` under the same
  hypothesis.

**Integral start rounds.**  Steinberg's splits (P3/P−3 cut a box at
``max(u/2, 2Z/v)``) make coordinates fractional.  The ``x`` coordinate is a
memory position, which a schedule never uses, so it may stay fractional.  The
``y`` coordinate is a start round and must be an integer: :func:`compact_down`
drops the rectangles one by one, in order of their ``y``, onto the highest
rectangle below them whose ``x``-interval overlaps theirs (or onto the floor).
Every new ``y`` is a sum of integer heights, hence an integer; by induction no
rectangle moves up (the ones it lands on were below it and moved down too), so
the top stays ``≤ 2L``; and two rectangles with overlapping ``x``-intervals keep
their vertical order and separation, so the packing stays non-overlapping.
:func:`verify_packing` re-checks every packing exactly before it is returned.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

Number = int | Fraction


class PackingError(RuntimeError):
    """A packing hypothesis failed, or (a bug) a produced packing failed verification."""


@dataclass(frozen=True)
class Packing:
    """Positions of rectangles in a ``width × height`` box; ``y`` are integers after compaction."""

    widths: tuple[int, ...]
    heights: tuple[int, ...]
    x: tuple[Number, ...]
    y: tuple[Number, ...]
    width: Number
    height: Number
    method: str = ""

    @property
    def top(self) -> Number:
        """Highest occupied point (0 for no rectangles)."""
        return max((yy + h for yy, h in zip(self.y, self.heights)), default=0)


# ---------------------------------------------------------------------------
# Steinberg's condition and procedures


def steinberg_condition(
    widths: Sequence[int], heights: Sequence[int], u: Number, v: Number
) -> bool:
    """Steinberg's hypothesis ``a ≤ u, b ≤ v, 2S ≤ uv − (2a−u)₊(2b−v)₊``."""
    if not widths:
        return True
    a, b = max(widths), max(heights)
    s = sum(w * h for w, h in zip(widths, heights))
    return a <= u and b <= v and 2 * s <= u * v - max(2 * a - u, 0) * max(2 * b - v, 0)


def _area(W, H, idx) -> int:
    return sum(W[i] * H[i] for i in idx)


def _p1(idx, u, v, W, H):
    """P1 (condition ``a ≥ u/2``).

    Stack the rectangles of width ``≥ u/2`` (widest first) at the left edge from
    the bottom up, to height ``h``.  Of the rest (tallest first), those taller
    than ``v − h`` hang from the top edge, from the right edge leftwards, to
    total width ``w``.  The others go into the box ``[0, u − w] × [h, v]``.
    """
    order = sorted(idx, key=lambda i: (-W[i], i))
    wide = [i for i in order if 2 * W[i] >= u]
    rest = [i for i in order if 2 * W[i] < u]
    placed, y = [], Fraction(0)
    for i in wide:
        placed.append((i, Fraction(0), y))
        y += H[i]
    h = y
    rest.sort(key=lambda i: (-H[i], i))
    x = Fraction(u)
    remaining = []
    for i in rest:
        if H[i] > v - h:
            x -= W[i]
            placed.append((i, x, v - H[i]))
        else:
            remaining.append(i)
    sub = [(remaining, Fraction(0), h, x, v - h)] if remaining else []
    return placed, sub


def _p2_pair(idx, u, v, W, H, S):
    """Condition C2: two rectangles of width ``≥ u/4`` and height ``≥ v/4`` with
    ``2(S − x_i y_i − x_k y_k) ≤ (u − max(x_i, x_k))·v``; returns the pair or ``None``."""
    big = [i for i in idx if 4 * W[i] >= u and 4 * H[i] >= v]
    for p in range(len(big)):
        for q in range(p + 1, len(big)):
            i, k = big[p], big[q]
            if 2 * (S - W[i] * H[i] - W[k] * H[k]) <= (u - max(W[i], W[k])) * v:
                return i, k
    return None


def _p2(idx, u, v, W, H, pair):
    """P2: the pair stacked at the bottom-left (wider one below); the rest to the right."""
    i, k = pair
    if W[k] > W[i] or (W[k] == W[i] and k < i):
        i, k = k, i
    placed = [(i, Fraction(0), Fraction(0)), (k, Fraction(0), Fraction(H[i]))]
    rest = [j for j in idx if j != i and j != k]
    sub = [(rest, Fraction(W[i]), Fraction(0), u - W[i], v)] if rest else []
    return placed, sub


def _p3_split(idx, u, v, W, H, S):
    """Condition C3: widths non-increasing, some ``1 ≤ m < l`` with ``x_{m+1} ≤ u/4`` and
    ``S − uv/4 ≤ Σ_{i≤m} x_i y_i ≤ 3uv/8``; returns ``(order, m)`` or ``None``."""
    order = sorted(idx, key=lambda i: (-W[i], i))
    z = 0
    for m in range(1, len(order)):
        z += W[order[m - 1]] * H[order[m - 1]]
        if 4 * W[order[m]] <= u and 4 * (S - z) <= u * v and 8 * z <= 3 * u * v:
            return order, m
    return None


def _p3(u, v, W, H, split):
    """P3: the first ``m`` go into the left box of width ``u' = max(u/2, 2Z/v)``, the rest right."""
    order, m = split
    z = _area(W, H, order[:m])
    u1 = max(Fraction(u) / 2, Fraction(2 * z) / v)
    sub = [
        (order[:m], Fraction(0), Fraction(0), u1, v),
        (order[m:], u1, Fraction(0), u - u1, v),
    ]
    return [], sub


def _p0_pick(idx, u, v, W, H, S):
    """Condition C0: a rectangle with ``x_i y_i ≥ S − uv/4`` (the largest such, ties by index)."""
    best = max(idx, key=lambda i: (W[i] * H[i], -i))
    return best if 4 * (S - W[best] * H[best]) <= u * v else None


def _p0(idx, u, v, W, H, i):
    """P0: rectangle ``i`` at the bottom-left; the rest in the box to its right."""
    rest = [j for j in idx if j != i]
    sub = [(rest, Fraction(W[i]), Fraction(0), u - W[i], v)] if rest else []
    return [(i, Fraction(0), Fraction(0))], sub


def _step(idx, u, v, W, H):
    """One procedure in orientation ``(W, H)``; returns placements and sub-boxes or ``None``
    when only a transposed procedure applies."""
    a = max(W[i] for i in idx)
    if 2 * a >= u:
        return _p1(idx, u, v, W, H)
    return None


def _small_step(idx, u, v, W, H, S):
    """P3, P0, P2 in orientation ``(W, H)`` (all widths < u/2, heights < v/2)."""
    split = _p3_split(idx, u, v, W, H, S)
    if split is not None:
        return _p3(u, v, W, H, split)
    pick = _p0_pick(idx, u, v, W, H, S)
    if pick is not None:
        return _p0(idx, u, v, W, H, pick)
    pair = _p2_pair(idx, u, v, W, H, S)
    if pair is not None:
        return _p2(idx, u, v, W, H, pair)
    return None


def _transposed(result):
    placed, sub = result
    return (
        [(i, y, x) for i, x, y in placed],
        [(ids, y0, x0, vv, uu) for ids, x0, y0, uu, vv in sub],
    )


def steinberg(
    widths: Sequence[int], heights: Sequence[int], u: Number, v: Number
) -> tuple[list[Fraction], list[Fraction]]:
    """Steinberg's algorithm: positions ``(x, y)`` of every rectangle inside the ``u × v`` box.

    Raises :class:`PackingError` if the hypothesis of Steinberg's theorem fails.
    The procedure order at each box is P1, P−1, then P3, P−3, P0, P2, P−2 (any
    procedure whose condition holds is valid; the theorem guarantees one does).
    """
    W = [int(w) for w in widths]
    H = [int(h) for h in heights]
    n = len(W)
    if any(w < 1 for w in W) or any(h < 1 for h in H):
        raise PackingError("rectangle sides must be positive integers")
    if not steinberg_condition(W, H, u, v):
        raise PackingError(
            f"Steinberg's condition fails for a {u} x {v} box "
            f"(total area {sum(w * h for w, h in zip(W, H))})"
        )
    xs: list[Fraction | None] = [None] * n
    ys: list[Fraction | None] = [None] * n
    work = [(list(range(n)), Fraction(0), Fraction(0), Fraction(u), Fraction(v))] if n else []
    while work:
        idx, x0, y0, bu, bv = work.pop()
        S = _area(W, H, idx)
        res = _step(idx, bu, bv, W, H)
        if res is None:
            t = _step(idx, bv, bu, H, W)
            res = _transposed(t) if t is not None else None
        if res is None:
            res = _small_step(idx, bu, bv, W, H, S)
        if res is None:
            t = _small_step(idx, bv, bu, H, W, S)
            res = _transposed(t) if t is not None else None
        if res is None:  # pragma: no cover - would contradict Steinberg's theorem
            raise PackingError(f"no Steinberg procedure applies to {len(idx)} rectangles")
        placed, sub = res
        for i, x, y in placed:
            xs[i], ys[i] = x0 + x, y0 + y
        for ids, sx, sy, su, sv in sub:
            work.append((ids, x0 + sx, y0 + sy, su, sv))
    return xs, ys  # type: ignore[return-value]


# ---------------------------------------------------------------------------
# Compaction, verification, and the two packers used by pack-and-schedule


def compact_down(
    widths: Sequence[int], heights: Sequence[int], x: Sequence[Number], y: Sequence[Number]
) -> list[int]:
    """Drop every rectangle as far down as it goes (see the module docstring); integer ``y``.

    Rectangles are taken in order of ``(y, x, index)``; each lands on the highest
    top among the already dropped rectangles whose ``x``-interval overlaps its own
    in positive length.
    """
    n = len(widths)
    order = sorted(range(n), key=lambda k: (y[k], x[k], k))
    # the ends of the x-intervals (exact Fractions) replaced by their ranks among all
    # ends: the same comparisons, on integers (issue 54: the Fraction arithmetic of the
    # quadratic loop below took most of pack-and-schedule's time on 10⁴ jobs)
    ends = [x[k] + widths[k] for k in range(n)]
    rank = {v: i for i, v in enumerate(sorted(set(x) | set(ends)))}
    lo_r = [rank[v] for v in x]
    hi_r = [rank[v] for v in ends]
    # the skyline over the ranks: segment ``i`` covers ``[keys[i], keys[i + 1])`` at height
    # ``tops[i]``.  A rectangle's landing height is the skyline's highest point over its
    # interval (the highest top among the dropped rectangles overlapping it in positive
    # length), and the skyline there becomes its top: one bisection and the segments it
    # covers, which it removes (each segment is created once and removed once: O(n log n)
    # in all; the pairwise loop it replaced was quadratic, issue 54)
    keys, tops = [0], [0]
    new_y = [0] * n
    for k in order:
        lo, hi = lo_r[k], hi_r[k]
        i = bisect_right(keys, lo) - 1
        j = bisect_left(keys, hi, i + 1)
        top = max(tops[i:j])
        after = tops[j - 1]  # the skyline just right of hi, unless a segment starts at hi
        new_y[k] = int(top)
        seg_k, seg_t = ([keys[i], lo], [tops[i], top + heights[k]]) if keys[i] < lo else (
            [lo], [top + heights[k]])  # fmt: skip
        if j == len(keys) or keys[j] != hi:
            seg_k.append(hi)
            seg_t.append(after)
        keys[i:j] = seg_k
        tops[i:j] = seg_t
    return new_y


def verify_packing(p: Packing) -> list[str]:
    """Exact check of containment and pairwise non-overlap; returns the problems found: every
    rectangle out of the box, or else the first overlapping pair met (``[]``: a packing)."""
    errs = []
    n = len(p.widths)
    for k in range(n):
        if p.x[k] < 0 or p.y[k] < 0:
            errs.append(f"rectangle {k} has a negative coordinate")
        if p.x[k] + p.widths[k] > p.width:
            errs.append(f"rectangle {k} sticks out on the right")
        if p.y[k] + p.heights[k] > p.height:
            errs.append(f"rectangle {k} sticks out at the top")
    if errs:
        return errs
    # non-overlap by a sweep upwards (issue 54; it was pairwise, quadratic in a tall stage):
    # the rectangles met so far whose tops lie above the sweep have disjoint x-intervals,
    # kept sorted, so a new one can only overlap its neighbours there; x on exact ranks
    ends = [p.x[k] + p.widths[k] for k in range(n)]
    rank = {v: i for i, v in enumerate(sorted(set(p.x) | set(ends)))}
    lo_r = [rank[v] for v in p.x]
    hi_r = [rank[v] for v in ends]
    starts: list[int] = []  # the x-ranks where the active rectangles begin, sorted
    owner: list[int] = []  # the rectangle beginning there
    tops: list[tuple[Number, int]] = []  # (top, k) of the active ones, a heap
    for k in sorted(range(n), key=lambda k: p.y[k]):
        while tops and tops[0][0] <= p.y[k]:
            _, j = heapq.heappop(tops)
            i = bisect_left(starts, lo_r[j])
            del starts[i], owner[i]
        i = bisect_left(starts, lo_r[k])
        for j in (owner[i - 1] if i else None, owner[i] if i < len(owner) else None):
            if j is not None and lo_r[j] < hi_r[k] and lo_r[k] < hi_r[j]:
                return [f"rectangles {min(j, k)} and {max(j, k)} overlap"]
        starts.insert(i, lo_r[k])
        owner.insert(i, k)
        heapq.heappush(tops, (p.y[k] + p.heights[k], k))
    return errs


def _finish(W, H, xs, ys, width, height, method, compact=True) -> Packing:
    yy = compact_down(W, H, xs, ys) if compact else list(ys)
    p = Packing(tuple(W), tuple(H), tuple(xs), tuple(yy), width, height, method)
    errs = verify_packing(p)
    if errs:  # pragma: no cover - a bug, never a user error
        raise PackingError(f"{method} produced an invalid packing: {errs[0]}")
    return p


def pack_steinberg(
    widths: Sequence[int], heights: Sequence[int], strip_width: int, L: int, *, compact: bool = True
) -> Packing:
    """Pack rectangles with total area ``≤ strip_width·L`` and heights ``≤ L`` into
    ``strip_width × 2L`` with Steinberg's algorithm; ``y`` made integral by :func:`compact_down`.
    """
    W, H = [int(w) for w in widths], [int(h) for h in heights]
    if any(h > L for h in H):
        raise PackingError(f"a rectangle is taller than L={L}")
    if any(w > strip_width for w in W):
        raise PackingError(f"a rectangle is wider than the strip ({strip_width})")
    if sum(w * h for w, h in zip(W, H)) > strip_width * L:
        raise PackingError(f"total area exceeds {strip_width}·{L}")
    xs, ys = steinberg(W, H, strip_width, 2 * L)
    return _finish(W, H, xs, ys, strip_width, 2 * L, "steinberg", compact)


def pack_nfdh(widths: Sequence[int], heights: Sequence[int], strip_width: int) -> Packing:
    """Next-fit decreasing height: levels left to right, tallest first (ties by index).

    Height ``≤ 2·(total area)/strip_width + max height`` (Coffman et al. 1980).
    The box height reported is the packing's own top.
    """
    W, H = [int(w) for w in widths], [int(h) for h in heights]
    if any(w > strip_width for w in W):
        raise PackingError(f"a rectangle is wider than the strip ({strip_width})")
    n = len(W)
    xs, ys = [0] * n, [0] * n
    level_y, level_h, x = 0, 0, 0
    for k in sorted(range(n), key=lambda k: (-H[k], k)):
        if x + W[k] > strip_width:
            level_y += level_h
            level_h, x = 0, 0
        if level_h == 0:
            level_h = H[k]
        xs[k], ys[k] = x, level_y
        x += W[k]
    top = max((ys[k] + H[k] for k in range(n)), default=0)
    return _finish(W, H, xs, ys, strip_width, top, "nfdh", compact=False)
