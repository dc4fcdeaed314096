"""The time-indexed integer program of SPEC §5 as numpy matrices, and its LP windows.

This is the default IP path (solved by :mod:`kvopt.exact.backends.highs`, with the
``highspy`` glue of :mod:`kvopt.exact.backends.highs_glue`); the model is written out
in ``models/time-indexed.md`` and mirrored, constraint for constraint, by the
readable Pyomo reference in :mod:`kvopt.exact.backends.pyomo_model`.

Columns: ``x_{g,t}`` for each *group* ``g`` of identical jobs (same prompt,
response and arrival; the aggregation of ``models/time-indexed.md`` §4.3,
``aggregate=False`` gives one group per job) and each start ``t`` in the
group's window; ``x_{g,t}`` is the number of the group's jobs that start at
``t`` (binary for singleton groups).  For makespan one more column ``z``
(and no aggregation: ``z ≥ C_i`` is per job).

Rows: ``Σ_t x_{g,t} = |g|`` per group; per round ``τ`` the memory row
``Σ_g Σ_{t=τ−o_g+1…τ} (s_g + τ − t + 1) x_{g,t} ≤ M``; for each ``k`` in
``cuts`` the rounded row ``Σ (⌈(k+1)(s_g + τ − t + 1)/M⌉ − 1) x_{g,t} ≤ k``
(``models/time-indexed.md`` §4.2); with a batch cap ``B`` (``max_batch``, SPEC §10.1)
the count row ``Σ_g Σ_{t=τ−o_g+1…τ} x_{g,t} ≤ B`` per round (§13); for makespan
``z − Σ_t (t + o_i) x_{i,t} ≥ 0`` per job (``z`` may be given bounds with ``z_bounds``).

The LP helpers (:func:`lp_value`, :func:`lp_windows`, the prices and the fixing of
:mod:`kvopt.exact.bounds`) build the model without the count rows: a relaxation of the
capped model, so their values stay lower bounds under a cap (``models/time-indexed.md`` §13).

:func:`lp_value` is the LP relaxation's value (``kvopt bound --lp``) and
:func:`lp_windows` tightens the start windows with it (§4.1).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ...errors import SolverError
from ...instance import Instance
from ..common import start_windows
from .highs_glue import run_highs, to_highs

#: The rounded memory rows added by default (``k`` of models/time-indexed.md §4.2).
DEFAULT_CUTS: tuple[int, ...] = (1,)


@dataclass(frozen=True)
class MatrixModel:
    """The time-indexed model in column-wise sparse form (HiGHS ``HighsLp`` layout)."""

    n_cols: int
    n_rows: int
    col_cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray  # 1 integer, 0 continuous
    row_lower: np.ndarray
    row_upper: np.ndarray
    a_start: np.ndarray  # CSC column starts, length n_cols + 1
    a_index: np.ndarray
    a_value: np.ndarray
    col_group: np.ndarray  # group of each x column (-1 for z)
    col_start: np.ndarray  # start round of each x column
    groups: tuple[tuple[int, ...], ...]  # job indices of each group, ascending
    objective: str
    responses: np.ndarray  # o_i per job (for decoding and warm starts)
    horizon: int  # number of rounds with a memory row
    cuts: tuple[int, ...]  # the k of the rounded rows
    max_batch: int | None = None  # the batch cap of the count rows (None: no count rows)

    def z_completion(self, starts: np.ndarray) -> int:
        """Makespan of ``starts`` (for the ``z`` column of a warm start)."""
        return int(
            max(
                (int(starts[j]) + int(self.responses[j]) for g in self.groups for j in g), default=0
            )
        )

    def starts_from(self, x: np.ndarray, n: int) -> np.ndarray:
        """Decode a (near-)integral solution into per-job starts (group jobs in index order)."""
        starts = np.full(n, -1, dtype=np.int64)
        xv = np.rint(np.asarray(x)[: len(self.col_group)]).astype(np.int64)
        for g, jobs in enumerate(self.groups):
            sel = np.flatnonzero((self.col_group == g) & (xv > 0))
            ts = np.repeat(self.col_start[sel], xv[sel])
            ts.sort()
            if len(ts) != len(jobs):
                raise SolverError(f"solution assigns {len(ts)} starts to a group of {len(jobs)}")
            starts[list(jobs)] = ts
        return starts


def job_groups(inst: Instance, aggregate: bool = True) -> tuple[tuple[int, ...], ...]:
    """Identical jobs (same prompt, response, arrival) grouped, in order of first index."""
    if not aggregate:
        return tuple((i,) for i in range(inst.n))
    seen: dict[tuple[int, int, int], list[int]] = {}
    for i in range(inst.n):
        key = (int(inst.prompts[i]), int(inst.responses[i]), int(inst.arrivals[i]))
        seen.setdefault(key, []).append(i)
    return tuple(tuple(v) for v in seen.values())


def build_matrix(
    inst: Instance,
    objective: str,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    aggregate: bool = True,
    z_bounds: tuple[float, float] | None = None,
    cuts: tuple[int, ...] = DEFAULT_CUTS,
    max_batch: int | None = None,
) -> MatrixModel:
    """Build the time-indexed model over start windows ``[lo_i, hi_i]`` (see module doc);
    ``max_batch`` adds the count rows of the batch cap (the backends pass the instance's)."""
    M = inst.memory
    # makespan needs z >= C_i per job, which does not aggregate: one group per job there
    groups = job_groups(inst, aggregate and objective == "total")
    G = len(groups)
    rep = np.array([g[0] for g in groups], dtype=np.int64)
    size = np.array([len(g) for g in groups], dtype=np.int64)
    s, o = inst.prompts[rep], inst.responses[rep]
    glo = np.array([int(lo[list(g)].max()) for g in groups], dtype=np.int64)
    ghi = np.array([int(hi[list(g)].min()) for g in groups], dtype=np.int64)
    if np.any(ghi < glo):
        # an empty window: the caller's upper bound is below what the model allows
        raise SolverError("empty start window (the upper bound used for the horizon is invalid)")
    cnt = ghi - glo + 1
    col_group = np.repeat(np.arange(G), cnt)
    first = np.concatenate([[0], np.cumsum(cnt)])
    col_t = glo[col_group] + (np.arange(first[-1]) - first[:-1][col_group])
    nx = int(first[-1])
    H = int((ghi + o).max()) if G else 0
    # memory entries of column k: rows G + t + u, value s + u + 1, u = 0 … o-1;
    # then, for each k in ``cuts``, the rounded row of block b: rows G + b·H + t + u with
    # value ⌈(k+1)(s+u+1)/M⌉ − 1 (kept only where non-zero); with a cap, the last block
    # counts the jobs running (value 1)
    oc = o[col_group]
    ks = (0,) + tuple(cuts)
    nblk = len(ks) + (max_batch is not None)
    nnz_mem = oc * nblk  # per column (zeros dropped later)
    per_col = 1 + nnz_mem + (1 if objective == "makespan" else 0)
    a_start = np.concatenate([[0], np.cumsum(per_col)]).astype(np.int64)
    total = int(a_start[-1])
    a_index = np.empty(total, dtype=np.int32)
    a_value = np.empty(total, dtype=np.float64)
    # position of the assignment entry
    a_index[a_start[:-1]] = col_group
    a_value[a_start[:-1]] = 1.0
    # memory entries, vectorised with a ragged arange
    base = a_start[:-1] + 1
    ridx = np.repeat(np.arange(nx), nnz_mem)
    q = np.arange(int(nnz_mem.sum())) - np.repeat(np.cumsum(nnz_mem) - nnz_mem, nnz_mem)
    pos = base[ridx] + q
    blk, u = np.divmod(q, oc[ridx])
    w = s[col_group][ridx] + u + 1
    kk = np.asarray(ks + (0,) * (nblk - len(ks)), dtype=np.int64)[blk]
    a_index[pos] = G + blk * H + col_t[ridx] + u
    val = np.where(blk == 0, w, -(-(kk + 1) * w // M) - 1)
    if max_batch is not None:
        val = np.where(blk == len(ks), 1, val)
    a_value[pos] = val.astype(np.float64)
    n_rows = G + nblk * H
    limits = (M,) + tuple(cuts) + (() if max_batch is None else (int(max_batch),))
    caps = np.repeat(np.asarray(limits, dtype=np.float64), H)
    row_lower = np.concatenate([size.astype(np.float64), np.full(nblk * H, -np.inf)])
    row_upper = np.concatenate([size.astype(np.float64), caps])
    col_cost = (col_t + oc).astype(np.float64) * (1.0 if objective == "total" else 0.0)
    col_lower = np.zeros(nx)
    col_upper = size[col_group].astype(np.float64)
    integrality = np.ones(nx, dtype=np.int32)
    if objective == "makespan":
        # one linking row per job: z - Σ_t (t + o_i) x_{i,t} >= 0 (groups are singletons here)
        zrow0 = n_rows
        pos = a_start[1:] - 1
        a_index[pos] = zrow0 + col_group
        a_value[pos] = -(col_t + oc).astype(np.float64)
        n_rows += G
        row_lower = np.concatenate([row_lower, np.zeros(G)])
        row_upper = np.concatenate([row_upper, np.full(G, np.inf)])
        a_start = np.concatenate([a_start, [total + G]])
        a_index = np.concatenate([a_index, np.arange(zrow0, zrow0 + G, dtype=np.int32)])
        a_value = np.concatenate([a_value, np.ones(G)])
        zl, zu = z_bounds if z_bounds is not None else (0.0, np.inf)
        col_cost = np.concatenate([col_cost, [1.0]])
        col_lower = np.concatenate([col_lower, [zl]])
        col_upper = np.concatenate([col_upper, [zu]])
        integrality = np.concatenate([integrality, [0]]).astype(np.int32)
        col_group = np.concatenate([col_group, [-1]])
        col_t = np.concatenate([col_t, [-1]])
    if cuts:  # drop the zero entries of the rounded rows
        keep = a_value != 0
        col_of = np.repeat(np.arange(len(a_start) - 1), np.diff(a_start))
        a_index, a_value = a_index[keep], a_value[keep]
        a_start = np.concatenate(
            [[0], np.cumsum(np.bincount(col_of[keep], minlength=len(a_start) - 1))]
        )
    return MatrixModel(
        n_cols=len(col_cost),
        n_rows=n_rows,
        col_cost=col_cost,
        col_lower=col_lower,
        col_upper=col_upper,
        integrality=integrality,
        row_lower=row_lower,
        row_upper=row_upper,
        a_start=a_start,
        a_index=a_index,
        a_value=a_value,
        col_group=col_group,
        col_start=col_t,
        groups=groups,
        objective=objective,
        responses=inst.responses,
        horizon=H,
        cuts=tuple(cuts),
        max_batch=None if max_batch is None else int(max_batch),
    )


def warm_values(model: MatrixModel, starts: np.ndarray) -> np.ndarray | None:
    """Column values of the kill-free schedule ``starts`` (``None`` if outside the windows)."""
    x = np.zeros(model.n_cols)
    key = {}
    for k, (g, t) in enumerate(zip(model.col_group, model.col_start)):
        if g >= 0:
            key[(int(g), int(t))] = k
    for g, jobs in enumerate(model.groups):
        for i in jobs:
            k = key.get((g, int(starts[i])))
            if k is None:
                return None
            x[k] += 1
    if model.objective == "makespan":
        x[-1] = max(float(model.col_lower[-1]), float(model.z_completion(starts)))
    return x


def lp_value(inst: Instance, lo: np.ndarray, hi: np.ndarray, time_limit: float = 60.0) -> float:
    """Optimal value of the LP relaxation of the time-indexed model (total completion)."""
    model = build_matrix(inst, "total", lo, hi)
    h = to_highs(model, relax=True)
    native, _, interrupted = run_highs(h, time_limit=time_limit, threads=1, seed=0, gap=0.0)
    if interrupted:
        raise KeyboardInterrupt
    if native != "Optimal":
        raise SolverError(
            f"LP relaxation not solved within {time_limit:g} s (HiGHS: {native}); "
            "raise --time-limit"
        )
    return float(h.getInfo().objective_function_value)


def lp_windows(
    inst: Instance, ub: int, lo: np.ndarray, hi: np.ndarray, *, seconds: float
) -> np.ndarray:
    """Tighter window ends for total completion: ``C_i ≤ UB − ⌈LP(J∖{i})⌉``.

    An optimal schedule ``σ*`` has value ``≤ UB``; without job ``i`` it is a
    schedule of the other jobs of value ``≤ UB − (a_i + o_i)``, so it lies in
    their windows for that bound and their LP value is ``≤ Σ_{j≠i} C*_j``.
    Hence ``C*_i ≤ UB − ⌈LP(J∖{i})⌉`` (``models/time-indexed.md`` §4.1).  Stops
    after ``seconds`` (the ends computed so far are kept); any failure leaves
    a job's end unchanged.  Identical jobs (same prompt, response, arrival) leave the
    same instance behind, so the LP is solved once per group of them (on a typed
    instance at most four LPs instead of ``n``).
    """
    n = inst.n
    hi = np.asarray(hi).copy()
    deadline = time.monotonic() + seconds
    caps: dict[tuple[int, int, int], int] = {}
    for i in np.argsort(-(hi - np.asarray(lo)), kind="stable"):  # widest windows first
        if time.monotonic() > deadline or n < 2:
            break
        key = (int(inst.prompts[i]), int(inst.responses[i]), int(inst.arrivals[i]))
        if key not in caps:
            rest = inst.subset([j for j in range(n) if j != i])
            try:
                rlo, rhi = start_windows(
                    rest, "total", ub - int(inst.arrivals[i] + inst.responses[i])
                )
                value = lp_value(rest, rlo, rhi, time_limit=max(deadline - time.monotonic(), 0.05))
            except SolverError:  # Ctrl-C is raised to the caller, which reports what it has
                break
            caps[key] = ub - int(np.ceil(value - 1e-6))
        hi[i] = max(min(hi[i], caps[key] - int(inst.responses[i])), int(lo[i]))
    return hi
