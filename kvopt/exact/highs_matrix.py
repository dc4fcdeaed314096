"""The time-indexed integer program of SPEC §5, built with numpy and solved with ``highspy``.

This is the default IP path; the model is written out in
``models/time-indexed.md`` and mirrored, constraint for constraint, by the
readable Pyomo reference in :mod:`kvopt.exact.pyomo_model`.

Columns: ``x_{g,t}`` for each *group* ``g`` of identical jobs (same prompt,
response and arrival; the aggregation of ``models/time-indexed.md`` §4.3,
``aggregate=False`` gives one group per job) and each start ``t`` in the
group's window; ``x_{g,t}`` is the number of the group's jobs that start at
``t`` (binary for singleton groups).  For makespan one more column ``z``
(and no aggregation: ``z ≥ C_i`` is per job).

Rows: ``Σ_t x_{g,t} = |g|`` per group; per round ``τ`` the memory row
``Σ_g Σ_{t=τ−o_g+1…τ} (s_g + τ − t + 1) x_{g,t} ≤ M``; for each ``k`` in
``cuts`` the rounded row ``Σ (⌈(k+1)(s_g + τ − t + 1)/M⌉ − 1) x_{g,t} ≤ k``
(``models/time-indexed.md`` §4.2); for makespan ``z − Σ_t (t + o_i) x_{i,t} ≥ 0``
per job (``z`` may be given bounds with ``z_bounds``).
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from ..instance import Instance
from .common import RawResult, stdout_to_stderr

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
) -> MatrixModel:
    """Build the time-indexed model over start windows ``[lo_i, hi_i]`` (see module doc)."""
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
    # value ⌈(k+1)(s+u+1)/M⌉ − 1 (kept only where non-zero)
    oc = o[col_group]
    nblk = 1 + len(cuts)
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
    kk = np.asarray((0,) + tuple(cuts), dtype=np.int64)[blk]
    a_index[pos] = G + blk * H + col_t[ridx] + u
    a_value[pos] = np.where(blk == 0, w, -(-(kk + 1) * w // M) - 1).astype(np.float64)
    n_rows = G + nblk * H
    caps = np.repeat(np.asarray((M,) + tuple(cuts), dtype=np.float64), H)
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
    )


#: HiGHS model statuses (``h.modelStatusToString``) → how kvopt reads them.
#: ``finish()`` decides optimal/feasible from the checked objective and the bound;
#: this table only says whether the model was proven infeasible.
HIGHS_STATUS = {
    "Optimal": "optimal",
    "Infeasible": "infeasible",
    "Time limit reached": "stopped",
    "Interrupted by user": "stopped",
    "Solution limit reached": "stopped",
    "Iteration limit reached": "stopped",
    "Objective bound": "stopped",
    "Unknown": "unknown",
}


@functools.cache
def highs_version() -> str:
    import highspy

    with stdout_to_stderr(silence=True):  # the constructor prints a banner
        h = highspy.Highs()
    return f"{h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"


def to_highs(model: MatrixModel, *, relax: bool = False, names: bool = False):
    """A silent ``highspy.Highs`` holding ``model`` (integrality dropped when ``relax``)."""
    import highspy

    with stdout_to_stderr(silence=True):  # the constructor prints a banner
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    lp = highspy.HighsLp()
    lp.num_col_ = model.n_cols
    lp.num_row_ = model.n_rows
    lp.col_cost_ = model.col_cost
    lp.col_lower_ = model.col_lower
    lp.col_upper_ = model.col_upper
    inf = h.getInfinity()
    lp.row_lower_ = np.where(np.isfinite(model.row_lower), model.row_lower, -inf)
    lp.row_upper_ = np.where(np.isfinite(model.row_upper), model.row_upper, inf)
    lp.col_upper_ = np.where(np.isfinite(model.col_upper), model.col_upper, inf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = model.a_start.astype(np.int32)
    lp.a_matrix_.index_ = model.a_index.astype(np.int32)
    lp.a_matrix_.value_ = model.a_value
    if not relax:
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if v else highspy.HighsVarType.kContinuous
            for v in model.integrality
        ]
    if names:
        lp.col_names_ = [
            "z" if g < 0 else f"x_g{g}_t{t}" for g, t in zip(model.col_group, model.col_start)
        ]
        G = len(model.groups)
        H = model.horizon
        rn = [f"assign_g{g}" for g in range(G)] + [f"mem_t{t}" for t in range(H)]
        for k in model.cuts:
            rn += [f"round{k}_t{t}" for t in range(H)]
        if model.objective == "makespan":
            rn += [f"span_g{g}" for g in range(G)]
        lp.row_names_ = rn
    status = h.passModel(lp)
    if status != highspy.HighsStatus.kOk:
        raise SolverError(
            f"HiGHS rejected the model ({h.statusToString(status) if hasattr(h, 'statusToString') else status})"
        )
    return h


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


def run_highs(
    h,
    *,
    time_limit: float,
    threads: int,
    seed: int,
    gap: float,
    stop: threading.Event | None = None,
    grace: float = 0.35,
    defaults: bool = False,
    monitor=None,
) -> tuple[str, bool, bool]:
    """Run ``h`` in HiGHS's own thread; honour ``time_limit`` and ``stop`` even if HiGHS overruns.

    Returns ``(native_status, cancelled, interrupted)``.  ``KeyboardInterrupt``
    cancels the solve and waits for HiGHS to stop; the caller reports what was
    found and marks the result interrupted.
    """
    h.setOptionValue("time_limit", max(float(time_limit), 0.01))
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("random_seed", int(seed))
    if not defaults:  # the objective is integral: an absolute gap below 1 proves optimality
        h.setOptionValue("mip_rel_gap", float(gap))
        h.setOptionValue("mip_abs_gap", 0.999 if gap == 0 else 1e-6)
    import highspy

    # our own thread and interrupt flag: highspy's startSolve() uses class-level locks, so
    # one abandoned solve would block every later one in the process
    flag = {"stop": False}

    def on_interrupt(event):
        if (
            monitor is not None
            and event.callback_type == highspy.cb.HighsCallbackType.kCallbackMipInterrupt
        ):
            out = event.data_out
            monitor(out.mip_primal_bound, out.mip_dual_bound)
        if flag["stop"]:
            event.interrupt()

    h.cbSimplexInterrupt += on_interrupt
    h.cbIpmInterrupt += on_interrupt
    h.cbMipInterrupt += on_interrupt
    box: dict = {}

    def work():
        try:
            box["status"] = h.run()
        except BaseException as exc:  # noqa: BLE001 - reported in the caller's thread
            box["error"] = exc

    th = threading.Thread(target=work, daemon=True, name="kvopt-highs-run")
    deadline = time.monotonic() + float(time_limit) + grace
    cancelled = interrupted = False
    abandon_at = None
    with stdout_to_stderr():
        th.start()
        while th.is_alive():
            try:
                th.join(0.05)
                now = time.monotonic()
                if not cancelled and (now > deadline or (stop is not None and stop.is_set())):
                    flag["stop"] = cancelled = True
                    abandon_at = now + 2 * grace
                if abandon_at is not None and now > abandon_at and th.is_alive():
                    # HiGHS does not poll for interrupts in every phase (e.g. parts of
                    # presolve); leave its thread behind rather than overrun the limit
                    return "Abandoned (did not stop when asked)", True, interrupted
            except KeyboardInterrupt:
                flag["stop"] = cancelled = interrupted = True
                abandon_at = time.monotonic() + 2 * grace
    if "error" in box:
        raise SolverError(f"HiGHS failed: {box['error']}")
    native = h.modelStatusToString(h.getModelStatus())
    return native, cancelled, interrupted


def _solve_highs_here(
    inst: Instance,
    objective: str,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    warm: np.ndarray | None = None,
    time_limit: float = 60.0,
    threads: int = 1,
    seed: int = 0,
    gap: float = 0.0,
    stop: threading.Event | None = None,
    aggregate: bool = True,
    z_bounds: tuple[float, float] | None = None,
    cuts: tuple[int, ...] = DEFAULT_CUTS,
    defaults: bool = False,
    monitor=None,
    _retry: bool = True,
    _presolve: bool = True,
) -> RawResult:
    """Build and solve the time-indexed IP with HiGHS in this process.

    HiGHS's reported objective is compared with the cost of its solution's
    columns; on a mismatch (seen with a warm start on a model that presolve
    settles at once: HiGHS reported 10 for a solution of cost 13, and "Optimal")
    its bound and status are not trusted: the model is solved again without
    the warm start and without presolve, and if that also disagrees the bound
    is dropped.  A "Solve error" (seen: presolve reduces a tiny aggregated model
    to empty and postsolves it to an infeasible point, e.g. 6 jobs, M = 5,
    identical jobs grouped) is retried the same way.
    """
    t0 = time.monotonic()
    model = build_matrix(inst, objective, lo, hi, aggregate=aggregate, z_bounds=z_bounds, cuts=cuts)
    h = to_highs(model)
    if not _presolve:
        h.setOptionValue("presolve", "off")
    stats = {
        "columns": model.n_cols,
        "rows": model.n_rows,
        "nonzeros": int(len(model.a_value)),
        "groups": len(model.groups),
        "build_seconds": round(time.monotonic() - t0, 3),
    }
    if warm is not None:
        xv = warm_values(model, warm)
        if xv is not None:
            sol = highspy_solution(xv)
            h.setSolution(sol)
            stats["warm_start"] = True
    remaining = max(time_limit - (time.monotonic() - t0), 0.01)
    native, cancelled, interrupted = run_highs(
        h,
        time_limit=remaining,
        threads=threads,
        seed=seed,
        gap=gap,
        stop=stop,
        defaults=defaults,
        monitor=monitor,
    )
    if native.startswith("Abandoned"):
        return RawResult(
            None, None, native, "highs", highs_version(), interrupted=interrupted, stats=stats
        )
    info = h.getInfo()
    starts = None
    mismatch = False
    if info.primal_solution_status == 2:  # kSolutionStatusFeasible
        x = np.asarray(h.getSolution().col_value)
        starts = model.starts_from(x, inst.n)
        cost = float(model.col_cost @ x)
        reported = float(info.objective_function_value)
        mismatch = abs(cost - reported) > 1e-6 * max(1.0, abs(cost))
    solve_error = native == "Solve error"
    if (mismatch or solve_error) and _retry and not interrupted and not cancelled:
        left = time_limit - (time.monotonic() - t0)
        if left > 0.05:
            again = _solve_highs_here(
                inst,
                objective,
                lo,
                hi,
                warm=None,
                time_limit=left,
                threads=threads,
                seed=seed,
                gap=gap,
                stop=stop,
                aggregate=aggregate,
                z_bounds=z_bounds,
                cuts=cuts,
                defaults=defaults,
                monitor=monitor,
                _retry=False,
                _presolve=False,
            )
            again.stats["retried_without_presolve"] = (
                "solve error" if solve_error else "objective mismatch"
            )
            return again
    bound = float(info.mip_dual_bound) if np.isfinite(info.mip_dual_bound) else None
    if mismatch:
        bound = None
        native = f"{native} (objective mismatch {reported:g} vs {cost:g}: bound dropped)"
    elif native == "Optimal" and starts is not None:
        # "Optimal" is HiGHS's claim that primal − dual ≤ max(mip_abs_gap, mip_rel_gap·|primal|).
        # Its reported mip_dual_bound can lag behind that claim (seen: 10.0 for a proven 13
        # when a warm start and presolve settle the model at the root), so use the claim
        obj = float(info.objective_function_value)
        tol = max(_option(h, "mip_abs_gap"), _option(h, "mip_rel_gap") * abs(obj))
        bound = obj - tol if bound is None else max(bound, obj - tol)
    stats["nodes"] = int(info.mip_node_count)
    return RawResult(
        starts=starts,
        bound=bound,
        native_status=native + (" (cancelled)" if cancelled and native != "Optimal" else ""),
        solver="highs",
        solver_version=highs_version(),
        infeasible=HIGHS_STATUS.get(native) == "infeasible",
        interrupted=interrupted,
        stats=stats,
    )


def _option(h, name: str) -> float:
    value = h.getOptionValue(name)
    return float(value[1] if isinstance(value, tuple) else value)


def highspy_solution(x: np.ndarray):
    import highspy

    sol = highspy.HighsSolution()
    sol.col_value = list(map(float, x))
    sol.value_valid = True
    return sol


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
    a job's end unchanged.
    """
    from .common import start_windows

    n = inst.n
    hi = np.asarray(hi).copy()
    deadline = time.monotonic() + seconds
    for i in np.argsort(-(hi - np.asarray(lo)), kind="stable"):  # widest windows first
        if time.monotonic() > deadline or n < 2:
            break
        rest = inst.subset([j for j in range(n) if j != i])
        try:
            rlo, rhi = start_windows(rest, "total", ub - int(inst.arrivals[i] + inst.responses[i]))
            value = lp_value(rest, rlo, rhi, time_limit=max(deadline - time.monotonic(), 0.05))
        except (SolverError, KeyboardInterrupt):
            break
        cap = ub - int(np.ceil(value - 1e-6))
        hi[i] = max(min(hi[i], cap - int(inst.responses[i])), int(lo[i]))
    return hi


#: Models with at least this many non-zeros are solved in a worker process (see solve_highs).
ISOLATE_NONZEROS = 20_000


def _worker_main() -> None:
    """``python -m kvopt.exact.highs_matrix``: the HiGHS worker process.

    Reads one pickled job from stdin, streams pickled ``("monitor", value,
    bound)`` frames and one ``("result", RawResult)`` or ``("error", text)`` frame
    on its original stdout (fd 1 itself is pointed at stderr so no solver output
    can corrupt the stream); stdin reaching EOF means "stop".
    """
    import os
    import pickle
    import signal
    import struct

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and tells us
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    (size,) = struct.unpack("<Q", inp.read(8))
    job = pickle.loads(inp.read(size))
    stop = threading.Event()

    def watch():
        inp.read(1)  # blocks until the parent closes stdin
        stop.set()

    threading.Thread(target=watch, daemon=True).start()
    lock = threading.Lock()

    def send(msg):
        data = pickle.dumps(msg)
        with lock:
            out.write(struct.pack("<Q", len(data)) + data)
            out.flush()

    last = [None]

    def monitor(value, bound):
        if (value, bound) != last[0]:
            last[0] = (value, bound)
            send(("monitor", value, bound))

    try:
        memory, prompts, responses, arrivals = job["arrays"]
        inst = Instance.from_arrays(memory, prompts, responses, arrivals)
        res = _solve_highs_here(
            inst,
            job["objective"],
            job["lo"],
            job["hi"],
            stop=stop,
            monitor=monitor,
            **job["kwargs"],
        )
        send(("result", res))
    except BaseException as exc:  # noqa: BLE001 - sent to the parent
        send(("error", f"{type(exc).__name__}: {exc}"))


def solve_highs(
    inst: Instance,
    objective: str,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    time_limit: float = 60.0,
    stop: threading.Event | None = None,
    monitor=None,
    grace: float = 0.35,
    isolate: bool | None = None,
    **kwargs,
) -> RawResult:
    """Build and solve the time-indexed IP with HiGHS (the default IP path).

    HiGHS does not poll for interrupts in every phase (on a large model its
    presolve ran 20 s past a 2 s limit), and a thread cannot be killed.  So
    models with ``≥ ISOLATE_NONZEROS`` non-zeros (or ``isolate=True``) are
    solved in a worker process (``python -m kvopt.exact.highs_matrix``) that
    is terminated if it does not stop within ``2·grace`` of being asked: the
    time limit, ``stop`` and Ctrl-C are honoured within about a second and no
    runaway solver keeps a core busy.  Small models run in this process.
    Keyword arguments (``warm``, ``threads``, ``seed``, ``gap``, ``aggregate``,
    ``cuts``, ``defaults`` — HiGHS's default gap tolerances, for the textbook
    baseline) go to the model and the solver.
    """
    if isolate is None:
        lo_, hi_ = np.asarray(lo), np.asarray(hi)
        width = np.maximum(hi_ - lo_ + 1, 0)
        isolate = int((width * inst.responses).sum()) >= ISOLATE_NONZEROS
    if not isolate:
        return _solve_highs_here(
            inst, objective, lo, hi, time_limit=time_limit, stop=stop, monitor=monitor, **kwargs
        )
    import os
    import pickle
    import queue as queue_mod
    import struct
    import subprocess

    job = {
        "arrays": (inst.memory, inst.prompts.copy(), inst.responses.copy(), inst.arrivals.copy()),
        "objective": objective,
        "lo": np.asarray(lo),
        "hi": np.asarray(hi),
        "kwargs": dict(kwargs, time_limit=time_limit),
    }
    data = pickle.dumps(job)
    proc = subprocess.Popen(
        [sys.executable, "-m", "kvopt.exact.highs_matrix"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,  # Ctrl-C reaches only us; we stop the worker
        env=dict(os.environ),
    )
    proc.stdin.write(struct.pack("<Q", len(data)) + data)
    proc.stdin.flush()
    q: queue_mod.Queue = queue_mod.Queue()

    def reader():
        try:
            while True:
                head = proc.stdout.read(8)
                if len(head) < 8:
                    break
                (size,) = struct.unpack("<Q", head)
                q.put(pickle.loads(proc.stdout.read(size)))
        finally:
            q.put(None)

    threading.Thread(target=reader, daemon=True).start()
    deadline = time.monotonic() + time_limit + grace
    kill_at = None
    interrupted = False
    result: RawResult | None = None
    error = None
    closed = False

    def ask_stop():
        nonlocal closed
        if not closed:
            closed = True
            try:
                proc.stdin.close()
            except OSError:
                pass

    try:
        while True:
            try:
                try:
                    msg = q.get(timeout=0.05)
                except queue_mod.Empty:
                    msg = ()
                if msg is None:  # the worker closed its stream
                    break
                if msg:
                    if msg[0] == "monitor":
                        if monitor is not None:
                            monitor(msg[1], msg[2])
                    elif msg[0] == "result":
                        result = msg[1]
                    else:
                        error = msg[1]
                    continue
                now = time.monotonic()
                if kill_at is None and (now > deadline or (stop is not None and stop.is_set())):
                    ask_stop()
                    kill_at = now + 2 * grace
                if kill_at is not None and now > kill_at:
                    break
            except KeyboardInterrupt:
                interrupted = True
                ask_stop()
                kill_at = time.monotonic() + 2 * grace
    finally:
        ask_stop()
        if proc.poll() is None:
            try:
                proc.wait(0.2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if error is not None:
        raise SolverError(f"HiGHS worker failed: {error}")
    if result is None:
        if kill_at is None and proc.returncode not in (0, None):
            raise SolverError(f"HiGHS worker exited with status {proc.returncode}")
        return RawResult(
            None,
            None,
            "Terminated (did not stop when asked)",
            "highs",
            highs_version(),
            interrupted=interrupted,
        )
    if interrupted:
        result.interrupted = True
    return result


if __name__ == "__main__":
    _worker_main()
