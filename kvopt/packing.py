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
  limit) in exact rational arithmetic: integer pairs ``(n, d)`` with the values and
  comparisons of :class:`fractions.Fraction` (the pairs and the threshold argument are
  described above ``_pair``; issue 54: the Fraction objects took most of the time).
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
from itertools import accumulate, repeat
from math import gcd, lcm
from operator import add, mul

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


# Exact rationals as pairs of integers (issue 54).  A box side or an offset is a pair
# ``(n, d)`` with ``d > 0`` and ``gcd(n, d) = 1``, the value ``n/d``: what a ``Fraction``
# holds, without the Fraction object's per-operation cost (type checks, a new object and a
# gcd for every comparison).  Two pairs compare as ``a₀·b₁ ⋚ b₀·a₁`` (positive
# denominators), which is how ``Fraction`` compares them.  Steinberg's tests compare an
# integer quantity ``k`` (a side, a height, an area) with a rational ``q``; for integers
# ``k ≥ q ⇔ k ≥ ⌈q⌉``, ``k > q ⇔ k > ⌊q⌋`` and ``k ≤ q ⇔ k ≤ ⌊q⌋``, so each box computes its
# thresholds ``⌊q⌋``/``⌈q⌉`` once (integer floor division of the pair) and compares plain
# integers per rectangle: every test decides exactly as the ``Fraction`` test it replaces.

_ZERO = (0, 1)


def _pair(q: Number) -> tuple[int, int]:
    """``q`` (an int or a Fraction) as a reduced pair ``(n, d)``, ``d > 0``."""
    return (q.numerator, q.denominator) if isinstance(q, Fraction) else (int(q), 1)


def _reduced(n: int, d: int) -> tuple[int, int]:
    g = gcd(n, d)
    return (n // g, d // g) if d > 0 else (-n // g, -d // g)


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    if b is _ZERO:
        return a
    an, ad = a
    bn, bd = b
    if ad == bd == 1:
        return an + bn, 1
    return _reduced(an * bd + bn * ad, ad * bd)


def _ranks(key: Sequence[int]) -> list[int]:
    """``r[i]`` = the place of ``i`` in the order of ``(−key[i], i)``: sorting by ``r`` is
    sorting by that tuple (a total order, so the same list whatever the input order)."""
    r = [0] * len(key)
    # descending keys; ``reverse`` keeps the sort stable, so equal keys stay by index
    for pos, i in enumerate(sorted(range(len(key)), key=key.__getitem__, reverse=True)):
        r[i] = pos
    return r


class _Rects:
    """The rectangles' sides, areas and the three orders the procedures sort by."""

    __slots__ = ("W", "H", "A", "rw", "rh", "ra")

    def __init__(self, W: list[int], H: list[int]):
        self.W, self.H = W, H
        self.A = [w * h for w, h in zip(W, H)]
        self.rw, self.rh, self.ra = _ranks(W), _ranks(H), _ranks(self.A)

    def transposed(self) -> _Rects:
        t = object.__new__(_Rects)
        t.W, t.H, t.A, t.rw, t.rh, t.ra = self.H, self.W, self.A, self.rh, self.rw, self.ra
        return t


def _p1(idx, u, v, R):
    """P1 (condition ``a ≥ u/2``).

    Stack the rectangles of width ``≥ u/2`` (widest first) at the left edge from
    the bottom up, to height ``h``.  Of the rest (tallest first), those taller
    than ``v − h`` hang from the top edge, from the right edge leftwards, to
    total width ``w``.  The others go into the box ``[0, u − w] × [h, v]``.
    """
    (un, ud), (vn, vd), W, H = u, v, R.W, R.H
    order = idx  # widest first, ties by index (the caller sorted it)
    half = -(-un // (2 * ud))  # 2·w ≥ u ⇔ w ≥ ⌈u/2⌉: a prefix of ``order``
    k = bisect_right(order, -half, key=lambda i: -W[i])
    placed, y = [], 0
    for i in order[:k]:
        placed.append((i, _ZERO, (y, 1)))
        y += H[i]
    h = y
    rest = sorted(order[k:], key=R.rh.__getitem__)  # tallest first, ties by index
    t = vn // vd - h  # H > v − h ⇔ H > ⌊v⌋ − h: a prefix of ``rest``
    j = bisect_right(rest, -(t + 1), key=lambda i: -H[i])
    xn = un
    for i in rest[:j]:
        xn -= W[i] * ud
        placed.append((i, (xn, ud), (vn - H[i] * vd, vd)))
    sub = [(rest[j:], _ZERO, (h, 1), (xn, ud), (vn - h * vd, vd))] if j < len(rest) else []
    return placed, sub


def _p2_pair(idx, order, u, v, R, S):
    """Condition C2: two rectangles of width ``≥ u/4`` and height ``≥ v/4`` with
    ``2(S − x_i y_i − x_k y_k) ≤ (u − max(x_i, x_k))·v``; returns the pair or ``None``.

    The pairs are tried in the order of ``idx``; ``order`` is ``idx`` sorted by width
    (widest first), where the rectangles of width ``≥ u/4`` are a prefix."""
    (un, ud), (vn, vd), W, H, A = u, v, R.W, R.H, R.A
    cw, ch = -(-un // (4 * ud)), -(-vn // (4 * vd))
    if len(order) < 2 or W[order[1]] < cw:  # fewer than two of width ≥ u/4
        return None
    k = bisect_right(order, -cw, key=lambda i: -W[i])
    big = [i for i in order[:k] if H[i] >= ch] if k >= 2 else []
    if len(big) > 16:  # (not under Steinberg's condition: each has area ≥ uv/16, 2S ≤ uv)
        big = [i for i in idx if W[i] >= cw and H[i] >= ch]
    else:
        big.sort(key=idx.index)  # in the order of idx
    for p in range(len(big)):
        for q in range(p + 1, len(big)):
            i, k = big[p], big[q]
            if 2 * (S - A[i] - A[k]) * ud * vd <= (un - max(W[i], W[k]) * ud) * vn:
                return i, k
    return None


def _p2(idx, u, v, R, pair):
    """P2: the pair stacked at the bottom-left (wider one below); the rest to the right."""
    i, k = pair
    W = R.W
    if W[k] > W[i] or (W[k] == W[i] and k < i):
        i, k = k, i
    placed = [(i, _ZERO, _ZERO), (k, _ZERO, (R.H[i], 1))]
    rest = [j for j in idx if j != i and j != k]
    sub = [(rest, (W[i], 1), _ZERO, (u[0] - W[i] * u[1], u[1]), v)] if rest else []
    return placed, sub


def _p3_split(order, u, v, R, S):
    """Condition C3: widths non-increasing, some ``1 ≤ m < l`` with ``x_{m+1} ≤ u/4`` and
    ``S − uv/4 ≤ Σ_{i≤m} x_i y_i ≤ 3uv/8``; returns ``(order, m, Σ_{i≤m} x_i y_i)`` or ``None``.

    The three tests are monotone in ``m`` (widths fall along ``order``; the sum ``z_m``
    grows, every area being ≥ 1), so the ``m`` that pass form an interval and the first
    is found by bisection: ``m ≥`` the first place with ``x ≤ ⌊u/4⌋``, ``z_m ≥ S − ⌊uv/4⌋``,
    and then ``z_m ≤ ⌊3uv/8⌋``: the first ``m`` the loop over ``m = 1, 2, …`` would take.
    """
    (un, ud), (vn, vd), W = u, v, R.W  # ``order``: sorted by width, the caller sorted it
    tw = un // (4 * ud)
    if len(order) < 2 or W[order[-1]] > tw:  # no m < l with x_{m+1} ≤ u/4
        return None
    uvn, uvd = un * vn, ud * vd
    m0 = bisect_right(order, -tw - 1, key=lambda i: -W[i])
    z = list(accumulate(map(R.A.__getitem__, order)))  # z[m − 1] = z_m
    m = max(1, m0, bisect_left(z, S - uvn // (4 * uvd)) + 1)
    if m < len(order) and z[m - 1] <= 3 * uvn // (8 * uvd):
        return order, m, z[m - 1]
    return None


def _p3(u, v, split):
    """P3: the first ``m`` go into the left box of width ``u' = max(u/2, 2Z/v)``, the rest right."""
    order, m, z = split
    (un, ud), (vn, vd) = u, v
    a = (un // 2, ud) if un % 2 == 0 else (un, 2 * ud)  # u/2, reduced
    b = _reduced(2 * z * vd, vn)  # 2Z/v
    u1 = b if b[0] * a[1] > a[0] * b[1] else a
    rest = _reduced(un * u1[1] - u1[0] * ud, ud * u1[1])
    sub = [(order[:m], _ZERO, _ZERO, u1, v), (order[m:], u1, _ZERO, rest, v)]
    return [], sub


def _p0_pick(idx, u, v, R, S):
    """Condition C0: a rectangle with ``x_i y_i ≥ S − uv/4`` (the largest such, ties by index)."""
    best = min(idx, key=R.ra.__getitem__)
    return best if S - R.A[best] <= u[0] * v[0] // (4 * u[1] * v[1]) else None


def _p0(idx, u, v, R, i):
    """P0: rectangle ``i`` at the bottom-left; the rest in the box to its right."""
    rest = list(idx)
    rest.remove(i)
    w = R.W[i]
    sub = [(rest, (w, 1), _ZERO, (u[0] - w * u[1], u[1]), v)] if rest else []
    return [(i, _ZERO, _ZERO)], sub


_BY_WIDTH, _BY_HEIGHT = 1, 2  # how a box's list is known to be sorted (0: not known)


def _box(idx, u, v, R, T, S, known):
    """The first procedure whose condition holds in the box ``u × v`` holding ``idx``, in
    the order P1, P−1, P3, P0, P2, P−3, P−2: its placements, sub-boxes, and how the
    sub-boxes' lists are sorted (``_BY_WIDTH``: by ``R.rw``, ``_BY_HEIGHT``: by ``R.rh``).

    (P0's condition is the same in both orientations, so P−0, which came after P−3 and
    before P−2, never applies when P0 did not.)  ``known`` says how ``idx`` is sorted:
    a list sorted by a total order needs no sort (issue 54: P3's halves, P1's rest).
    P0 and P2 remove rectangles from ``idx``, which keeps its order."""
    ow = idx if known == _BY_WIDTH else sorted(idx, key=R.rw.__getitem__)  # widest first
    if 2 * R.W[ow[0]] * u[1] >= u[0]:  # P1: a ≥ u/2
        return _p1(ow, u, v, R), _BY_HEIGHT
    if 2 * max(map(R.H.__getitem__, idx)) * v[1] >= v[0]:  # P−1: b ≥ v/2
        oh = idx if known == _BY_HEIGHT else sorted(idx, key=R.rh.__getitem__)
        return _transposed(_p1(oh, v, u, T)), _BY_WIDTH
    split = _p3_split(ow, u, v, R, S)
    if split is not None:
        return _p3(u, v, split), _BY_WIDTH
    pick = _p0_pick(idx, u, v, R, S)
    if pick is not None:
        return _p0(idx, u, v, R, pick), known
    pair = _p2_pair(idx, ow, u, v, R, S)
    if pair is not None:
        return _p2(idx, u, v, R, pair), known
    oh = idx if known == _BY_HEIGHT else sorted(idx, key=R.rh.__getitem__)  # tallest first
    split = _p3_split(oh, v, u, T, S)
    if split is not None:
        return _transposed(_p3(v, u, split)), _BY_HEIGHT
    pair = _p2_pair(idx, oh, v, u, T, S)
    if pair is not None:
        return _transposed(_p2(idx, v, u, T, pair)), known
    return None, known


def _transposed(result):
    placed, sub = result
    return (
        [(i, y, x) for i, x, y in placed],
        [(ids, y0, x0, vv, uu) for ids, x0, y0, uu, vv in sub],
    )


def _steinberg_pairs(W: list[int], H: list[int], u: Number, v: Number):
    """Steinberg's recursion on exact pairs: the corners ``(x, y)`` as pairs ``(n, d)``."""
    n = len(W)
    R = _Rects(W, H)
    T = R.transposed()
    xs: list = [None] * n
    ys: list = [None] * n
    work = [(list(range(n)), _ZERO, _ZERO, _pair(u), _pair(v), 0)] if n else []
    while work:
        idx, x0, y0, bu, bv, known = work.pop()
        if len(idx) == 1:  # every procedure puts a lone rectangle at the box's corner
            xs[idx[0]], ys[idx[0]] = x0, y0
            continue
        res, known = _box(idx, bu, bv, R, T, sum(map(R.A.__getitem__, idx)), known)
        if res is None:  # pragma: no cover - would contradict Steinberg's theorem
            raise PackingError(f"no Steinberg procedure applies to {len(idx)} rectangles")
        placed, sub = res
        for i, x, y in placed:
            xs[i] = x0 if x is _ZERO else _add(x0, x)
            ys[i] = y0 if y is _ZERO else _add(y0, y)
        for ids, sx, sy, su, sv in sub:
            sx = x0 if sx is _ZERO else _add(x0, sx)
            work.append((ids, sx, y0 if sy is _ZERO else _add(y0, sy), su, sv, known))
    return xs, ys


def _checked_sides(widths, heights, u, v) -> tuple[list[int], list[int]]:
    W = [int(w) for w in widths]
    H = [int(h) for h in heights]
    if any(w < 1 for w in W) or any(h < 1 for h in H):
        raise PackingError("rectangle sides must be positive integers")
    if not steinberg_condition(W, H, u, v):
        raise PackingError(
            f"Steinberg's condition fails for a {u} x {v} box "
            f"(total area {sum(w * h for w, h in zip(W, H))})"
        )
    return W, H


def steinberg(
    widths: Sequence[int], heights: Sequence[int], u: Number, v: Number
) -> tuple[list[Fraction], list[Fraction]]:
    """Steinberg's algorithm: positions ``(x, y)`` of every rectangle inside the ``u × v`` box.

    Raises :class:`PackingError` if the hypothesis of Steinberg's theorem fails.
    The procedure order at each box is P1, P−1, then P3, P0, P2, P−3, P−2 (any
    procedure whose condition holds is valid; the theorem guarantees one does).
    Exact: the rationals are pairs of integers (see ``_pair``), the same values and
    decisions as the ``Fraction`` arithmetic it replaced (issue 54; tested against it).
    """
    W, H = _checked_sides(widths, heights, u, v)
    xs, ys = _steinberg_pairs(W, H, u, v)
    return [Fraction(*p) for p in xs], [Fraction(*p) for p in ys]


# ---------------------------------------------------------------------------
# Compaction, verification, and the two packers used by pack-and-schedule


def _scaled(nums: Sequence[int], dens: Sequence[int]) -> tuple[list[int], int]:
    """The rationals ``nums[k]/dens[k]`` times their common denominator ``D``: integers in
    the same order (``D > 0``), so sorting and comparing them is sorting and comparing the
    rationals; returns them and ``D``."""
    D = lcm(*set(dens)) if dens else 1
    if D == 1:
        return list(nums), 1
    f = {d: D // d for d in set(dens)}
    return [n * f[d] for n, d in zip(nums, dens)], D


def _scaled_numbers(values: Sequence[Number]) -> tuple[list[int], int]:
    pairs = [_pair(v) for v in values]
    return _scaled([p[0] for p in pairs], [p[1] for p in pairs])


def _interval_ranks(widths: Sequence[int], X: list[int], D: int) -> tuple[list[int], list[int]]:
    """The ends of the x-intervals ``[X, X + w·D)`` replaced by their ranks among all ends:
    the same comparisons between ends, on small integers."""
    ends = list(map(add, X, map(mul, widths, repeat(D))))
    rank = {v: i for i, v in enumerate(sorted(set(X) | set(ends)))}
    return [rank[v] for v in X], [rank[v] for v in ends]


def compact_down(
    widths: Sequence[int], heights: Sequence[int], x: Sequence[Number], y: Sequence[Number]
) -> list[int]:
    """Drop every rectangle as far down as it goes (see the module docstring); integer ``y``.

    Rectangles are taken in order of ``(y, x, index)``; each lands on the highest
    top among the already dropped rectangles whose ``x``-interval overlaps its own
    in positive length.
    """
    X, D = _scaled_numbers(x)
    Y, _ = _scaled_numbers(y)
    return _compact(widths, heights, X, D, Y)


def _compact(widths, heights, X: list[int], D: int, Y: list[int]) -> list[int]:
    """:func:`compact_down` on ``x = X/D`` and ``y`` in the order of ``Y`` (scaled integers)."""
    n = len(widths)
    # (y, x, index) order: two stable sorts on single integer keys
    order = sorted(range(n), key=X.__getitem__)
    order.sort(key=Y.__getitem__)
    # the ends of the x-intervals replaced by their ranks among all ends: the same
    # comparisons, on integers (issue 54: Fraction arithmetic took most of the time)
    lo_r, hi_r = _interval_ranks(widths, X, D)
    return _drop(heights, order, lo_r, hi_r)


def _drop(heights, order, lo_r, hi_r) -> list[int]:
    # the skyline over the ranks: segment ``i`` covers ``[keys[i], keys[i + 1])`` at height
    # ``tops[i]``.  A rectangle's landing height is the skyline's highest point over its
    # interval (the highest top among the dropped rectangles overlapping it in positive
    # length), and the skyline there becomes its top: one bisection and the segments it
    # covers, which it removes (each segment is created once and removed once: O(n log n)
    # in all; the pairwise loop it replaced was quadratic, issue 54)
    keys, tops = [0], [0]
    new_y = [0] * len(order)
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
    X, D = _scaled_numbers(p.x)
    Y, E = _scaled_numbers(p.y)
    lo_r, hi_r = _interval_ranks(p.widths, X, D)
    return _first_overlap(lo_r, hi_r, Y, [h * E for h in p.heights])


def _first_overlap(lo_r, hi_r, Y: list[int], heights) -> list[str]:
    """Non-overlap of the rectangles ``[lo_r, hi_r) × [Y, Y + heights)`` (integers)."""
    # a sweep upwards (issue 54; it was pairwise, quadratic in a tall stage): the
    # rectangles met so far whose tops lie above the sweep have disjoint x-intervals,
    # kept sorted, so a new one can only overlap its neighbours there
    starts: list[int] = []  # the x-ranks where the active rectangles begin, sorted
    owner: list[int] = []  # the rectangle beginning there
    tops: list[tuple[int, int]] = []  # (top, k) of the active ones, a heap
    for k in sorted(range(len(Y)), key=Y.__getitem__):
        while tops and tops[0][0] <= Y[k]:
            _, j = heapq.heappop(tops)
            i = bisect_left(starts, lo_r[j])
            del starts[i], owner[i]
        i = bisect_left(starts, lo_r[k])
        for j in (owner[i - 1] if i else None, owner[i] if i < len(owner) else None):
            if j is not None and lo_r[j] < hi_r[k] and lo_r[k] < hi_r[j]:
                return [f"rectangles {min(j, k)} and {max(j, k)} overlap"]
        starts.insert(i, lo_r[k])
        owner.insert(i, k)
        heapq.heappush(tops, (Y[k] + heights[k], k))
    return []


def _steinberg_y(W: list[int], H: list[int], strip_width: int, L: int):
    """Steinberg in ``strip_width × 2L``, compacted and verified: the corners as pairs and
    the integral ``y``; :class:`PackingError` (a bug) if the packing fails the check."""
    xs, ys = _steinberg_pairs(W, H, strip_width, 2 * L)
    X, D = _scaled([p[0] for p in xs], [p[1] for p in xs])
    Y, _ = _scaled([p[0] for p in ys], [p[1] for p in ys])
    order = sorted(range(len(W)), key=X.__getitem__)
    order.sort(key=Y.__getitem__)
    lo_r, hi_r = _interval_ranks(W, X, D)
    new_y = _drop(H, order, lo_r, hi_r)
    # verify_packing on the integers: inside the box, then no two interiors meet
    inside = min(X, default=0) >= 0 and min(new_y, default=0) >= 0
    inside = inside and max(map(add, X, map(mul, W, repeat(D))), default=0) <= strip_width * D
    inside = inside and max(map(add, new_y, H), default=0) <= 2 * L
    errs = _first_overlap(lo_r, hi_r, new_y, H) if inside else ["a rectangle leaves the box"]
    if errs:  # pragma: no cover - a bug, never a user error
        raise PackingError(f"steinberg produced an invalid packing: {errs[0]}")
    return xs, new_y


def _finish(W, H, xs, ys, width, height, method, compact=True) -> Packing:
    yy = compact_down(W, H, xs, ys) if compact else list(ys)
    p = Packing(tuple(W), tuple(H), tuple(xs), tuple(yy), width, height, method)
    errs = verify_packing(p)
    if errs:  # pragma: no cover - a bug, never a user error
        raise PackingError(f"{method} produced an invalid packing: {errs[0]}")
    return p


def _checked_strip(widths, heights, strip_width: int, L: int) -> tuple[list[int], list[int]]:
    W, H = [int(w) for w in widths], [int(h) for h in heights]
    if any(h > L for h in H):
        raise PackingError(f"a rectangle is taller than L={L}")
    if any(w > strip_width for w in W):
        raise PackingError(f"a rectangle is wider than the strip ({strip_width})")
    if sum(w * h for w, h in zip(W, H)) > strip_width * L:
        raise PackingError(f"total area exceeds {strip_width}·{L}")
    return _checked_sides(W, H, strip_width, 2 * L)


def pack_steinberg(
    widths: Sequence[int], heights: Sequence[int], strip_width: int, L: int, *, compact: bool = True
) -> Packing:
    """Pack rectangles with total area ``≤ strip_width·L`` and heights ``≤ L`` into
    ``strip_width × 2L`` with Steinberg's algorithm; ``y`` made integral by :func:`compact_down`.
    """
    W, H = _checked_strip(widths, heights, strip_width, L)
    if not compact:
        xs, ys = steinberg(W, H, strip_width, 2 * L)
        return _finish(W, H, xs, ys, strip_width, 2 * L, "steinberg", compact)
    pairs, yy = _steinberg_y(W, H, strip_width, L)
    xs = tuple(Fraction(*p) for p in pairs)
    return Packing(tuple(W), tuple(H), xs, tuple(yy), strip_width, 2 * L, "steinberg")


def steinberg_starts(
    widths: Sequence[int], heights: Sequence[int], strip_width: int, L: int
) -> list[int]:
    """``pack_steinberg(widths, heights, strip_width, L).y`` as a list, without building the
    packing's ``Fraction`` x-coordinates (the form ``pack-and-schedule`` needs, issue 54)."""
    W, H = _checked_strip(widths, heights, strip_width, L)
    return _steinberg_y(W, H, strip_width, L)[1]


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
