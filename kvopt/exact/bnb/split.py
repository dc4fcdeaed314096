"""The branch and bound's tree split between two processes (``models/bnb.md``, "Two threads").

The search of :mod:`kvopt.exact.bnb` is pure Python, so a second thread would
wait for the first one's interpreter lock.  With ``threads ≥ 2`` (and a ``fork``
start method, as on Linux) :func:`search_split` therefore

1. expands the tree down to ``depth`` placed jobs in this process, recording
   each node at that depth as a *task* (its placements and the arguments of
   its ``dfs`` call) instead of searching below it: this is the serial search
   with the subtrees below ``depth`` cut off, so the tasks cover every subtree
   the serial search would visit;
2. forks one worker process, which inherits the search state (duals, memo,
   tasks); this process and the worker then take tasks in their order (the
   serial search's order) from a shared counter and search each subtree with
   the serial ``dfs``.

Pruning against another worker's incumbent is exact (each prunes only nodes
holding no schedule better than one that exists).  Incumbents are shared
through shared memory every ``_CHECK_EVERY`` nodes, by the ``outside`` hook of
each search, which also carries the value of a racing solver's schedule.
The split search has finished (and ``search.best`` is Opt) only when both
processes have run out of tasks without being stopped; a worker that dies
leaves the result unproven.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
import warnings
from collections.abc import Callable

from .search import SPLIT, _Search, _Stopped

# shared slots: [best value with starts, racing solver's value, next task, stop, worker nodes,
# worker finished, starts stored] then the n starts
_BEST, _OUT, _NEXT, _STOP, _NODES, _DONE, _HAS = range(7)
_SLOTS = 7


def can_split() -> bool:
    """Can this process fork a worker? (a ``fork`` start method, as on Linux and macOS, and
    not itself a daemonic worker, which multiprocessing does not let have children)"""
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and not multiprocessing.current_process().daemon
    )


class _Guard:
    """The shared lock, which a dead peer cannot leave held forever.  A process killed while
    holding it (the test kills the worker with SIGKILL as soon as it exists) never releases
    it, and the other one hung on it for good (seen once in CI).  So the lock is taken with a
    timeout; when the other process is gone, nobody else can touch the shared slots, and this
    one goes on without the lock from then on."""

    WAIT = 0.05  # seconds between checks that the other process is alive

    def __init__(self, lock, peer_alive: Callable[[], bool] = lambda: True):
        self.lock, self.peer_alive, self.alone, self.held = lock, peer_alive, False, False

    def __enter__(self) -> _Guard:
        self.held = False
        while not self.alone:
            if self.lock.acquire(timeout=self.WAIT):
                self.held = True
                break
            self.alone = not self.peer_alive()
        return self

    def __exit__(self, *exc) -> None:
        if self.held:
            self.held = False
            self.lock.release()


class _Flag:
    """The shared stop slot, seen as a ``threading.Event`` by the worker's search."""

    def __init__(self, arr):
        self.arr = arr

    def is_set(self) -> bool:
        return self.arr[_STOP] != 0


def _collect(search: _Search, depth: int) -> list[tuple]:
    """Run the serial search with every node at ``depth`` placed jobs recorded, not searched."""
    tasks: list[tuple] = []
    base = _Search.dfs
    n, start = search.n, search.start

    def dfs(placed, t, last, cost, pending, past, pest, rest, end):
        if n - len(rest) >= depth:
            placements = tuple((j, start[j]) for j in range(n) if start[j] >= 0)
            tasks.append((placements, (placed, t, last, cost, list(pending), list(past),
                                       list(pest), list(rest), end)))  # fmt: skip
            return
        base(search, placed, t, last, cost, pending, past, pest, rest, end)

    search.dfs = dfs  # the instance attribute shadows the method in the recursion
    try:
        search.run()
    finally:
        del search.dfs
    return tasks


def _publisher(search: _Search, arr, lock: _Guard, outside):
    """The ``outside`` hook of a worker's search: publish its incumbent, read the best."""
    n = search.n
    seen = [search.best]

    def hook():
        v = search.best
        if v < seen[0] and search.best_starts is not None:
            seen[0] = v
            with lock:
                if v < arr[_BEST]:
                    arr[_BEST] = v
                    arr[_SLOTS : _SLOTS + n] = search.best_starts
                    arr[_HAS] = 1
        if outside is not None:  # the racing solver's value (this process only)
            o = outside()
            if o is not None and o < arr[_OUT]:
                arr[_OUT] = int(o)
        w = min(arr[_BEST], arr[_OUT])
        return w if w < v else None

    return hook


def _work(search: _Search, tasks: list[tuple], arr, lock: _Guard) -> None:
    """Take tasks from the shared counter until none is left (``_Stopped`` propagates)."""
    while True:
        with lock:
            i = arr[_NEXT]
            arr[_NEXT] = i + 1
        if i >= len(tasks):
            return
        placements, args = tasks[i]
        search.check()  # the clock, the stop flag and the best value known (may raise)
        for j, t in placements:
            search.add(j, t, 1)
            search.start[j] = t
        try:
            search.dfs(*args)
        finally:
            for j, t in placements:
                search.add(j, t, -1)
                search.start[j] = -1
        search.outside()  # publish at once what this subtree found


def _child(search: _Search, tasks, arr, shared_lock) -> None:
    """The forked worker: its own copy of the search, stopped through the shared flag."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    parent = os.getppid()
    lock = _Guard(shared_lock, lambda: os.getppid() == parent)
    search.stop = _Flag(arr)
    search.outside = _publisher(search, arr, lock, None)
    search.nodes = 0
    try:
        _work(search, tasks, arr, lock)
        done = 1
    except _Stopped:
        done = 0
    search.outside()
    arr[_NODES] = search.nodes
    arr[_DONE] = done


def search_split(search: _Search, stop, outside, depth: int | None = None) -> bool:
    """Search ``search``'s tree in this process and one forked worker (module doc).

    Returns whether the search finished; afterwards ``search.best`` /
    ``search.best_starts`` hold the best of both processes and ``search.nodes``
    their nodes.  Raises ``_Stopped`` (after stopping the worker) when stopped.
    """
    n = search.n
    tasks = _collect(search, SPLIT.python_depth if depth is None else depth)
    if not tasks:
        return True  # the whole tree lay above the split depth
    ctx = multiprocessing.get_context("fork")
    shared_lock = ctx.Lock()
    lock = _Guard(shared_lock)  # the worker's liveness is set once it exists
    arr = ctx.RawArray("q", _SLOTS + n)
    arr[_BEST] = search.best
    arr[_OUT] = search.best
    if search.best_starts is not None:
        arr[_SLOTS : _SLOTS + n] = search.best_starts
        arr[_HAS] = 1
    own_outside = search.outside
    search.outside = _publisher(search, arr, lock, outside)
    with warnings.catch_warnings():
        # Python ≥ 3.12 warns about fork() in a process with threads (a racing solver's);
        # the worker runs only this pure-Python search and leaves with os._exit
        warnings.simplefilter("ignore", DeprecationWarning)
        proc = ctx.Process(target=_child, args=(search, tasks, arr, shared_lock), daemon=True)
        try:
            proc.start()
            lock.peer_alive = proc.is_alive
        except OSError:  # no process to be had (limits): this one takes every task
            proc = None
    finished = False
    waited = time.monotonic()
    try:
        _work(search, tasks, arr, lock)
        finished = True
        waited = time.monotonic()
        # the worker's last task: keep the stop and the race in view
        while proc is not None and proc.is_alive():
            proc.join(0.01)
            if time.monotonic() > search.deadline or (stop is not None and stop.is_set()):
                break
            search.outside()
    finally:
        arr[_STOP] = 1  # a no-op for a worker that has finished
        if proc is not None:
            proc.join(1.0)
            if proc.is_alive():  # pragma: no cover - the worker checks the flag every 256 nodes
                proc.kill()
                proc.join()
        search.outside()
        search.outside = own_outside
        search.split_stats = {
            "tasks": len(tasks),
            "worker_nodes": int(arr[_NODES]),
            "nodes_here": search.nodes,
            "waited": round(time.monotonic() - waited, 4) if finished else 0.0,
        }
        search.nodes += arr[_NODES]
        if arr[_HAS]:  # both published every schedule they found: this is the best one
            search.best_starts = list(arr[_SLOTS : _SLOTS + n])
        search.best = min(search.best, arr[_BEST], arr[_OUT])
    return finished and (proc is None or (proc.exitcode == 0 and arr[_DONE] == 1))
