"""Where a campaign's evaluations run: in this process, local processes, or a Dask cluster.

Every executor has ``run(tasks, on_result, deadline)`` (calls ``on_result``
with each :class:`~kvopt.campaign.types.Evaluation` as it finishes; after
``deadline`` nothing new starts) and ``close(abort=False)``.
"""

from __future__ import annotations

import signal
import time

from ..errors import InputError
from .evaluate import evaluate


def _ignore_sigint() -> None:  # worker initializer: Ctrl-C is handled by the main process
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Serial:
    name = "serial"

    def run(self, tasks, on_result, deadline):
        for t in tasks:
            if deadline is not None and time.monotonic() >= deadline:
                return
            on_result(evaluate(t))

    def close(self, abort: bool = False) -> None:
        pass


class LocalPool:
    name = "processes"

    def __init__(self, workers: int):
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        self.ex = ProcessPoolExecutor(
            max_workers=workers, mp_context=mp.get_context("spawn"), initializer=_ignore_sigint
        )

    def run(self, tasks, on_result, deadline):
        from concurrent.futures import FIRST_COMPLETED, wait

        futs = {self.ex.submit(evaluate, t) for t in tasks}
        while futs:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            done, futs = wait(futs, timeout=timeout, return_when=FIRST_COMPLETED)
            for f in done:
                if not f.cancelled():
                    on_result(f.result())
            if deadline is not None and time.monotonic() >= deadline:
                for f in futs:
                    f.cancel()  # not started yet: skipped; running ones finish below
                deadline = None

    def close(self, abort: bool = False) -> None:
        if abort:
            for p in list(getattr(self.ex, "_processes", {}).values()):
                p.terminate()
        self.ex.shutdown(wait=not abort, cancel_futures=True)


class DaskExecutor:
    name = "dask"

    def __init__(self, address: str, timeout: float = 10.0):
        try:
            from dask.distributed import Client
        except ImportError:
            raise InputError(
                "needs the optional extra: pip install 'kvopt[dask]'", source="--scheduler"
            ) from None
        try:
            self.client = Client(address, timeout=f"{timeout}s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(
                f"the Dask scheduler {address!r} did not answer within {timeout:g}s ({exc})",
                source="--scheduler",
            ) from None

    def run(self, tasks, on_result, deadline):
        from dask.distributed import as_completed

        futs = [self.client.submit(evaluate, t, pure=False) for t in tasks]
        self._futs = futs
        for f in as_completed(futs, loop=self.client.loop):
            if deadline is not None and time.monotonic() >= deadline:
                self.client.cancel([g for g in futs if not g.done()])
                deadline = None
            if f.status == "finished":
                on_result(f.result())

    def close(self, abort: bool = False) -> None:
        if abort and getattr(self, "_futs", None):
            self.client.cancel(self._futs)
        self.client.close()


def make_executor(workers: int, scheduler: str | None, timeout: float):
    """The executor for ``workers`` local processes or a Dask ``scheduler`` address."""
    if scheduler:
        return DaskExecutor(scheduler, timeout)
    if workers > 1:
        return LocalPool(workers)
    return Serial()


__all__ = ["DaskExecutor", "LocalPool", "Serial", "make_executor"]
