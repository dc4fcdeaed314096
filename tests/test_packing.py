"""Steinberg's strip packing and NFDH (kvopt.packing), checked on thousands of random sets."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.packing import (
    Packing,
    PackingError,
    compact_down,
    pack_nfdh,
    pack_steinberg,
    steinberg,
    steinberg_condition,
    verify_packing,
)


def _overlap_free(W, H, xs, ys, width, height) -> None:
    """Independent O(n²) check: containment and no two interiors meet."""
    n = len(W)
    for k in range(n):
        assert 0 <= xs[k] and xs[k] + W[k] <= width
        assert 0 <= ys[k] and ys[k] + H[k] <= height
        for j in range(k):
            sep = (
                xs[k] + W[k] <= xs[j]
                or xs[j] + W[j] <= xs[k]
                or ys[k] + H[k] <= ys[j]
                or ys[j] + H[j] <= ys[k]
            )
            assert sep, f"rectangles {j} and {k} overlap"


def _random_set(rng: random.Random, M: int, L: int) -> tuple[list[int], list[int]]:
    """Rectangles of width ≤ M and height ≤ L, trimmed until total area ≤ M·L."""
    n = rng.randint(1, 30)
    shape = rng.choice(["any", "narrow", "wide", "tall", "flat"])
    W, H = [], []
    for _ in range(n):
        if shape == "narrow":
            w, h = rng.randint(1, max(1, M // 4)), rng.randint(1, L)
        elif shape == "wide":
            w, h = rng.randint(M // 2, M) or 1, rng.randint(1, max(1, L // 3))
        elif shape == "tall":
            w, h = rng.randint(1, max(1, M // 3)), rng.randint(max(1, L // 2), L)
        elif shape == "flat":
            w, h = rng.randint(1, M), 1
        else:
            w, h = rng.randint(1, M), rng.randint(1, L)
        W.append(w)
        H.append(h)
    while sum(w * h for w, h in zip(W, H)) > M * L:
        k = rng.randrange(len(W))
        W.pop(k)
        H.pop(k)
    return W, H


def test_spec_form_thousands_of_random_sets():
    """Total area ≤ M·L and heights ≤ L ⇒ fits M × 2L, integral y, no overlaps."""
    rng = random.Random(20260517)
    tested = 0
    while tested < 3000:
        M, L = rng.randint(1, 64), rng.randint(1, 32)
        W, H = _random_set(rng, M, L)
        if not W:
            continue
        p = pack_steinberg(W, H, M, L)
        assert all(isinstance(y, int) for y in p.y)
        assert p.top <= 2 * L
        _overlap_free(W, H, p.x, p.y, M, 2 * L)
        tested += 1


def test_general_theorem_random_boxes():
    """Steinberg's full hypothesis 2S ≤ uv − (2a−u)₊(2b−v)₊ on random boxes (all procedures)."""
    rng = random.Random(7)
    tested = 0
    while tested < 2000:
        u, v = rng.randint(1, 50), rng.randint(1, 50)
        div = rng.choice([1, 2, 3, 5])
        n = rng.randint(1, 20)
        W = [rng.randint(1, max(1, u // div)) for _ in range(n)]
        H = [rng.randint(1, max(1, v // rng.choice([1, 2, 3, 5]))) for _ in range(n)]
        while W and not steinberg_condition(W, H, u, v):
            k = rng.randrange(len(W))
            W.pop(k)
            H.pop(k)
        if not W:
            continue
        xs, ys = steinberg(W, H, u, v)
        _overlap_free(W, H, xs, ys, u, v)
        tested += 1


def test_fractional_split_is_made_integral():
    # a P3 split at 2Z/v makes x fractional; compaction keeps y integral and inside 2L
    W, H = [3, 3, 3, 2, 1, 1], [5, 4, 3, 3, 2, 1]
    p = pack_steinberg(W, H, 7, 7)
    assert all(isinstance(y, int) for y in p.y)
    _overlap_free(W, H, p.x, p.y, 7, 14)


def test_compaction_never_moves_up_and_stays_disjoint():
    rng = random.Random(3)
    for _ in range(300):
        W, H = _random_set(rng, 40, 12)
        if not W:
            continue
        xs, ys = steinberg(W, H, 40, 24)
        new = compact_down(W, H, xs, ys)
        assert all(n <= y for n, y in zip(new, ys))
        _overlap_free(W, H, xs, new, 40, 24)


def test_condition_checked():
    with pytest.raises(PackingError):
        pack_steinberg([5, 5], [4, 4], 5, 4)  # area 40 > 20
    with pytest.raises(PackingError):
        pack_steinberg([1], [5], 5, 4)  # taller than L
    with pytest.raises(PackingError):
        steinberg([3, 3], [3, 3], 4, 4)  # 2S = 36 > 16 - 4


def test_tight_example_two_halves():
    # two rectangles wider than M/2 (area ≤ M·L) cannot sit side by side: stacked
    M, L = 10, 5
    p = pack_steinberg([6, 6], [4, 4], M, L)
    assert sorted(p.y) == [0, 4]


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 40),
    st.lists(st.tuples(st.integers(1, 40), st.integers(1, 20)), min_size=1, max_size=25),
)
def test_nfdh_height_bound(M, rects):
    W = [min(w, M) for w, _ in rects]
    H = [h for _, h in rects]
    p = pack_nfdh(W, H, M)
    _overlap_free(W, H, p.x, p.y, M, p.height)
    area = sum(w * h for w, h in zip(W, H))
    assert p.top <= Fraction(2 * area, M) + max(H)


def test_verify_packing_detects_overlap():
    p = Packing((2, 2), (2, 2), (0, 1), (0, 1), 4, 4)
    assert verify_packing(p)
    q = Packing((2, 2), (2, 2), (0, 2), (0, 1), 4, 4)
    assert not verify_packing(q)


def test_every_procedure_is_exercised(monkeypatch):
    """The random sets reach each of Steinberg's procedures (P1, P2, P3, P0 and transposes)."""
    import kvopt.packing as kp

    calls = {"_p1": 0, "_p2": 0, "_p3": 0, "_p0": 0}
    for name in calls:
        orig = getattr(kp, name)

        def wrapped(*a, _orig=orig, _name=name, **k):
            calls[_name] += 1
            return _orig(*a, **k)

        monkeypatch.setattr(kp, name, wrapped)
    rng = random.Random(2)
    for _ in range(1500):
        u, v = rng.randint(1, 60), rng.randint(1, 60)
        n = rng.randint(1, 25)
        W = [rng.randint(1, max(1, u // rng.choice([1, 2, 3, 5]))) for _ in range(n)]
        H = [rng.randint(1, max(1, v // rng.choice([1, 2, 3, 5]))) for _ in range(n)]
        while W and not steinberg_condition(W, H, u, v):
            k = rng.randrange(len(W))
            W.pop(k)
            H.pop(k)
        if W:
            xs, ys = kp.steinberg(W, H, u, v)
            _overlap_free(W, H, xs, ys, u, v)
    assert all(c > 0 for c in calls.values()), calls


def _compact_down_reference(widths, heights, x, y):
    """The drop rule on the exact coordinates, pair by pair (compact_down before issue 54)."""
    n = len(widths)
    new_y = [0] * n
    done = []
    for k in sorted(range(n), key=lambda k: (y[k], x[k], k)):
        top = 0
        for j in done:
            if x[j] < x[k] + widths[k] and x[k] < x[j] + widths[j]:
                top = max(top, new_y[j] + heights[j])
        new_y[k] = top
        done.append(k)
    return new_y


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 6),
            st.integers(1, 6),
            st.fractions(0, 10, max_denominator=4),
            st.fractions(0, 10, max_denominator=3),
        ),
        max_size=25,
    )
)
def test_compact_down_agrees_with_the_pairwise_rule(rects):
    # coordinates as exact Fractions (ints among them), touching and equal ends included
    w = [r[0] for r in rects]
    h = [r[1] for r in rects]
    x = [int(r[2]) if r[2].denominator == 1 else r[2] for r in rects]
    y = [r[3] for r in rects]
    assert compact_down(w, h, x, y) == _compact_down_reference(w, h, x, y)


@pytest.mark.parametrize("seed", range(4))
def test_compact_down_agrees_with_the_pairwise_rule_on_hundreds_of_rectangles(seed):
    """The skyline (issue 54) against the pairwise rule where segments merge and split often:
    hundreds of rectangles on few distinct ends, Fractions and integers mixed."""
    rng = np.random.default_rng(seed)
    n = 400
    w = [int(v) for v in rng.integers(1, 12, n)]
    h = [int(v) for v in rng.integers(1, 9, n)]
    x = [Fraction(int(a), int(b)) for a, b in zip(rng.integers(0, 60, n), rng.integers(1, 3, n))]
    y = [Fraction(int(a), 2) for a in rng.integers(0, 400, n)]
    assert compact_down(w, h, x, y) == _compact_down_reference(w, h, x, y)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 4),
            st.integers(1, 4),
            st.fractions(0, 8, max_denominator=2),
            st.integers(0, 8),
        ),
        max_size=12,
    )
)
def test_verify_packing_finds_an_overlap_exactly_when_a_pair_overlaps(rects):
    """The sweep (issue 54) against the pairwise rule: an overlap is reported exactly when
    two rectangles share positive area, and the pair it names is one of them."""
    w, h = tuple(r[0] for r in rects), tuple(r[1] for r in rects)
    x, y = tuple(r[2] for r in rects), tuple(r[3] for r in rects)
    p = Packing(w, h, x, y, 20, 20)
    pairs = {
        (j, k)
        for k in range(len(rects))
        for j in range(k)
        if x[j] < x[k] + w[k] and x[k] < x[j] + w[j] and y[j] < y[k] + h[k] and y[k] < y[j] + h[j]
    }
    errs = verify_packing(p)
    assert bool(errs) == bool(pairs)
    if errs:
        j, k = (int(t) for t in errs[0].split()[1::2])
        assert (j, k) in pairs
