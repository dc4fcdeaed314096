"""The HiGHS worker process (:func:`main`, started by :func:`solve_in_worker`) (see :class:`kvopt.exact.backends.highs.Highs`).

:func:`solve_in_worker` (the parent) starts the worker, sends it one job —
the instance's arrays, the rest of the :class:`~kvopt.exact.backend.Problem`,
the :class:`~kvopt.exact.backend.Limits` and the backend object whose
``solve_here`` runs there — and relays its incumbents and bounds to the
``monitor`` hook; the time limit, the ``stop`` hook and Ctrl-C close the
worker's stdin ("stop"), and a worker that does not stop within ``2·grace``
is killed.  :func:`main` is the worker's side.
"""

from __future__ import annotations

import os
import pickle
import queue as queue_mod
import struct
import subprocess
import sys
import threading
import time
from dataclasses import replace

import numpy as np

from ...errors import SolverError
from ...instance import Instance
from ..backend import Hooks, Limits, Problem
from ..common import RawResult, SolveStatus
from .highs_glue import highs_version


def main() -> None:
    """The worker process.

    Reads one pickled job from stdin, streams pickled ``("monitor", value,
    bound)`` frames and one ``("result", RawResult)`` or ``("error", text)`` frame
    on its original stdout (fd 1 itself is pointed at stderr so no solver output
    can corrupt the stream); stdin reaching EOF means "stop".
    """
    import signal

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
        memory, prompts, responses, arrivals, max_batch = job["arrays"]
        inst = Instance.from_arrays(memory, prompts, responses, arrivals, max_batch=max_batch)
        problem = Problem(inst, job["objective"], job["lo"], job["hi"], job["warm"], job["ub"])
        res = job["solver"].solve_here(problem, job["limits"], Hooks(stop=stop, monitor=monitor))
        send(("result", res))
    except BaseException as exc:  # noqa: BLE001 - sent to the parent
        send(("error", f"{type(exc).__name__}: {exc}"))


def solve_in_worker(
    solver, problem: Problem, limits: Limits, hooks: Hooks, *, grace: float = 0.35
) -> RawResult:
    """``solver.solve_here(problem, limits, …)`` in a worker process (see module doc).

    ``solver`` is pickled (a :class:`kvopt.exact.backends.highs.Highs`); the worker gets
    its own stop event and monitor, wired to ``hooks``.
    """
    inst = problem.instance
    job = {
        "solver": solver,
        "arrays": (
            inst.memory,
            inst.prompts.copy(),
            inst.responses.copy(),
            inst.arrivals.copy(),
            inst.max_batch,
        ),
        "objective": problem.objective,
        "lo": np.asarray(problem.lo),
        "hi": np.asarray(problem.hi),
        "warm": problem.warm,
        "ub": problem.ub,
        "limits": limits,
    }
    data = pickle.dumps(job)
    proc = subprocess.Popen(
        # -c, not -m: the package imports this module, and runpy warns when it runs it again
        [sys.executable, "-c", "from kvopt.exact.backends.highs_worker import main; main()"],
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
    stop, monitor = hooks.stop, hooks.monitor
    deadline = time.monotonic() + limits.time_limit + grace
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
            getattr(solver, "label", "highs"),
            highs_version(),
            SolveStatus.UNKNOWN,
            interrupted=interrupted,
        )
    if interrupted:
        result = replace(result, interrupted=True)
    return result


if __name__ == "__main__":
    main()
