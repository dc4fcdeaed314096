"""Progress messages through :mod:`logging`: the ``kvopt`` logger hierarchy.

Long-running functions (``solve``, ``compare``, ``search``'s shrink,
``validate``) report progress with :func:`progress_logger`: messages go to the
logger of their module (``kvopt.exact.solve``, ``kvopt.comparison``,
``kvopt.campaign.shrink``, ``kvopt.validation``) at level INFO.  The command
line calls :func:`configure_stderr`, which prints each message as one line on
stderr; a program or notebook that configured no logging gets the same
handler the first time progress is asked for, so the text stays what it was.
To route the messages elsewhere, configure the ``kvopt`` logger.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

ROOT = "kvopt"


class StderrHandler(logging.Handler):
    """One line per message on the *current* ``sys.stderr`` (looked up per message, so a
    redirected or captured stderr gets it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 (logging's own convention)
            self.handleError(record)


def configure_stderr(level: int = logging.INFO) -> None:
    """Print kvopt's progress messages on stderr, message text only (idempotent)."""
    log = logging.getLogger(ROOT)
    if not any(isinstance(h, StderrHandler) for h in log.handlers):
        handler = StderrHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
    log.setLevel(level)


def progress_logger(name: str, enabled: bool, prefix: str) -> Callable[[str], None]:
    """A function that logs ``[prefix] message`` at INFO on logger ``name`` when ``enabled``
    (else does nothing); makes sure the message is seen (see the module docstring)."""
    if not enabled:
        return lambda msg: None
    log = logging.getLogger(name)
    base = logging.getLogger(ROOT)
    if base.level == logging.NOTSET:
        base.setLevel(logging.INFO)
    if not base.hasHandlers():
        configure_stderr()

    def say(msg: str) -> None:
        log.info("[%s] %s", prefix, msg)

    return say


__all__ = ["ROOT", "StderrHandler", "configure_stderr", "progress_logger"]
