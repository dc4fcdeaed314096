"""The compiled kernel of the branch and bound (Numba, the ``fast`` extra): the search of
:mod:`kvopt.exact.bnb.search` as one loop over an explicit stack (see
:mod:`kvopt.exact.bnb.compiled`, which runs it), its helpers, and the slots it shares
with the calling thread.  Comments ``[rule <ID>]`` tag each pruning rule with the ID it has in
the Python search (:data:`kvopt.exact.bnb.search.RULES`).
"""

from __future__ import annotations

import numpy as np

from .search import MAX_N  # noqa: F401  (the kernel's bound on n: its placed set is one int64)

try:  # the optional ``fast`` extra
    import numba as _numba
except ImportError:  # pragma: no cover - exercised where numba is not installed
    _numba = None

#: control slots shared with the compiled search: stop (set to 1 to stop), a racing
#: solver's value (the search prunes at >= it), nodes so far, the next task to claim
#: (two threads), then one slot per thread: the value of its best leaf, then one per thread:
#: the task it searches (the number of tasks once it took the last)
_STOP, _OUTSIDE, _NODES, _CLAIM, _BEST0 = range(5)

# return codes of the kernel
_DONE, _STOPPED = 0, 1


def _kernel_source(
    n,
    M,
    H,
    o,
    lims,
    a,
    hi,
    pred,
    stair,
    gm,
    dslack,
    bsuf,
    sufmin,
    rc,
    dd,
    start,
    best_starts,
    best_in,
    memo_limit,
    node_limit,
    ctl,
    check_every,
    mode,
    depth,
    paths,
    n_paths,
    tid,
    nthreads,
):
    """The search (see the module doc) over ``_Search``'s data as arrays: per job ``o``,
    ``lims``, ``a``, ``hi``, ``pred``, and ``stair[j, u] = s_j + 1 + u``; the profile ``gm``
    and the priced slack ``dslack`` (changed in place); ``bsuf``, ``sufmin``, ``rc`` and
    ``dd[j, t, u]`` as ``_Search.set_duals`` builds them; ``start`` (−1: not placed) and
    ``best_starts`` (written at each better leaf); it prunes at ``≥ best_in``, and ``ctl``
    holds the control slots.

    ``mode`` 0 is the serial search.  Mode 1 (:func:`run_compiled` with two threads)
    records each node at ``depth`` that its bound does not prune as a task, in ``paths``:
    its path ``(job, start)`` per depth, then its bound, instead of searching below it.
    Mode 2 claims tasks (slot ``_CLAIM``; thread ``tid``'s current one in slot
    ``_BEST0 + nthreads + tid``) and searches each from the root along its path: the
    path's nodes are entered
    without the memo and with the path's child as their only one (every rule that
    prunes there prunes the task soundly).  Thread ``tid`` of ``nthreads`` publishes
    each better leaf's value in slot ``_BEST0 + tid`` and prunes with the others'.
    Returns (code, nodes, best value, memo states, paths, tasks recorded)."""
    full = (np.int64(1) << n) - 1
    maxo = stair.shape[1]
    D = n + 1
    # --- frames: the node at depth d (d jobs placed) ----------------------------------
    f_placed = np.zeros(D, np.int64)
    f_t = np.zeros(D, np.int64)
    f_last = np.full(D, -1, np.int64)
    f_cost = np.zeros(D, np.int64)
    f_end = np.zeros(D, np.int64)
    est = np.zeros((D, n), np.int64)  # the node's earliest starts (its children's pest)
    past = np.zeros((D, n), np.int64)  # the node's past (its children's)
    ka_k = np.zeros((D, n + 1), np.int64)  # keep_after: the jobs placed that could move
    ka_p = np.zeros((D, n + 1), np.int64)
    ka_c = np.zeros(D, np.int64)
    nk_max = n * (H + 2) + 1
    kid_key = np.zeros((D, nk_max), np.int64)
    kid_n = np.zeros(D, np.int64)
    kid_i = np.zeros(D, np.int64)
    saved_gm = np.zeros((D, maxo), np.int64)
    saved_d = np.zeros((D, maxo), np.float64)
    root_pest = a.copy()
    root_past = a.copy()
    todo = np.zeros(n, np.int64)
    pend_k = np.zeros(n + 1, np.int64)
    pend_p = np.zeros(n + 1, np.int64)
    pre = np.zeros(H + 3, np.float64)
    rest = np.zeros(n, np.int64)
    # --- memo: open addressing over flat arrays ---------------------------------------
    cap = 1 << 12
    slots = np.full(cap, -1, np.int64)
    e_hash = np.zeros(cap, np.uint64)
    e_placed = np.zeros(cap, np.int64)
    e_tmin = np.zeros(cap, np.int64)
    e_pstart = np.zeros(cap, np.int64)
    e_plen = np.zeros(cap, np.int64)
    e_rec = np.zeros(cap, np.int64)
    n_keys = 0
    prof = np.zeros(cap * 8, np.int64)
    n_prof = 0
    r_t = np.zeros(cap, np.int64)
    r_last = np.zeros(cap, np.int64)
    r_cost = np.zeros(cap, np.int64)
    r_next = np.zeros(cap, np.int64)
    n_rec = 0

    best = best_in
    nodes = 0
    key_mult = np.int64(n) * np.int64(H + 2)
    d = -1
    entering = True
    f_placed[0] = 0
    f_t[0] = 0
    f_last[0] = -1
    f_cost[0] = 0
    f_end[0] = 0
    task = -1
    while True:
        if d < 0:  # the tree (mode 0, 1) or the task (mode 2) is searched: the next one
            if mode != 2:
                if task >= 0:
                    break
                task = 0
            else:
                if ctl[_STOP] != 0:
                    return _STOPPED, nodes, best, n_keys, paths, n_paths
                task = _fetch_add(ctl, _CLAIM, 1)
                if task >= n_paths:
                    ctl[_BEST0 + nthreads + tid] = n_paths
                    break
                ctl[_BEST0 + nthreads + tid] = task  # the task this thread searches
            d = 0
            entering = True
        if not entering:
            # ---- the next child of the node at depth d ----
            i = kid_i[d]
            if i > 0:  # undo the child just searched
                key = kid_key[d, i - 1]
                j = key % n
                t2 = (key // n) % (H + 2)
                c = t2 + o[j]
                for u in range(c - t2):
                    gm[t2 + u] = saved_gm[d, u]
                    dslack[t2 + u] = saved_d[d, u]
                start[j] = -1
            if i >= kid_n[d]:
                d -= 1
                continue
            key = kid_key[d, i]
            quick = key // key_mult
            if quick >= best:
                kid_n[d] = i  # nothing was placed for this one: pop without undoing
                kid_i[d] = i
                d -= 1
                continue
            j = key % n
            t2 = (key // n) % (H + 2)
            c = t2 + o[j]
            for u in range(c - t2):
                saved_gm[d, u] = gm[t2 + u]
                gm[t2 + u] += stair[j, u]
                saved_d[d, u] = dslack[t2 + u]
                dslack[t2 + u] -= dd[j, t2, u]
            start[j] = t2
            kid_i[d] = i + 1
            d1 = d + 1
            f_placed[d1] = f_placed[d] | (np.int64(1) << j)
            f_t[d1] = t2
            f_last[d1] = j
            f_cost[d1] = f_cost[d] + c
            f_end[d1] = c if c > f_end[d] else f_end[d]
            d = d1
            entering = True
            continue

        # ---- entering the node at depth d ----
        entering = False
        path = mode == 2 and d < depth
        if not path:
            nodes += 1
        if nodes % check_every == 0 and not path:
            ctl[_NODES] = nodes
            if ctl[_STOP] != 0:
                return _STOPPED, nodes, best, n_keys, paths, n_paths
            if node_limit >= 0 and nodes > node_limit:
                return _STOPPED, nodes, best, n_keys, paths, n_paths
            if ctl[_OUTSIDE] < best:
                best = ctl[_OUTSIDE]
            for q in range(nthreads):
                if ctl[_BEST0 + q] < best:
                    best = ctl[_BEST0 + q]
        placed = f_placed[d]
        t = f_t[d]
        last = f_last[d]
        cost = f_cost[d]
        end = f_end[d]
        # the pending jobs: the parent's keep_after, then the job just placed
        npend = 0
        if d > 0:
            for q in range(ka_c[d - 1]):
                pend_k[npend] = ka_k[d - 1, q]
                pend_p[npend] = ka_p[d - 1, q]
                npend += 1
            pend_k[npend] = last
            pend_p[npend] = -1
            npend += 1
        if placed == full:  # [rule leaf-active]
            moved = False
            for q in range(npend):
                if _first_move(pend_k[q], pend_p[q], start, gm, o, lims, a, M) >= 0:
                    moved = True
                    break
            if not moved and cost < best:
                best = cost
                for q in range(n):
                    best_starts[q] = start[q]
                ctl[_BEST0 + tid] = cost
            d -= 1
            continue
        if d > 0:
            pest = est[d - 1]
            ppast = past[d - 1]
        else:
            pest = root_pest
            ppast = root_past
        e_ = est[d]
        bm1 = best - 1
        free = t + o[last] if last >= 0 else H + 2
        nrest = 0
        ntodo = 0
        lag = 0.0
        t0 = H
        for j in range(n):
            if (placed >> j) & 1:
                continue
            rest[nrest] = j
            nrest += 1
            t2 = pest[j]
            if t2 <= t:
                t2 = t + 1 if j < last else t
                todo[ntodo] = j
                ntodo += 1
            elif t2 < free:
                todo[ntodo] = j
                ntodo += 1
            e_[j] = t2
            if t2 < t0:
                t0 = t2
            lag += sufmin[j, t2]
        if t0 < end:
            ssum = 0.0
            for u in range(t0, end):
                ssum += dslack[u]
            lag += cost + (ssum + bsuf[end])
        else:
            lag += cost + bsuf[t0]
        if lag > bm1:  # [rule lagrange-node]
            d -= 1
            continue
        tmin = t0
        dead = False
        for q in range(ntodo - 1, -1, -1):
            j = todo[q]
            t2 = _first_fit(gm, e_[j], o[j], lims[j], hi[j] + 1)
            if t2 > hi[j]:  # [rule window]
                dead = True
                break
            if t2 > e_[j]:
                lag += sufmin[j, t2] - sufmin[j, e_[j]]
                if lag > bm1:
                    dead = True
                    break
                if e_[j] == t0:
                    tmin = -1
                e_[j] = t2
        if dead:
            d -= 1
            continue
        if tmin < 0:
            tmin = H + 10
            for q in range(nrest):
                if e_[rest[q]] < tmin:
                    tmin = e_[rest[q]]
            if tmin > t0:
                ssum = 0.0
                for u in range(t0, tmin):
                    ssum += dslack[u]
                lag -= ssum
                if lag > bm1:
                    d -= 1
                    continue
        if mode == 1 and d == depth:  # record the task; its subtree is searched in mode 2
            stride = 2 * depth + 1
            if (n_paths + 1) * stride > paths.shape[0]:
                paths = _grow(paths)
            pb = n_paths * stride
            for q in range(depth):
                paths[pb + 2 * q] = f_last[q + 1]
                paths[pb + 2 * q + 1] = f_t[q + 1]
            # the task's bound: no schedule below it holds less (the node's Lagrangian value,
            # exact in floating point, and the parent's quick bound of this child)
            tb = np.int64(np.ceil(lag))
            qb = kid_key[d - 1, kid_i[d - 1] - 1] // key_mult
            paths[pb + 2 * depth] = tb if tb > qb else qb
            n_paths += 1
            d -= 1
            continue
        # the active rule for the jobs left [rule active-left]
        limit = H + 1
        pa = past[d]
        for q in range(n):
            pa[q] = ppast[q]
        for q in range(nrest):
            j = rest[q]
            p = pa[j]
            if p >= t:
                continue
            oj = o[j]
            p = _first_fit(gm, p, oj, lims[j], t)
            pa[j] = p
            if p < t:
                e2 = p + oj
                if e2 <= t:
                    dead = True
                    break
                if e2 < limit:
                    limit = e2
        if dead:
            d -= 1
            continue
        # ---- memo, [rule memo] (not at a task's path nodes: entered again for each task) ----
        if not path:
            plen = end - tmin if end > tmin else 0
            h = np.uint64(placed) * np.uint64(0x9E3779B97F4A7C15)
            h ^= np.uint64(tmin) * np.uint64(0xC2B2AE3D27D4EB4F)
            for u in range(plen):
                h = (h ^ np.uint64(gm[tmin + u])) * np.uint64(0x100000001B3)
            mask = np.uint64(slots.shape[0] - 1)
            s = np.int64(h & mask)
            found = -1
            while slots[s] >= 0:
                ei = slots[s]
                if (
                    e_hash[ei] == h
                    and e_placed[ei] == placed
                    and e_tmin[ei] == tmin
                    and e_plen[ei] == plen
                ):
                    same = True
                    ps = e_pstart[ei]
                    for u in range(plen):
                        if prof[ps + u] != gm[tmin + u]:
                            same = False
                            break
                    if same:
                        found = ei
                        break
                s = np.int64((np.uint64(s) + np.uint64(1)) & mask)
            if found >= 0:
                dropped = False
                ri = e_rec[found]
                while ri >= 0:
                    if r_cost[ri] <= cost and (
                        r_t[ri] < tmin or (r_t[ri] == t and r_last[ri] <= last)
                    ):
                        dropped = True
                        break
                    ri = r_next[ri]
                if dropped:
                    d -= 1
                    continue
            else:
                if n_keys >= memo_limit:  # forgetting states only weakens the pruning
                    slots[:] = -1
                    n_keys = 0
                    n_prof = 0
                    n_rec = 0
                    s = np.int64(h & mask)
                elif 2 * (n_keys + 1) > slots.shape[0]:  # keep the table at most half full
                    slots = np.full(2 * slots.shape[0], -1, np.int64)
                    mask = np.uint64(slots.shape[0] - 1)
                    for ei in range(n_keys):
                        s2 = np.int64(e_hash[ei] & mask)
                        while slots[s2] >= 0:
                            s2 = np.int64((np.uint64(s2) + np.uint64(1)) & mask)
                        slots[s2] = ei
                    s = np.int64(h & mask)
                    while slots[s] >= 0:
                        s = np.int64((np.uint64(s) + np.uint64(1)) & mask)
                if n_keys >= e_hash.shape[0]:
                    e_hash = _grow(e_hash)
                    e_placed = _grow(e_placed)
                    e_tmin = _grow(e_tmin)
                    e_pstart = _grow(e_pstart)
                    e_plen = _grow(e_plen)
                    e_rec = _grow(e_rec)
                while n_prof + plen > prof.shape[0]:
                    prof = _grow(prof)
                found = n_keys
                n_keys += 1
                slots[s] = found
                e_hash[found] = h
                e_placed[found] = placed
                e_tmin[found] = tmin
                e_plen[found] = plen
                e_pstart[found] = n_prof
                e_rec[found] = -1
                for u in range(plen):
                    prof[n_prof + u] = gm[tmin + u]
                n_prof += plen
            # remember (t, last, cost) for this state (a new one, or one no record dominates)
            if n_rec >= r_t.shape[0]:
                r_t = _grow(r_t)
                r_last = _grow(r_last)
                r_cost = _grow(r_cost)
                r_next = _grow(r_next)
            r_t[n_rec] = t
            r_last[n_rec] = last
            r_cost[n_rec] = cost
            r_next[n_rec] = e_rec[found]
            e_rec[found] = n_rec
            n_rec += 1
        # ---- the active rule for the jobs placed earlier [rule active-placed] ----
        nka = 0
        for q in range(npend):
            k = pend_k[q]
            p = _first_move(k, pend_p[q], start, gm, o, lims, a, M)
            if p >= 0:
                if p + o[k] < limit:
                    limit = p + o[k]
                ka_k[d, nka] = k
                ka_p[d, nka] = p
                nka += 1
        ka_c[d] = nka
        if limit <= t:
            d -= 1
            continue
        # ---- children, in order of the quick bound ----
        pre[0] = 0.0
        acc = 0.0
        for u in range(tmin, limit):
            acc += dslack[u]
            pre[u - tmin + 1] = acc
        base = cost
        for q in range(nrest):
            base += e_[rest[q]] + o[rest[q]]
        nk = 0
        pj = -1
        pt = -1
        if path:  # a path node: its path child only
            pb = task * (2 * depth + 1) + 2 * d
            pj = paths[pb]
            pt = paths[pb + 1]
        for i in range(nrest):
            j = rest[i]
            if path and j != pj:
                continue
            p = pred[j]
            if p >= 0 and not ((placed >> p) & 1):  # [rule identical]
                continue
            ej = e_[j]
            top = hi[j] if hi[j] < limit else limit - 1
            lj = lag - sufmin[j, ej]
            first = ej
            if path:  # the quick bound grows with t2: its break is decided at pt alone
                if pt < ej or pt > top:
                    continue
                first = pt
                top = pt
            for t2 in range(first, top + 1):
                quick = base + t2 - ej
                lq = lj + rc[j, t2] - pre[t2 - tmin]
                e2 = t2 + 1
                for q in range(i):
                    k = rest[q]
                    ek = e_[k]
                    if ek < e2:
                        quick += e2 - ek
                        lq += sufmin[k, e2] - sufmin[k, ek]
                for q in range(i + 1, nrest):
                    k = rest[q]
                    ek = e_[k]
                    if ek < t2:
                        quick += t2 - ek
                        lq += sufmin[k, t2] - sufmin[k, ek]
                if quick >= best:  # [rule child-quick]
                    break
                if lq <= bm1:
                    if t2 != ej:
                        m, arg = _wmax(gm, t2, t2 + o[j])
                        if m > lims[j] + t2:
                            continue
                    kid_key[d, nk] = (quick * (H + 2) + t2) * n + j
                    nk += 1
        kid_key[d, :nk].sort()
        kid_n[d] = nk
        kid_i[d] = 0
    return _DONE, nodes, best, n_keys, paths, n_paths


def _wmax_source(gm, lo, hi):
    """(max, index of its first occurrence) of ``gm[lo:hi]`` (clipped like a Python slice)."""
    if hi > gm.shape[0]:
        hi = gm.shape[0]
    m = gm[lo]
    arg = lo
    for u in range(lo + 1, hi):
        if gm[u] > m:
            m = gm[u]
            arg = u
    return m, arg


def _first_fit_source(gm, p, oj, lim, stop):
    """The first start ``≥ p`` where a job of ``oj`` rounds and limit ``lim`` fits on the
    profile, or the first one found ``≥ stop``: a failed start jumps to where the fullest
    round of its window could fit (``_Search.dfs``'s earliest-start walk, as
    :func:`kvopt.exact.common.first_fit`)."""
    while p < stop:
        m, arg = _wmax(gm, p, p + oj)
        if m <= lim + p:
            return p
        tau = arg + 1
        p = m - lim if m - lim < tau else tau
    return p


def _first_move_source(k, p0, start, gm, o, lims, a, M):
    """``_Search.first_move`` (the earliest start before its own where ``k`` fits)."""
    sk = start[k]
    ok = o[k]
    lim = lims[k]
    p = a[k] if a[k] > p0 else p0
    while p < sk:
        e = p + ok
        m, arg = _wmax(gm, p, e if e < sk else sk)
        if m > lim + p:
            tau = arg + 1
            p = m - lim if m - lim < tau else tau
        elif e <= sk:
            return p
        else:
            top = e if e < gm.shape[0] else gm.shape[0]
            mm = gm[sk] - sk
            for u in range(sk + 1, top):
                if gm[u] - u > mm:
                    mm = gm[u] - u
            if mm <= M - sk + p:
                return p
            p = mm - M + sk
    return -1


def _grow_source(x):
    y = np.zeros(2 * x.shape[0], x.dtype)
    y[: x.shape[0]] = x
    return y


def _fetch_add_intrinsic():
    """``_fetch_add(a, i, v)``: add ``v`` to the int64 ``a[i]`` atomically, return the old
    value (an LLVM ``atomicrmw``; the two threads claim tasks with it)."""
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def fetch_add(typingctx, a, i, v):
        sig = types.int64(a, types.intp, types.int64)

        def codegen(context, builder, signature, args):
            arr = context.make_array(signature.args[0])(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, signature.args[0], arr, [args[1]])
            return builder.atomic_rmw("add", ptr, args[2], "seq_cst")

        return sig, codegen

    return fetch_add


def _compile(cache: bool):
    jit = _numba.njit(cache=cache, nogil=True)
    return (
        jit(_wmax_source),
        jit(_first_fit_source),
        jit(_first_move_source),
        jit(_grow_source),
        jit(_kernel_source),
    )


if _numba is not None:
    _fetch_add = _fetch_add_intrinsic()
    # compiled once per machine (about 15 s) and cached next to this file, or in Numba's
    # user-wide cache when that is read-only; without any writable cache, once per process
    try:
        _wmax, _first_fit, _first_move, _grow, _kernel = _compile(cache=True)
    except RuntimeError:  # pragma: no cover - "no locator available": nowhere to cache
        _wmax, _first_fit, _first_move, _grow, _kernel = _compile(cache=False)
else:  # pragma: no cover
    _kernel = None
