"""References to user code: a policy or an instance family written outside kvopt (SPEC §4).

A **reference** names a Python object kvopt did not ship:

* ``path/to/file.py:Name`` — a file anywhere, imported under a stable module
  name (``kvopt_user_<stem>_<hash of the absolute path>``), with its folder on
  ``sys.path`` while it is imported, so it may import its sibling modules;
* ``package.module:Name`` — anything importable;
* ``name`` — a name an installed package registers in an entry-point group
  (:data:`POLICY_GROUP` ``kvopt.policies`` or :data:`FAMILY_GROUP`
  ``kvopt.families``), as pytest plugins do;
* (API) the object itself: :func:`register_object` gives it a reference
  (``module:Name`` when it is importable by that name, else
  ``<module>:Name`` for a class defined in a notebook or a script, which is
  shipped to worker processes by value with cloudpickle).

:func:`load` returns the object with its :class:`UserCode` — the reference,
its kind, the absolute path and the SHA-256 of the source file (what records
store, SPEC §8, so that ``kvopt check`` can tell when the file changed) and
what a worker needs to load the same code (:func:`install`: the file's source
text, or the pickled object), so that local worker processes and Dask workers
on other machines run exactly the code that was loaded here.

Every failure is an :class:`~kvopt.errors.InputError` whose source is the
reference (the command line prints one line and exits with status 2): a
missing file, a file or module that raises on import (its exception named), a
missing name, an unknown entry point.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import pickle
import re
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InputError, PolicyError, UserCodeError, UserPolicyError

POLICY_GROUP = "kvopt.policies"
FAMILY_GROUP = "kvopt.families"

#: Kinds of reference (:attr:`UserCode.kind`).
KINDS = ("file", "module", "entry-point", "object")


@dataclass(frozen=True)
class UserCode:
    """Where a user object comes from, and what a worker needs to load it again.

    ``reference`` is the text that names it (as given; for an object, the one
    :func:`register_object` made); ``kind`` one of :data:`KINDS`; ``path`` the
    absolute path of its source file when it has one; ``sha256`` that file's
    digest (of the pickled object for an object with no source file); ``target``
    the ``module:Name`` an entry point or object resolves to.  ``source`` (a
    file's text) and ``pickled`` (an object's bytes) travel to workers and are
    left out of :meth:`to_dict`.
    """

    reference: str
    kind: str
    attr: str
    path: str | None = None
    sha256: str | None = None
    target: str | None = None
    module: str | None = None
    source: str | None = None
    pickled: bytes | None = None

    def to_dict(self) -> dict[str, Any]:
        """What a record, a campaign log and a growth report store (no source, no bytes)."""
        d: dict[str, Any] = {"reference": self.reference, "kind": self.kind}
        for key in ("path", "sha256", "target"):
            value = getattr(self, key)
            if value is not None:
                d[key] = value
        return d

    def shippable(self) -> UserCode:
        """This code with what a worker on another machine needs to load it (:func:`install`)."""
        if self.kind == "file" and self.source is None and self.path:
            return _replace(self, source=Path(self.path).read_text(encoding="utf-8"))
        return self


def _replace(code: UserCode, **changes: Any) -> UserCode:
    from dataclasses import replace

    return replace(code, **changes)


def is_reference(text: str) -> bool:
    """Whether ``text`` has the form of a file or module reference (``X:Name``)."""
    return ":" in text


def sha256_of(path: str | os.PathLike) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def split_reference(ref: str) -> tuple[str, str]:
    """``"a/b.py:Name"`` → ``("a/b.py", "Name")``; errors name the reference."""
    target, sep, attr = ref.rpartition(":")
    if not sep or not target.strip() or not attr.strip():
        raise InputError("expected path/to/file.py:Name or package.module:Name", source=repr(ref))
    attr = attr.strip()
    if not all(part.isidentifier() for part in attr.split(".")):
        raise InputError(f"{attr!r} is not a Python name", source=repr(ref))
    return target.strip(), attr


def _is_file_target(target: str) -> bool:
    return target.endswith(".py") or "/" in target or os.sep in target


def module_name_for(path: Path) -> str:
    """The stable module name a file is imported under (same path → same name, in every process)."""
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    stem = re.sub(r"\W", "_", path.stem)
    return f"kvopt_user_{stem}_{digest}"


# module name → sha256 of the source it was executed from (this process)
_LOADED: dict[str, str] = {}
# reference → (object, UserCode) of the objects handed to the API (``<module>:Name``)
_OBJECTS: dict[str, tuple[Any, UserCode]] = {}
# reference → (object, UserCode) installed in a worker from a shipped bundle (:func:`install`)
_SHIPPED: dict[str, tuple[Any, UserCode]] = {}


def _exec_module(name: str, path: Path, source: str, ref: str):
    """Execute ``source`` as module ``name`` (its ``__file__`` is ``path``)."""
    spec = importlib.util.spec_from_loader(name, loader=None, origin=str(path))
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    sys.modules[name] = module  # before exec: dataclasses and pickling look the module up
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)
    except (Exception, SystemExit) as exc:  # a user's file may raise anything
        sys.modules.pop(name, None)
        raise InputError(
            f"importing {path} raised {type(exc).__name__}: {exc}", source=repr(ref)
        ) from None
    finally:
        if added:
            try:
                sys.path.remove(folder)
            except ValueError:
                pass
    return module


def _load_file(target: str, attr: str, ref: str) -> tuple[Any, UserCode]:
    path = Path(target).expanduser()
    path = path.resolve() if path.exists() else path.absolute()
    if not path.is_file():
        raise InputError(f"file {target} not found", source=repr(ref))
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    name = module_name_for(path)
    module = sys.modules.get(name)
    if module is None or _LOADED.get(name) != sha:
        try:
            source = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{path} is not UTF-8 text", source=repr(ref)) from None
        module = _exec_module(name, path, source, ref)
        _LOADED[name] = sha
    obj = _getattr(module, attr, ref, f"file {target}")
    return obj, UserCode(ref, "file", attr, path=str(path), sha256=sha, module=name)


def _getattr(module: Any, attr: str, ref: str, where: str) -> Any:
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InputError(f"{where} has no {attr!r}", source=repr(ref)) from None
    return obj


def _source_file(obj: Any) -> str | None:
    try:
        f = inspect.getsourcefile(obj)
    except (TypeError, OSError):
        return None
    return str(Path(f).resolve()) if f and Path(f).is_file() else None


def _load_module(target: str, attr: str, ref: str, kind: str = "module") -> tuple[Any, UserCode]:
    try:
        module = importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name and target.startswith(exc.name):
            raise InputError(f"no module named {exc.name!r}", source=repr(ref)) from None
        raise InputError(
            f"importing {target} raised ModuleNotFoundError: {exc}", source=repr(ref)
        ) from None
    except Exception as exc:  # noqa: BLE001 - a user's module may raise anything
        raise InputError(
            f"importing {target} raised {type(exc).__name__}: {exc}", source=repr(ref)
        ) from None
    obj = _getattr(module, attr, ref, f"module {target}")
    path = _source_file(obj) or getattr(module, "__file__", None)
    sha = sha256_of(path) if path and Path(path).is_file() else None
    code = UserCode(ref, kind, attr, path=path, sha256=sha, target=f"{target}:{attr}",
                    module=target)  # fmt: skip
    return obj, code


def entry_points(group: str) -> dict[str, Any]:
    """The entry points installed packages register in ``group``, by name."""
    from importlib.metadata import entry_points as _eps

    return {ep.name: ep for ep in _eps(group=group)}


def _load_entry_point(name: str, group: str) -> tuple[Any, UserCode]:
    eps = entry_points(group)
    if name not in eps:
        raise KeyError(name)
    ep = eps[name]
    target, _, attr = ep.value.partition(":")
    obj, code = _load_module(target.strip(), attr.strip(), name, kind="entry-point")
    dist = getattr(ep, "dist", None)
    if dist is not None:
        code = _replace(code, target=f"{code.target} ({dist.name} {dist.version})")
    return obj, code


def load(ref: str, group: str) -> tuple[Any, UserCode]:
    """The object ``ref`` names (see the module docstring) and where it comes from.

    A bare name is looked up in the entry-point ``group``; :class:`KeyError` when
    no installed package registers it (the caller words "unknown policy").
    """
    if ref in _OBJECTS:
        return _OBJECTS[ref]
    shipped = _SHIPPED.get(ref)
    try:
        found = _load(ref, group)
    except (InputError, KeyError):
        if shipped is not None:  # a worker without the file: the code the campaign shipped
            return shipped
        raise
    if shipped is not None and found[1].sha256 != shipped[1].sha256:
        return shipped  # another file of that name here: run what the campaign loaded
    return found


def _load(ref: str, group: str) -> tuple[Any, UserCode]:
    if not is_reference(ref):
        return _load_entry_point(ref, group)
    target, attr = split_reference(ref)
    if target.startswith("<") and target.endswith(">"):
        raise InputError(
            "an object defined in a notebook or script session is known only to that session "
            "(and the workers it started); save the class to a file and use path/to/file.py:Name",
            source=repr(ref),
        )
    if _is_file_target(target):
        return _load_file(target, attr, ref)
    return _load_module(target, attr, ref)


def load_file_at(ref: str, path: str) -> tuple[Any, UserCode]:
    """Load the ``Name`` of ``ref`` from ``path`` (a record's stored absolute path)."""
    _, attr = split_reference(ref)
    obj, code = _load_file(path, attr, ref)
    return obj, code


def register_object(obj: Any) -> tuple[str, UserCode]:
    """A reference for an object handed to the API (a class, a function).

    Importable by its module and name (and not from ``__main__``) → ``module:Name``,
    loaded like any module reference.  Otherwise (a notebook cell, a script) the
    object is registered in this process under ``<module>:Name`` and pickled by
    value (cloudpickle) for worker processes (:func:`install`).
    """
    module = getattr(obj, "__module__", None) or "__main__"
    qual = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if not qual or "<locals>" in qual:
        qual = getattr(obj, "__name__", "object")
    for ref, (known, code) in _OBJECTS.items():
        if known is obj:
            return ref, code
    if module != "__main__" and not module.startswith("kvopt_user_"):
        try:
            found, code = _load_module(module, qual, f"{module}:{qual}")
        except InputError:
            found = None
        if found is obj:
            return f"{module}:{qual}", code
    if module.startswith("kvopt_user_"):  # a class of a file loaded by reference
        for ref, (known, code) in list(_OBJECTS.items()):
            if known is obj:
                return ref, code
        path = getattr(sys.modules.get(module), "__file__", None)
        if path:
            ref = f"{path}:{qual}"
            found, code = _load_file(path, qual, ref)
            if found is obj:
                return ref, code
    try:
        import cloudpickle
    except ImportError:  # pragma: no cover - cloudpickle is a core dependency
        cloudpickle = None
    pickled = cloudpickle.dumps(obj) if cloudpickle is not None else pickle.dumps(obj)
    path = _source_file(obj)
    try:
        text = inspect.getsource(obj)
        sha = hashlib.sha256(text.encode()).hexdigest()
    except (TypeError, OSError):
        sha = hashlib.sha256(pickled).hexdigest()
    base = f"<{module}>:{qual}"
    ref = base
    k = 2
    while ref in _OBJECTS:  # another object of the same name (a cell run again with changes)
        ref = f"{base}#{k}"
        k += 1
    code = UserCode(ref, "object", qual, path=path, sha256=sha, target=f"{module}:{qual}",
                    pickled=pickled)  # fmt: skip
    _OBJECTS[ref] = (obj, code)
    return ref, code


def install(code: UserCode) -> None:
    """Make ``code.reference`` loadable in this (worker) process, exactly as it was loaded there.

    A file whose path holds the same bytes here is imported from it; otherwise
    its shipped ``source`` is executed under the same module name.  An object
    is unpickled and registered under its reference.  Module and entry-point
    references need the package installed where the worker runs.
    """
    if code.kind == "object":
        known = _OBJECTS.get(code.reference)
        if known is not None and known[1].sha256 == code.sha256:
            return  # installed before (a worker reused across tasks and campaigns)
        if code.pickled is None:
            raise InputError("the object was not shipped with its bytes", source=code.reference)
        _OBJECTS[code.reference] = (pickle.loads(code.pickled), code)
        return
    if code.kind != "file" or code.path is None:
        return  # a module or entry point: the package must be installed where this runs
    known = _SHIPPED.get(code.reference)
    if known is not None and known[1].sha256 == code.sha256:
        return
    try:
        if _load(code.reference, POLICY_GROUP)[1].sha256 == code.sha256:
            return  # the reference finds the same bytes here (this process, a local worker)
    except (InputError, KeyError):
        pass
    path = Path(code.path)
    name = code.module or module_name_for(path)
    if path.is_file() and sha256_of(path) == code.sha256:
        obj, _ = _load_file(str(path), code.attr, code.reference)  # the same bytes, here
    else:
        if code.source is None:
            raise InputError(
                f"file {path} is not on this machine (or differs) and its source was not shipped",
                source=code.reference,
            )
        if not (_LOADED.get(name) == code.sha256 and name in sys.modules):
            _exec_module(name, path, code.source, code.reference)
            _LOADED[name] = code.sha256 or ""
        obj = _getattr(sys.modules[name], code.attr, code.reference, f"file {path}")
    _SHIPPED[code.reference] = (obj, code)


def call_user(fn: Any, ref: str, kind: str, /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` for a user's class or function (``kind``: ``"policy"`` or
    ``"family"``): whatever it raises becomes a
    :class:`~kvopt.errors.UserCodeError` naming the reference, the call with its keyword
    arguments, the user's frames and the exception (an :class:`InputError` it raises itself
    passes through: the user's own word that an argument is bad)."""
    try:
        return fn(*args, **kwargs)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - a user's code may raise anything
        name = getattr(fn, "__name__", "the call")
        if isinstance(fn, type):
            name += ".__init__"
        given = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        raise user_error(exc, ref, kind=kind, where=f"in {name}({given})") from exc


_KVOPT_DIR = Path(__file__).resolve().parent
_LIBRARY_DIRS = tuple(
    str(Path(p).resolve())
    for key in ("stdlib", "platstdlib", "purelib", "platlib")
    if (p := sysconfig.get_paths().get(key))
)


def _shown_path(filename: str) -> str:
    """A frame's file as the user would type it: relative to the working folder when inside it."""
    try:
        return str(Path(filename).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return filename


def user_frames(exc: BaseException) -> tuple[tuple[str, int, str, str], ...]:
    """The frames of ``exc``'s traceback that are the user's own code, outermost first, as
    ``(file, line, function, source line)``: frames in kvopt are left out, and so are the
    standard library's and installed packages' unless nothing else remains."""
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__)
        if not Path(f.filename).resolve().is_relative_to(_KVOPT_DIR)
    ]  # fmt: skip
    own = [f for f in frames if not str(Path(f.filename).resolve()).startswith(_LIBRARY_DIRS)]
    return tuple(
        (_shown_path(f.filename), int(f.lineno or 0), f.name, (f.line or "").strip())
        for f in (own or frames)
    )


def user_error(
    exc: BaseException,
    ref: str,
    *,
    kind: str = "policy",
    where: str | None = None,
    hint: str | None = None,
    traceback_of: BaseException | None = None,
) -> UserCodeError:
    """The :class:`~kvopt.errors.UserCodeError` for ``exc`` raised by the user's code ``ref``:
    a :class:`~kvopt.errors.UserPolicyError` when ``exc`` is the engine's
    :class:`~kvopt.errors.PolicyError` (the policy broke the model).  The frames are those
    of ``traceback_of`` when given (the refused decision the engine rewords)."""
    if isinstance(exc, UserCodeError):
        return exc
    text = str(exc)
    cls: type[UserCodeError] = UserCodeError
    if isinstance(exc, PolicyError):
        cls = UserPolicyError
        for prefix in (f"policy {ref!r}: ",):  # the engine's own prefix: named once
            text = text.removeprefix(prefix)
    frames = user_frames(traceback_of if traceback_of is not None else exc)
    return cls(ref, type(exc).__name__, text, kind=kind, where=where, frames=frames, hint=hint)


def describe_change(stored: dict[str, Any], ref: str) -> str | None:
    """Why the code a record names cannot be replayed as that code now, or ``None``.

    ``stored`` is the record's ``policy_source`` (or ``family_source``): a file
    that is missing, or whose SHA-256 differs from the one stored, is reported.
    """
    path = stored.get("path")
    sha = stored.get("sha256")
    kind = stored.get("kind")
    if kind == "object":
        if ref in _OBJECTS and _OBJECTS[ref][1].sha256 == sha:
            return None
        return (
            f"{ref} was defined in a notebook or script session, not in a file: it cannot be "
            "re-imported to replay the record (save the class to a file and search again)"
        )
    if not path:
        return None
    if not Path(path).is_file():
        return f"the source file {path} of {ref} is missing"
    now = sha256_of(path)
    if sha and now != sha:
        return (
            f"the source file {path} of {ref} has changed since the record was made "
            f"(SHA-256 {sha[:12]}… in the record, {now[:12]}… now): the record is not "
            "re-checkable as that policy"
        )
    return None


__all__ = [
    "FAMILY_GROUP",
    "KINDS",
    "POLICY_GROUP",
    "UserCode",
    "call_user",
    "describe_change",
    "entry_points",
    "install",
    "is_reference",
    "load",
    "load_file_at",
    "module_name_for",
    "register_object",
    "sha256_of",
    "split_reference",
    "user_error",
    "user_frames",
]
