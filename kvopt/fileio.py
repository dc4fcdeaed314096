"""Reading and atomically writing JSON files.

Every file kvopt writes goes through :func:`write_json_atomic` /
:func:`write_bytes_atomic`: the data is written to a temporary file in the
target folder and renamed over the target, so a crash or Ctrl-C never leaves a
half-written file behind.
"""

from __future__ import annotations

import gc
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import InputError


def _reject_constant(name: str):
    raise ValueError(f"non-standard JSON constant {name}")


def read_json(path: str | os.PathLike) -> Any:
    """Parse a UTF-8 JSON file; any failure is an :class:`InputError` naming the file."""
    src = str(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise InputError("file not found", source=src) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", source=src) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", source=src) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", source=src) from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (json.JSONDecodeError, ValueError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        where = (
            f" at line {exc.lineno} column {exc.colno}"
            if isinstance(exc, json.JSONDecodeError)
            else ""
        )
        raise InputError(f"not valid JSON ({msg}{where})", source=src) from None


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (restored after, as it was).

    Reading a file of 10⁶ jobs or attempts allocates millions of small container
    objects, none of them garbage; the collector's passes over them took a quarter of
    ``load_instance`` at 10⁶ jobs (4.2 s -> 3.0 s CPU, issue 54).  The engine pauses it
    during a run for the same reason.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and an atomic rename."""
    write_chunks_atomic(path, (data,))


def write_chunks_atomic(path: str | os.PathLike, chunks: Iterable[bytes]) -> None:
    """Write the concatenated ``chunks`` to ``path`` via a temporary file and an atomic
    rename (:func:`write_bytes_atomic` for a file too large to hold twice in memory)."""
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual permissions
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _compact(obj: Any) -> str:
    return _COMPACT.encode(obj)


def dumps_json(obj: Any, *, indent: int | None = 1) -> str:
    """Serialise ``obj`` the way kvopt writes every JSON file (UTF-8, no NaN).

    With ``indent`` (files), a top-level object gets one key per line and a list
    of objects (``jobs``, ``attempts``) one item per line, so files stay
    readable and diff well; ``indent=None`` gives one line (``--json`` output).
    """
    if indent is None or not isinstance(obj, dict):
        return json.dumps(obj, indent=indent, ensure_ascii=False, allow_nan=False, default=_default)
    lines = []
    for key, value in obj.items():
        head = f" {_compact(key)}: "
        if isinstance(value, EncodedItems):
            lines.append(f"{head}[\n{value.text}\n ]" if value.text else head + "[]")
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            items = ",\n".join(f"  {_compact(v)}" for v in value)
            lines.append(f"{head}[\n{items}\n ]")
        else:
            lines.append(head + _compact(value))
    return "{\n" + ",\n".join(lines) + "\n}" if lines else "{}"


class EncodedItems:
    """A list of objects already encoded as :func:`dumps_json` writes them in a file: one
    ``"  {…}"`` line per item, joined by ``",\n"`` (``text``; ``""`` for an empty list).

    A writer that knows its items' shape (a schedule's attempts) builds the text with one
    format string per item instead of one encoder call on a new dict (issue 54); the file
    is the same, byte for byte.  Only :func:`dumps_json` with ``indent`` reads it.
    """

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def write_json_atomic(path: str | os.PathLike, obj: Any, *, indent: int | None = 1) -> None:
    """Write ``obj`` as JSON to ``path`` atomically."""
    write_bytes_atomic(path, (dumps_json(obj, indent=indent) + "\n").encode("utf-8"))


def _default(obj: Any):
    # numpy scalars and arrays that slipped into a JSON payload
    try:
        import numpy as np

        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            return float(obj)
        if isinstance(obj, np.ndarray):
            return obj.tolist()
        if isinstance(obj, np.bool_):
            return bool(obj)
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serialisable")


#: One encoder for every item of a file: ``json.dumps`` with these options builds a
#: new ``JSONEncoder`` per call, which took a third of the time of writing a schedule
#: of 10⁵+ attempts (issue 54); the text is the same.
_COMPACT = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, default=_default, separators=(", ", ": ")
)
