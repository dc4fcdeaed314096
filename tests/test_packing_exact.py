"""Steinberg's algorithm on exact integer pairs (kvopt.packing, issue 54) against the
``Fraction`` form it replaced: the same corners, the same compacted starts, on random
rectangle lists (Hypothesis) and on boxes with fractional sides."""

from __future__ import annotations

import random
from collections.abc import Sequence
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt import packing
from kvopt.packing import (
    Number,
    compact_down,
    pack_steinberg,
    steinberg,
    steinberg_condition,
    steinberg_starts,
)

# ---------------------------------------------------------------------------
# The reference: kvopt.packing's Steinberg before issue 54's third round, verbatim but
# for the names (Fraction coordinates; every comparison on Fractions)


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


def steinberg_reference(
    widths: Sequence[int], heights: Sequence[int], u: Number, v: Number
) -> tuple[list[Fraction], list[Fraction]]:
    """Steinberg's algorithm as it was before issue 54's third round (``Fraction`` arithmetic,
    per-rectangle comparisons with the box's rational sides, linear scans); input assumed
    to satisfy Steinberg's condition."""
    W = [int(w) for w in widths]
    H = [int(h) for h in heights]
    n = len(W)
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
        assert res is not None, "no Steinberg procedure applies"
        placed, sub = res
        for i, x, y in placed:
            xs[i], ys[i] = x0 + x, y0 + y
        for ids, sx, sy, su, sv in sub:
            work.append((ids, x0 + sx, y0 + sy, su, sv))
    return xs, ys  # type: ignore[return-value]


# ---------------------------------------------------------------------------
# The comparisons: an integer against a rational through its floor or ceiling


@settings(max_examples=500, deadline=None)
@given(st.integers(-(10**6), 10**6), st.integers(1, 10**4), st.integers(-(10**3), 10**3))
def test_integer_against_rational_by_floor_and_ceiling(n, d, k):
    q = Fraction(n, d)
    assert (k >= q) == (k >= -(-n // d))
    assert (k > q) == (k > n // d)
    assert (k <= q) == (k <= n // d)


# ---------------------------------------------------------------------------
# The algorithm against the reference


def _trimmed(W, H, u, v):
    """Drop the last rectangle until Steinberg's condition holds (a deterministic trim)."""
    W, H = list(W), list(H)
    while W and not steinberg_condition(W, H, u, v):
        W.pop()
        H.pop()
    return W, H


_sides = st.one_of(
    st.integers(1, 60),
    st.fractions(min_value=1, max_value=60, max_denominator=12),
)


@settings(max_examples=600, deadline=None)
@given(
    _sides,
    _sides,
    st.lists(st.tuples(st.integers(1, 60), st.integers(1, 60)), min_size=1, max_size=30),
)
def test_steinberg_agrees_with_the_fraction_reference(u, v, rects):
    """Every corner, exactly, on boxes with integer and fractional sides."""
    W = [min(w, max(1, int(u))) for w, _ in rects]
    H = [min(h, max(1, int(v))) for _, h in rects]
    W, H = _trimmed(W, H, u, v)
    xs, ys = steinberg(W, H, u, v)
    rx, ry = steinberg_reference(W, H, u, v)
    assert xs == rx and ys == ry
    assert all(type(c) is Fraction for c in xs + ys)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 400),
    st.integers(0, 8),
    st.lists(st.tuples(st.integers(1, 400), st.integers(1, 256)), min_size=1, max_size=60),
)
def test_starts_agree_with_the_reference_compacted(M, r, rects):
    """``steinberg_starts`` and ``pack_steinberg`` (the SPEC form, ``W × 2L``) give the
    starts that ``compact_down`` makes of the reference's corners, and the same x."""
    L = 1 << r
    W = [min(w, M) for w, _ in rects]
    H = [min(h, L) for _, h in rects]
    while sum(w * h for w, h in zip(W, H)) > M * L:
        W.pop()
        H.pop()
    if not W:
        return
    rx, ry = steinberg_reference(W, H, M, 2 * L)
    want = compact_down(W, H, rx, ry)
    assert steinberg_starts(W, H, M, L) == want
    p = pack_steinberg(W, H, M, L)
    assert list(p.y) == want and list(p.x) == rx


@pytest.mark.parametrize("seed", range(6))
def test_flat_stages_like_the_trace(seed):
    """Hundreds of flat rectangles (heights far below ``L``, widths up to the strip), as in
    pack-and-schedule's late stages on the Azure trace: deep recursions, P3 splits at
    ``2Z/v`` and their transposes, denominators of many digits."""
    rng = random.Random(seed)
    M, L = rng.choice([(16492, 1 << 12), (1000, 1 << 9), (997, 1 << 10)])
    n = rng.randint(200, 600)
    W = [rng.choice([rng.randint(1, M // 8), rng.randint(1, M)]) for _ in range(n)]
    H = [rng.randint(1, max(1, L // rng.choice([1, 4, 64]))) for _ in range(n)]
    while sum(w * h for w, h in zip(W, H)) > M * L:
        W.pop()
        H.pop()
    rx, ry = steinberg_reference(W, H, M, 2 * L)
    xs, ys = steinberg(W, H, M, 2 * L)
    assert xs == rx and ys == ry
    assert steinberg_starts(W, H, M, L) == compact_down(W, H, rx, ry)


def test_every_procedure_is_reached_with_fractional_sides(monkeypatch):
    """The random boxes of the test above reach P1, P2, P3, P0 (so each has been compared)."""
    calls = {"_p1": 0, "_p2": 0, "_p3": 0, "_p0": 0}
    for name in calls:
        orig = getattr(packing, name)

        def wrapped(*a, _orig=orig, _name=name):
            calls[_name] += 1
            return _orig(*a)

        monkeypatch.setattr(packing, name, wrapped)
    rng = random.Random(11)
    for _ in range(800):
        u = Fraction(rng.randint(8, 240), rng.choice([1, 2, 3, 7]))
        v = Fraction(rng.randint(8, 240), rng.choice([1, 2, 5]))
        n = rng.randint(1, 25)
        W = [rng.randint(1, max(1, int(u) // rng.choice([1, 2, 3, 5]))) for _ in range(n)]
        H = [rng.randint(1, max(1, int(v) // rng.choice([1, 2, 3, 5]))) for _ in range(n)]
        W, H = _trimmed(W, H, u, v)
        assert steinberg(W, H, u, v) == steinberg_reference(W, H, u, v)
    assert all(c > 0 for c in calls.values()), calls
