"""The branch and bound of :mod:`kvopt.exact.bnb`, compiled with Numba (the ``fast`` extra).

:func:`run_compiled` searches exactly the tree of ``_Search.run`` (total
completion with the Lagrangian bound, ``models/bnb.md``): the same nodes in the
same order, the same pruning rules, the same memo, hence the same node count and
the same incumbents (``tests/test_exact_bnb_compiled.py`` compares them node for node
with the Python search).  Only the bookkeeping differs: the recursion of
``_Search.dfs`` becomes an explicit stack of frames indexed by depth, the memo an
open-addressing hash table over flat arrays, and the clock, the stop flag and a
racing solver's value reach the search through a small shared array that the
calling thread updates while the compiled loop runs, without the interpreter lock,
in a thread of its own (so CP-SAT racing it gets the other core).  With two threads
the tree is split between two such loops (:func:`run_compiled`, ``models/bnb.md`` §7).

Without Numba :func:`available` is false and the branch and bound stays in Python.
"""

from __future__ import annotations

import time

import numpy as np

from .. import workers
from .kernel import _BEST0, _CLAIM, _DONE, _OUTSIDE, _STOP, _kernel, _numba
from .search import MAX_N, SPLIT, Split

__all__ = ["MAX_N", "available", "list_tasks", "prepare", "run_compiled"]

#: with two threads (``bnb.Split``: the tree cut at ``compiled_depth`` placed jobs, from
#: ``compiled_min_n`` jobs on), when true, the threads take the tasks in the order of their bounds (the serial order
#: among equal ones), so that the smallest bound of a task not finished (``_unfinished_bound``)
#: rises as the search goes; off: no faster, and that bound stayed at the root's
#: (``models/bnb.md`` §8)
TASKS_BY_BOUND = False
#: how often (seconds) the Python thread looks at the clock, the stop flag and the racing solver
_POLL = 0.01


def available() -> bool:
    """Is Numba installed (``pip install kvopt[fast]``)?"""
    return _numba is not None


def prepare() -> None:
    """Compile the search now (or load it from the cache): the first search of a process
    otherwise pays for it inside its time limit (about 15 s on a machine without a cache,
    0.3 s with one)."""
    from ...instance import Instance
    from .search import _CHECK_EVERY, MEMO_LIMIT, _Search

    inst = Instance.from_arrays(4, [1, 1], [1, 1])
    search = _Search(
        inst, "total", [0, 0], [2, 2], 10**9, None, time.monotonic() + 600, None, None, None
    )
    search.set_duals([0.0] * 8, [0.0] * 8)
    run_compiled(search, MEMO_LIMIT, _CHECK_EVERY)


def run_compiled(
    search, memo_limit: int, check_every: int, threads: int = 1, split: Split = SPLIT
) -> bool:
    """Run ``search`` (a ``bnb._Search`` with its duals set) compiled; ``True`` when the tree
    was searched to the end, ``False`` when the clock, the stop flag or the node limit stopped
    it.  Afterwards ``search.best``, ``search.best_starts`` and ``search.nodes`` are what the
    Python search would hold (one thread; split, the optimum only).  A ``KeyboardInterrupt``
    stops the search and is raised again.

    With ``threads ≥ 2`` and at least ``split.compiled_min_n`` jobs, two threads share the tree
    (``models/bnb.md`` §7): the serial search cut at ``split.compiled_depth`` lists the tasks, then
    both threads claim them in that order (or by bound, ``TASKS_BY_BOUND``), each with its
    own memo, pruning with the better of the two incumbents; stopped, it sets
    ``search.task_lower``, the smallest bound of a task not searched to its end.  The tree
    is then not the serial one, but it is searched just as exhaustively: every rule prunes against the value of an existing schedule, and each
    memo drops only states its own thread searched.  ``node_limit`` holds per thread."""
    depth = split.compiled_depth
    split = threads >= 2 and search.n >= split.compiled_min_n
    nthreads = 2 if split else 1
    outside = search.outside
    ctl = np.array([0, 2**62, 0, 0] + [2**62] * nthreads + [0] * nthreads, np.int64)
    if outside is not None:
        v = outside()
        if v is not None:
            ctl[_OUTSIDE] = int(v)
    node_limit = -1 if search.node_limit is None else int(search.node_limit)
    arrays = _arrays(search)

    def call(mode: int, tid: int, best_in: int, paths: np.ndarray, n_paths: int):
        """The kernel's arguments for one thread (its own profile, slack and starts)."""
        return _arguments(
            search,
            arrays,
            ctl,
            (mode, tid, nthreads),
            best_in,
            (paths, n_paths, depth),
            (memo_limit, node_limit, check_every),
        )

    if not split:
        args, best_starts = call(0, 0, search.best, np.zeros(2, np.int64), 0)
        (out,), interrupted = _supervise([args], ctl, search)
        code, nodes, best, n_keys = out[:4]
        owner = best_starts if best_starts[0] >= 0 else None
    else:
        stride = 2 * depth + 1
        args, starts0 = call(1, 0, search.best, np.zeros(64 * stride, np.int64), 0)
        (first,), interrupted = _supervise([args], ctl, search)
        code, nodes, best, n_keys, paths, n_paths = first
        owner = starts0 if starts0[0] >= 0 else None
        own_best = int(ctl[_BEST0])
        per_thread = [int(nodes)]
        if code == _DONE and not interrupted:
            ctl[_BEST0] = 2**62
            table = paths[: n_paths * stride].reshape(n_paths, stride)
            if TASKS_BY_BOUND:
                table = table[np.argsort(table[:, -1], kind="stable")]
            paths = np.ascontiguousarray(table).ravel()
            tbounds = table[:, -1].copy()
            ctl[_BEST0 + nthreads :] = n_paths
            calls = [call(2, tid, best, paths, n_paths) for tid in range(nthreads)]
            outs, interrupted = _supervise([c[0] for c in calls], ctl, search)
            search.task_lower = _unfinished_bound(tbounds, ctl, nthreads)
            code = max(o[0] for o in outs)  # _STOPPED if either stopped
            per_thread = [int(nodes) + int(outs[0][1])] + [int(o[1]) for o in outs[1:]]
            nodes = sum(int(o[1]) for o in outs) + int(nodes)
            n_keys = sum(int(o[3]) for o in outs)
            best = min([int(best)] + [int(o[2]) for o in outs])
            for tid, (_, starts) in enumerate(calls):
                if starts[0] >= 0 and int(ctl[_BEST0 + tid]) < own_best:
                    owner, own_best = starts, int(ctl[_BEST0 + tid])
        search.split_stats = {
            "threads": nthreads,
            "depth": depth,
            "tasks": int(n_paths),
            "nodes": per_thread,
        }
    search.nodes = int(nodes)
    search.memo_keys = int(n_keys)
    if owner is not None:
        search.best_starts = [int(x) for x in owner]
    search.best = int(best)
    if interrupted:
        raise KeyboardInterrupt
    return code == _DONE


def _arrays(search) -> tuple:
    """The kernel's read-only arrays for ``search`` (its duals set): the data, then the
    prices (``bsuf``, ``sufmin``, ``rc``, ``dd``)."""
    n, H = search.n, search.H
    maxo = max(search.o)
    stair = np.zeros((n, maxo), np.int64)
    dd = np.zeros((n, H + 1, maxo), np.float64)
    for j in range(n):
        stair[j, : search.o[j]] = search.stair[j]
        for t, delta in enumerate(search.dd[j]):
            if delta:
                dd[j, t, : len(delta)] = delta
    data = (
        n,
        search.M,
        H,
        np.asarray(search.o, np.int64),
        np.asarray(search.lims, np.int64),
        np.asarray(search.a, np.int64),
        np.asarray(search.hi, np.int64),
        np.asarray(search.pred, np.int64),
        stair,
    )
    rest = (
        np.asarray(search.bsuf, np.float64),
        np.asarray(search.sufmin, np.float64),
        np.asarray(search.rc, np.float64),
        dd,
    )
    return data, rest


def _arguments(search, arrays, ctl, who, best_in, tasks, limits) -> tuple:
    """The kernel's arguments for one thread, and the array its best leaf is written to:
    ``who = (mode, tid, nthreads)``, ``tasks = (paths, n_paths, depth)``,
    ``limits = (memo_limit, node_limit, check_every)``; the thread gets its own profile,
    slack and starts."""
    data, rest = arrays
    mode, tid, nthreads = who
    paths, n_paths, depth = tasks
    memo_limit, node_limit, check_every = limits
    best_starts = np.full(search.n, -1, np.int64)
    args = (
        *data,
        np.asarray(search.gm, np.int64).copy(),
        np.asarray(search.dslack, np.float64).copy(),
        *rest,
        np.asarray(search.start, np.int64).copy(),
        best_starts,
        int(best_in),
        int(memo_limit),
        node_limit,
        ctl,
        int(check_every),
        mode,
        depth,
        paths,
        n_paths,
        tid,
        nthreads,
    )
    return args, best_starts


def list_tasks(search, depth: int, memo_limit: int, check_every: int) -> tuple[np.ndarray, int]:
    """The nodes with ``depth`` jobs placed that the serial search does not prune, as the
    two-thread search lists its tasks (``models/bnb.md`` §7), with ``depth`` free: one row per
    node, ``(job, start)`` per placement in order, then the node's bound; and the nodes
    visited.  Empty if the search above that depth was stopped (a measurement tool:
    ``benchmarks/tree_prices.py``)."""
    # the control slots of two threads, as the split search lists its tasks (mode 1 is thread 0)
    ctl = np.array([0, 2**62, 0, 0, 2**62, 2**62, 0, 0], np.int64)
    stride = 2 * depth + 1
    args, _ = _arguments(
        search,
        _arrays(search),
        ctl,
        (1, 0, 2),
        search.best,
        (np.zeros(64 * stride, np.int64), 0, depth),
        (memo_limit, -1, check_every),
    )
    (out,), interrupted = _supervise([args], ctl, search)
    if interrupted:
        raise KeyboardInterrupt
    code, nodes, _, _, paths, n_paths = out
    if code != _DONE:
        n_paths = 0
    return paths[: n_paths * stride].reshape(n_paths, stride).copy(), int(nodes)


def _unfinished_bound(tbounds: np.ndarray, ctl: np.ndarray, nthreads: int) -> float:
    """The smallest bound of a task not searched to its end (``inf``: none), read from the
    claim counter and each thread's current task (exact once the kernels returned)."""
    n_paths = len(tbounds)
    claim = min(int(ctl[_CLAIM]), n_paths)
    lb = float(tbounds[claim:].min()) if claim < n_paths else float("inf")
    for tid in range(nthreads):
        cur = int(ctl[_BEST0 + nthreads + tid])
        if cur < n_paths:
            lb = min(lb, float(tbounds[cur]))
    return lb


def _ready(args: tuple) -> None:
    """Compile the kernel for these argument types, or load it from Numba's cache, here in
    the calling thread, before any search thread starts.  The lost Ctrl-C of issue 34: the
    kernel used to be compiled on its first call, inside the search thread, while this
    thread, interrupted, waited for it without a limit; on a fresh clone (no cache: about
    15 s, far more under load) the interrupted solve ran on past the test's 60 s.  A Ctrl-C
    during the compilation now interrupts this thread at once.  :func:`run_compiled` builds
    every argument with a fixed type (int64 and float64 arrays, Python ints), so the kernel
    has one signature: once it has one, this returns at once (asking Numba again cost about
    2 ms per call, a few per cent of an n = 12 solve)."""
    if not _kernel.signatures:
        _kernel.compile(tuple(_numba.typeof(a) for a in args))


def _supervise(calls: list[tuple], ctl: np.ndarray, search) -> tuple[list, bool]:
    """Run the kernel once per argument tuple, each in a thread of its own (without the
    interpreter lock), while this thread keeps the clock, the stop flag and a racing
    solver's value (every ``_POLL`` seconds); returns the kernels' results and whether
    Ctrl-C came (it then stops them)."""
    outs: list = [None] * len(calls)
    _ready(calls[0])

    def ask_stop() -> None:
        ctl[_STOP] = 1

    def work(k: int) -> None:
        outs[k] = _kernel(*calls[k])

    # the threads start with Ctrl-C deferred, and it lands inside the ``try`` below: one that
    # landed while the second thread started left the first searching, unstopped, after the
    # solve had returned (workers.DeferredCtrlC)
    held = workers.DeferredCtrlC()
    try:
        threads = [
            workers.start(lambda k=k: work(k), name=f"kvopt-bnb-compiled-{k}", stop=ask_stop)
            for k in range(len(calls))
        ]
    except BaseException:
        held.release()
        raise
    interrupted = False
    try:
        held.release()
        for th in threads:
            while not th.finished():
                th.wait(_POLL)
                if time.monotonic() > search.deadline or (
                    search.stop is not None and search.stop.is_set()
                ):
                    ctl[_STOP] = 1
                if search.outside is not None:
                    v = search.outside()
                    if v is not None and v < ctl[_OUTSIDE]:
                        ctl[_OUTSIDE] = int(v)
    except KeyboardInterrupt:
        interrupted = True
        ctl[_STOP] = 1
        for th in threads:
            th.wait()
    return outs, interrupted
