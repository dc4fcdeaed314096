"""Heaps over flat arrays for the compiled ``route-online`` loop (:mod:`kvopt.policy.routekernel`).

Plain Python on numpy arrays, so that Numba can compile them: the kernel compiles these
functions (inlined into its loop) next to its own, and this module imports no Numba.
Both heaps are 4-ary, ordered by ``(key, second key)``:

* an *indexed* heap ``H`` (rows: key, second key, job) whose entries' places are kept in a
  row of ``P`` (one entry a job: the engine's attempt ends, the slot host's expected ends);
* a *list* heap ``hk, hj`` (key, job) of ``S[HN]`` entries (Rect's queue).
"""

from __future__ import annotations

import numpy as np

#: the slot of the scalar state array ``S`` that holds the list heap's size
HN = 6


def _grow(a, need):
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    b[: a.shape[0]] = a
    return b


def _isift(H, P, row, i, a, b, j, m):
    """Put ``(a, b)`` of job ``j`` in the hole ``i`` of the 4-ary heap ``H`` (rows: key,
    second key, job) of ``m`` entries, moving it up or down; ``P[row, job]`` is each job's
    place (one entry a job: the running attempts)."""
    while i > 0:
        p = (i - 1) >> 2
        if a < H[0, p] or (a == H[0, p] and b < H[1, p]):
            H[0, i] = H[0, p]
            H[1, i] = H[1, p]
            H[2, i] = H[2, p]
            P[row, H[2, i]] = i
            i = p
        else:
            break
    while True:
        c = 4 * i + 1
        if c >= m:
            break
        bc, bk, bb = c, H[0, c], H[1, c]
        e = min(c + 4, m)
        for q in range(c + 1, e):
            if H[0, q] < bk or (H[0, q] == bk and H[1, q] < bb):
                bc, bk, bb = q, H[0, q], H[1, q]
        if bk < a or (bk == a and bb < b):
            H[0, i] = bk
            H[1, i] = bb
            H[2, i] = H[2, bc]
            P[row, H[2, i]] = i
            i = bc
        else:
            break
    H[0, i] = a
    H[1, i] = b
    H[2, i] = j
    P[row, j] = i


def _ipush(H, P, row, S, size, a, b, j):
    i = S[size]
    S[size] = i + 1
    _isift(H, P, row, i, a, b, j, i + 1)


def _iremove(H, P, row, S, size, j):
    i = P[row, j]
    m = S[size] - 1
    S[size] = m
    if i != m:
        _isift(H, P, row, i, H[0, m], H[1, m], H[2, m], m)


def _hpush(hk, hj, S, k, j):
    """Push ``(k, j)`` on the 4-ary heap ``hk, hj`` of ``S[HN]`` entries."""
    i = S[HN]
    S[HN] = i + 1
    while i > 0:
        p = (i - 1) >> 2
        pk = hk[p]
        pj = hj[p]
        if k < pk or (k == pk and j < pj):
            hk[i] = pk
            hj[i] = pj
            i = p
        else:
            break
    hk[i] = k
    hj[i] = j


def _hpop(hk, hj, S):
    """Remove the smallest ``(k, j)`` of the 4-ary heap (the keys are distinct: one entry a job)."""
    m = S[HN] - 1
    S[HN] = m
    if m == 0:
        return
    k = hk[m]
    j = hj[m]
    i = 0
    while True:
        c = 4 * i + 1
        if c >= m:
            break
        b, bk, bj = c, hk[c], hj[c]
        e = min(c + 4, m)
        for q in range(c + 1, e):
            qk = hk[q]
            if qk < bk or (qk == bk and hj[q] < bj):
                b, bk, bj = q, qk, hj[q]
        if bk < k or (bk == k and bj < j):
            hk[i] = bk
            hj[i] = bj
            i = b
        else:
            break
    hk[i] = k
    hj[i] = j


__all__ = ["HN"]
