"""Solver threads, and stopping them before the process exits.

HiGHS, CP-SAT and the compiled branch and bound run in daemon threads so
that the calling thread can keep the clock and catch Ctrl-C.  A daemon
thread still inside native code when the interpreter finalizes is fatal: when
the call returns and asks for the GIL, CPython ends the thread with
``pthread_exit``, whose unwinding through the extension's C++ frames calls
``std::terminate`` ("terminate called without an active exception", SIGABRT).
A ``kvopt search`` interrupted at the wrong moment died that way (2 Ctrl-Cs in
45 in a stress run).

So every such thread is made by :func:`thread` or :func:`start`, with a
function that asks it to stop, and :func:`drain` (run by the command line
before it exits, and by an ``atexit`` hook) asks every one still running to
stop and waits for it.  A thread that does not stop in time is left; the
command line then ends the process with ``os._exit`` (its exit status kept)
instead of finalizing under it.

Wait for these threads with :meth:`Worker.wait` and :meth:`Worker.finished`,
never ``Thread.join`` or ``Thread.is_alive``: on CPython 3.11 a Ctrl-C that
interrupts ``join`` while the thread runs marks it stopped (``threading``'s
bpo-45274 handling releases the running thread's own lock), after which
``is_alive()`` is false and ``join()`` returns at once, with the solver still
running.  That is how an interrupted search left HiGHS running at exit.
"""

from __future__ import annotations

import atexit
import signal
import threading
import time
from collections.abc import Callable

#: seconds :func:`drain` waits, in all, for the threads it asked to stop
DRAIN_SECONDS = 5.0
#: seconds between :func:`drain`'s requests to stop (CP-SAT ignores one made before it
#: starts searching, so the request is repeated)
_POLL = 0.05

_lock = threading.Lock()
_live: list[Worker] = []
_closing = False


class Worker(threading.Thread):
    """A daemon thread that runs its target only if :func:`drain` has not begun, and says
    (under the registry's lock) when it enters and (``done``) when it leaves."""

    def __init__(self, target: Callable[[], None], name: str, stop: Callable[[], None]):
        super().__init__(daemon=True, name=name)
        self.work, self.stop, self.entered, self.done = target, stop, False, threading.Event()

    def finished(self) -> bool:
        """Has the target returned (or been skipped)?  Unlike ``is_alive``, not fooled by a
        Ctrl-C that interrupted a ``join`` (see the module doc)."""
        return self.done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for :meth:`finished`; returns it."""
        return self.done.wait(timeout)

    def run(self) -> None:
        with _lock:
            if _closing:  # the process is exiting: run nothing native any more
                self.done.set()
                return
            self.entered = True
        try:
            self.work()
        finally:
            self.done.set()


def thread(target: Callable[[], None], *, name: str, stop: Callable[[], None]) -> Worker:
    """A registered daemon thread called ``name`` running ``target``, not yet started;
    ``stop()`` asks it to end."""
    th = Worker(target, name, stop)
    with _lock:
        _live[:] = [w for w in _live if not w.done.is_set()]
        _live.append(th)
    return th


def start(target: Callable[[], None], *, name: str, stop: Callable[[], None]) -> Worker:
    """:func:`thread`, started."""
    th = thread(target, name=name, stop=stop)
    th.start()
    return th


class DeferredCtrlC:
    """Ctrl-C recorded instead of raised while solver threads start, then raised again by
    :meth:`release`, inside the ``try`` that stops them.  Without it, a Ctrl-C that landed in
    ``Thread.start`` (which waits for the new thread) left the threads started so far
    searching after the solve had returned (found by ``tests/test_exact_workers.py``,
    issue 56).  Only the main thread receives ``KeyboardInterrupt``; elsewhere this does
    nothing.  A signal mask would not do: the kernel hands a process's SIGINT to any thread
    that does not block it, and Python raises it in the main thread all the same."""

    def __init__(self) -> None:
        self.came: list[int] = []
        self.old = None
        if threading.current_thread() is threading.main_thread():
            try:
                self.old = signal.signal(signal.SIGINT, lambda signum, frame: self.came.append(1))
            except (ValueError, OSError):  # pragma: no cover - no signals here
                self.old = None

    def restore(self) -> bool:
        """Restore the handler and say whether a Ctrl-C came meanwhile, without raising it:
        for a caller that finishes its work anyway and reports the Ctrl-C in its result
        (the search's wrap-up, :mod:`kvopt.campaign.runner`).  Idempotent."""
        old, self.old = self.old, None
        if old is not None:
            signal.signal(signal.SIGINT, old)
        came = bool(self.came)
        self.came.clear()
        return came

    def release(self) -> None:
        """Restore the handler, then raise a Ctrl-C that came meanwhile again (to that
        handler: ``KeyboardInterrupt`` by default).  Idempotent."""
        old, self.old = self.old, None
        if old is None:
            return
        signal.signal(signal.SIGINT, old)
        if self.came:
            self.came.clear()
            signal.raise_signal(signal.SIGINT)


class SeenCtrlC:
    """Ctrl-C raised as usual (``KeyboardInterrupt``) and remembered, for a caller whose
    callee catches it and returns what it found (an exact solve returns ``interrupted``): the
    caller still knows the user pressed Ctrl-C (the search's certify stage,
    :mod:`kvopt.campaign.runner`).  A context manager; only the main thread installs it."""

    def __init__(self) -> None:
        self.came = False
        self.old = None

    def _handler(self, signum, frame) -> None:
        self.came = True
        raise KeyboardInterrupt

    def __enter__(self) -> SeenCtrlC:
        if threading.current_thread() is threading.main_thread():
            try:
                self.old = signal.signal(signal.SIGINT, self._handler)
            except (ValueError, OSError):  # pragma: no cover - no signals here
                self.old = None
        return self

    def __exit__(self, *exc) -> bool:
        old, self.old = self.old, None
        if old is not None:
            signal.signal(signal.SIGINT, old)
        if exc[0] is not None and issubclass(exc[0], KeyboardInterrupt):
            self.came = True
        return False


def start_deferred(target: Callable[[], None], *, name: str, stop: Callable[[], None]):
    """:func:`start` with Ctrl-C deferred: returns the thread and the
    :class:`DeferredCtrlC`, whose ``release()`` the caller calls first thing inside the
    ``try`` that catches ``KeyboardInterrupt`` (and again after it: idempotent)."""
    held = DeferredCtrlC()
    try:
        return start(target, name=name, stop=stop), held
    except BaseException:
        held.release()
        raise


def running() -> list[Worker]:
    """The registered threads inside their target now."""
    with _lock:
        return [w for w in _live if w.entered and not w.done.is_set()]


def drain(seconds: float = DRAIN_SECONDS) -> bool:
    """Close the registry for good (a thread started from now on runs nothing), then ask
    every thread still inside its target to stop, repeatedly, for up to ``seconds``.
    Returns whether none is left inside.  Called at exit: by the command line, and by
    an ``atexit`` hook for any other program.

    A Ctrl-C can land while ``Thread.start`` waits for the new thread, before it is
    marked started; closing the registry first is what keeps such a thread from
    starting a solver after the drain looked.
    """
    global _closing
    with _lock:
        _closing = True
    deadline = time.monotonic() + float(seconds)
    while True:
        live = running()
        if not live:
            return True
        if time.monotonic() > deadline:
            return False
        for w in live:
            try:
                w.stop()
            except Exception:  # noqa: BLE001 - a solver already torn down; keep draining
                pass
        live[0].done.wait(_POLL)


atexit.register(drain)
