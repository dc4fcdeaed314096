"""An exclusive, non-blocking lock on a campaign folder, on POSIX and on Windows.

``fcntl.flock`` on POSIX, ``msvcrt.locking`` on Windows; either way the lock
goes away with the process (a killed run never leaves a stale lock).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO


def lock_file(path: Path) -> IO | None:
    """Open ``path`` and lock it exclusively; the open file (close it to unlock), or ``None``
    when another process holds the lock."""
    fh = open(path, "a+")
    try:
        if os.name == "nt":  # pragma: no cover (Windows)
            import msvcrt

            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        return None
    return fh


__all__ = ["lock_file"]
