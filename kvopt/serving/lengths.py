"""Length distributions and named length profiles (SPEC §10.1, "Length distributions").

A workload may draw prompt and response lengths from distributions instead of a trace.
A distribution is written as a string (``[workload]`` keys ``prompt`` and ``response``,
``kvopt gen workload --param prompt=…``) and parsed once by :func:`parse_length`:

* ``lognormal(mean=m, median=d)``: ``μ = ln d``, ``σ = √(2 ln(m/d))`` (``m > d > 0``: a
  lognormal's mean is ``exp(μ + σ²/2)``, so the mean fixes ``σ`` once the median fixes
  ``μ``); also ``lognormal(median=d, sigma=σ)`` and ``lognormal(mean=m, sigma=σ)``
  (``μ = ln m − σ²/2``; the third form is ours, for a source that states a mean only);
* ``uniform(low=a, high=b)``: integers ``a..b``, both included (``a ≤ b``);
* ``fixed(v)`` or ``fixed(value=v)``: always ``v``;
* ``empirical(PATH, column=NAME)``: values drawn with replacement from one column of a
  CSV file (a relative ``PATH`` in an experiment file is read beside that file).

Every distribution takes ``min=`` (default 1) and ``max=`` (default: none): a draw is
rounded to the nearest integer (half to even, numpy's ``rint``) and clipped to
``[min, max]``.

**Pairs and redraws.**  :func:`draw_pairs` draws ``n`` (prompt, response) pairs from a
:class:`Mixture` (a plain ``prompt``/``response`` pair is a mixture of one task); a pair
with ``s + o > M`` cannot be served, so the whole request (its task too) is drawn again
— rejection sampling: the lengths are those of the distribution *given that the request
fits*.  The count of rejected draws is returned (``redrawn``; a request rejected twice
counts twice), and the workload writes it into the instance's ``meta`` and the
experiment's rows.  After :data:`MAX_REDRAW_ROUNDS` rounds with requests still not
fitting, the distributions are bad input (they hardly fit in ``M``).

**Profiles** are data, not code: ``kvopt/serving/profiles/NAME.toml`` (shipped as package
data) gives a mixture of tasks, each with a weight and its two distributions, the
numbers they come from, and the source.  :func:`load_profile` reads one;
:func:`profile_names` lists them.

**Seeds.**  :func:`draw_pairs` takes a :class:`numpy.random.SeedSequence` and spawns three
streams from it (task, prompt, response): a changed response distribution leaves the
first draws of the prompts unchanged.  The workload passes its lengths stream, so draws
depend on the workload and the seed only, never on the policy.

Bad input raises :class:`~kvopt.errors.InputError` naming the field and the rule
(``mean ≤ median``, ``min > max``, an unknown distribution, a bad number, a missing
column, an unknown profile).
"""

from __future__ import annotations

import csv
import math
import os
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import InputError, did_you_mean

#: Distribution names :func:`parse_length` knows.
DISTRIBUTIONS = ("lognormal", "uniform", "fixed", "empirical")
#: Rounds of redrawing before the distributions are declared not to fit in memory.
MAX_REDRAW_ROUNDS = 100
#: Folder of the bundled profiles (package data: found in an editable install and a wheel).
PROFILE_DIR = Path(__file__).resolve().parent / "profiles"


def _fmt(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _bounds_text(lo: int, hi: int | None) -> str:
    return ("" if lo == 1 else f", min={lo}") + ("" if hi is None else f", max={hi}")


def _check_bounds(lo: int, hi: int | None, field: str) -> None:
    if isinstance(lo, bool) or not isinstance(lo, int) or lo < 1:
        raise InputError(f"min must be an integer >= 1, got {lo!r}", field=field)
    if hi is not None:
        if isinstance(hi, bool) or not isinstance(hi, int):
            raise InputError(f"max must be an integer, got {hi!r}", field=field)
        if lo > hi:
            raise InputError(f"min > max ({lo} > {hi})", field=field)


class _Clipped:
    """Shared part: round, clip to ``[min, max]``; subclasses give ``_raw(rng, n)``."""

    min: int
    max: int | None

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` lengths (int64), rounded to the nearest integer and clipped to ``[min, max]``."""
        raw = np.rint(np.asarray(self._raw(rng, n), dtype=float))
        hi = np.inf if self.max is None else self.max
        return np.clip(raw, self.min, hi).astype(np.int64)

    def _raw(self, rng: np.random.Generator, n: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True)
class Lognormal(_Clipped):
    """``exp(N(μ, σ²))``; two of ``mean``, ``median``, ``sigma`` given (module docstring)."""

    mean: float | None = None
    median: float | None = None
    sigma: float | None = None
    min: int = 1
    max: int | None = None

    def __post_init__(self) -> None:
        given = [k for k in ("mean", "median", "sigma") if getattr(self, k) is not None]
        if len(given) != 2:
            raise InputError("lognormal takes two of mean=, median=, sigma= (mean and median, "
                             f"median and sigma, or mean and sigma), got {', '.join(given) or 'none'}",
                             field="lognormal")  # fmt: skip
        for k in given:
            v = getattr(self, k)
            if not (math.isfinite(v) and v > 0):
                raise InputError(f"{k} must be a number > 0, got {v!r}", field="lognormal")
        if self.mean is not None and self.median is not None and self.mean <= self.median:
            raise InputError(f"mean ≤ median ({_fmt(self.mean)} ≤ {_fmt(self.median)}): a "
                             "lognormal's mean exceeds its median", field="lognormal")  # fmt: skip
        _check_bounds(self.min, self.max, "lognormal")

    @property
    def mu(self) -> float:
        if self.median is not None:
            return math.log(self.median)
        return math.log(self.mean) - self.s**2 / 2  # type: ignore[arg-type]

    @property
    def s(self) -> float:
        """σ, given or from mean and median."""
        if self.sigma is not None:
            return float(self.sigma)
        return math.sqrt(2 * math.log(self.mean / self.median))  # type: ignore[operator]

    def _raw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.lognormal(self.mu, self.s, size=n)

    def __str__(self) -> str:
        args = ", ".join(f"{k}={_fmt(getattr(self, k))}" for k in ("mean", "median", "sigma")
                         if getattr(self, k) is not None)  # fmt: skip
        return f"lognormal({args}{_bounds_text(self.min, self.max)})"


@dataclass(frozen=True)
class Uniform(_Clipped):
    """Integers ``low..high``, both included, each equally likely."""

    low: int
    high: int
    min: int = 1
    max: int | None = None

    def __post_init__(self) -> None:
        for k in ("low", "high"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int):
                raise InputError(f"{k} must be an integer, got {v!r}", field="uniform")
        if self.low > self.high:
            raise InputError(f"low > high ({self.low} > {self.high})", field="uniform")
        _check_bounds(self.min, self.max, "uniform")

    def _raw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.integers(self.low, self.high + 1, size=n)

    def __str__(self) -> str:
        return f"uniform(low={self.low}, high={self.high}{_bounds_text(self.min, self.max)})"


@dataclass(frozen=True)
class Fixed(_Clipped):
    """Always ``value`` (rounded and clipped like every draw)."""

    value: float
    min: int = 1
    max: int | None = None

    def __post_init__(self) -> None:
        if not math.isfinite(self.value):
            raise InputError(f"value must be a finite number, got {self.value!r}", field="fixed")
        _check_bounds(self.min, self.max, "fixed")

    def _raw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.full(n, float(self.value))

    def __str__(self) -> str:
        return f"fixed({_fmt(self.value)}{_bounds_text(self.min, self.max)})"


@lru_cache(maxsize=16)
def _column(path: str, column: str) -> np.ndarray:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = csv.reader(fh)
            header = next(rows, None)
            if header is None:
                raise InputError("the CSV file is empty", field="empirical", source=path)
            header = [h.strip() for h in header]
            if column not in header:
                raise InputError(f"no column {column!r} (columns: {', '.join(header)})"
                                 + did_you_mean(column, header), field="empirical",
                                 source=path)  # fmt: skip
            k = header.index(column)
            vals = []
            for line, row in enumerate(rows, start=2):
                cell = row[k].strip() if k < len(row) else ""
                if cell == "":
                    continue
                try:
                    v = float(cell)
                except ValueError:
                    v = math.nan
                if not math.isfinite(v):
                    raise InputError(f"line {line}: column {column!r}: not a number: {cell!r}",
                                     field="empirical", source=path)  # fmt: skip
                vals.append(v)
    except FileNotFoundError:
        raise InputError("file not found", field="empirical", source=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the file ({exc})", field="empirical", source=path) from None
    if not vals:
        raise InputError(f"column {column!r} has no values", field="empirical", source=path)
    return np.asarray(vals, dtype=float)


@dataclass(frozen=True)
class Empirical(_Clipped):
    """Values drawn with replacement from column ``column`` of the CSV file ``path``."""

    path: str
    column: str
    min: int = 1
    max: int | None = None

    def __post_init__(self) -> None:
        if not self.path or not self.column:
            raise InputError("needs a path and column=NAME", field="empirical")
        _check_bounds(self.min, self.max, "empirical")

    def values(self) -> np.ndarray:
        """The column's values (read once per path and column; errors name the file)."""
        return _column(self.path, self.column)

    def _raw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        vals = self.values()
        return vals[rng.integers(0, len(vals), size=n)]

    def rebased(self, base: str) -> Empirical:
        """The same distribution with a relative path read beside ``base`` (a folder)."""
        if os.path.isabs(self.path) or not base:
            return self
        return Empirical(os.path.normpath(os.path.join(base, self.path)), self.column,
                         self.min, self.max)  # fmt: skip

    def __str__(self) -> str:
        path = f'"{self.path}"' if re.search(r'[,()"\s]', self.path) else self.path
        return f"empirical({path}, column={self.column}{_bounds_text(self.min, self.max)})"


Length = Lognormal | Uniform | Fixed | Empirical

_ALLOWED = {
    "lognormal": ("mean", "median", "sigma"),
    "uniform": ("low", "high"),
    "fixed": ("value",),
    "empirical": ("path", "column"),
}
_SYNTAX = ("lognormal(mean=…, median=…), lognormal(median=…, sigma=…), uniform(low=…, high=…), "
           "fixed(value), empirical(PATH, column=NAME)")  # fmt: skip


def _split_args(body: str, field: str) -> list[str]:
    """Split on commas outside double quotes."""
    out, cur, quoted = [], [], False
    for ch in body:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if quoted:
        raise InputError("unclosed double quote", field=field)
    out.append("".join(cur).strip())
    return [] if out == [""] else out


def _number(key: str, text: str, field: str, integer: bool) -> float | int:
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not math.isfinite(v):
        raise InputError(f"{key}: bad number {text!r}", field=field)
    if integer:
        if v != int(v):
            raise InputError(f"{key}: must be an integer, got {text!r}", field=field)
        return int(v)
    return v


def parse_length(text: str, field: str = "length", base: str = "") -> Length:
    """A distribution from its string (module docstring); ``field`` names it in errors.

    ``base`` is the folder a relative ``empirical`` path is read from (the experiment
    file's folder); without it the path is relative to the working folder.
    """
    if not isinstance(text, str):
        raise InputError(f"must be a string such as {_SYNTAX}, got {text!r}", field=field)
    m = re.fullmatch(r"\s*([A-Za-z_]+)\s*\((.*)\)\s*", text, flags=re.S)
    if not m:
        raise InputError(f"not a distribution: {text!r} (one of {_SYNTAX})", field=field)
    name, body = m.group(1).lower(), m.group(2)
    if name not in _ALLOWED:
        raise InputError(f"unknown distribution {name!r} (known: {', '.join(DISTRIBUTIONS)})"
                         + did_you_mean(name, DISTRIBUTIONS), field=field)  # fmt: skip
    kw: dict[str, str] = {}
    for k, arg in enumerate(_split_args(body, field)):
        key, eq, val = arg.partition("=")
        if not eq:  # positional: the first argument of fixed and empirical
            if k != 0 or name not in ("fixed", "empirical"):
                raise InputError(f"{name}: argument {arg!r} needs a name (KEY=VALUE)",
                                 field=field)  # fmt: skip
            key, val = _ALLOWED[name][0], arg
        key, val = key.strip(), val.strip()
        allowed = (*_ALLOWED[name], "min", "max")
        if key not in allowed:
            raise InputError(f"{name}: unknown argument {key!r} (allowed: {', '.join(allowed)})"
                             + did_you_mean(key, allowed), field=field)  # fmt: skip
        if key in kw:
            raise InputError(f"{name}: {key} given twice", field=field)
        kw[key] = val
    missing = [k for k in _ALLOWED[name] if k not in kw and name != "lognormal"]
    if missing:
        raise InputError(f"{name}: missing {missing[0]}= ({_SYNTAX})", field=field)
    bounds = {k: _number(k, kw.pop(k), field, True) for k in ("min", "max") if k in kw}
    try:
        if name == "empirical":
            dist: Length = Empirical(kw["path"].strip('"'), kw["column"].strip('"'), **bounds)
            return dist.rebased(base) if base else dist
        integer = name == "uniform"
        nums = {k: _number(k, v, field, integer) for k, v in kw.items()}
        if name == "lognormal":
            return Lognormal(**nums, **bounds)
        if name == "uniform":
            return Uniform(**nums, **bounds)
        return Fixed(**nums, **bounds)
    except InputError as err:
        raise InputError(err.rule, field=field, source=err.source) from None


# ------------------------------------------------------------------------- mixtures, pairs
@dataclass(frozen=True)
class Task:
    """One component of a mixture: a weight, two distributions, the numbers behind them."""

    name: str
    weight: float
    prompt: Length
    response: Length
    data: tuple[tuple[str, object], ...] = ()  # the source's numbers (profile files)


@dataclass(frozen=True)
class Mixture:
    """Requests drawn task by task: a task (by weight), then its prompt and response."""

    tasks: tuple[Task, ...]
    name: str = ""

    def __post_init__(self) -> None:
        if not self.tasks:
            raise InputError("a mixture needs at least one task", field=self.name or "profile")
        for t in self.tasks:
            if not (math.isfinite(t.weight) and t.weight > 0):
                raise InputError(f"task {t.name!r}: weight must be > 0, got {t.weight!r}",
                                 field=self.name or "profile")  # fmt: skip

    @classmethod
    def pair(cls, prompt: Length, response: Length) -> Mixture:
        return cls((Task("", 1.0, prompt, response),))

    def min_total(self) -> int:
        """The shortest request any task can give (``min`` of prompt plus ``min`` of response)."""
        return min(t.prompt.min + t.response.min for t in self.tasks)


def draw_pairs(mix: Mixture, n: int, memory: int, seq: np.random.SeedSequence,
               field: str = "prompt") -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:  # fmt: skip
    """``n`` requests of ``mix`` that fit in ``memory``: (prompts, responses, task index,
    redrawn), redrawing every request with ``s + o > memory`` (module docstring)."""
    if mix.min_total() > memory:
        raise InputError(f"no request fits: the shortest prompt + response is {mix.min_total()}"
                         f" > memory {memory}", field=field)  # fmt: skip
    task_rng, p_rng, r_rng = (np.random.default_rng(s) for s in seq.spawn(3))
    w = np.array([t.weight for t in mix.tasks], dtype=float)
    w = w / w.sum()
    s = np.zeros(n, dtype=np.int64)
    o = np.zeros(n, dtype=np.int64)
    task = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    redrawn = 0
    for round_ in range(MAX_REDRAW_ROUNDS + 1):
        k = len(todo)
        if k == 0:
            break
        if round_ == MAX_REDRAW_ROUNDS:
            raise InputError(f"after {MAX_REDRAW_ROUNDS} rounds of redrawing, {k} of {n} "
                             f"requests still have prompt + response > memory {memory} "
                             f"({redrawn} redrawn): the lengths hardly fit (set max= or a "
                             "larger memory)", field=field)  # fmt: skip
        tk = task_rng.choice(len(w), size=k, p=w) if len(w) > 1 else np.zeros(k, np.int64)
        for j, t in enumerate(mix.tasks):
            sel = tk == j
            c = int(sel.sum())
            if c:
                s[todo[sel]] = t.prompt.draw(p_rng, c)
                o[todo[sel]] = t.response.draw(r_rng, c)
        task[todo] = tk
        bad = s[todo] + o[todo] > memory
        todo = todo[bad]
        redrawn += int(bad.sum())
    return s, o, task, redrawn


# -------------------------------------------------------------------------------- profiles
@dataclass(frozen=True)
class Profile:
    """A named length profile (a :class:`Mixture` with its source), read from data."""

    name: str
    description: str
    source: str
    units: str
    spread: str
    mixture: Mixture
    path: str = ""


def profile_names() -> tuple[str, ...]:
    """The bundled profiles, by name (``kvopt/serving/profiles/*.toml``)."""
    return tuple(sorted(p.stem for p in PROFILE_DIR.glob("*.toml")))


@lru_cache(maxsize=8)
def load_profile(name: str) -> Profile:
    """The bundled profile ``name``; an unknown name is bad input naming the known ones."""
    names = profile_names()
    if name not in names:
        raise InputError(f"unknown profile {name!r} (known: {', '.join(names)})"
                         + did_you_mean(name, names), field="profile")  # fmt: skip
    path = PROFILE_DIR / f"{name}.toml"
    src = str(path)
    with open(path, "rb") as fh:
        d = tomllib.load(fh)
    tasks = []
    for k, t in enumerate(d.get("task", [])):
        where = f"task[{k}] {t.get('name', '')}".strip()
        try:
            prompt = parse_length(t["prompt"], field=f"{where}.prompt")
            response = parse_length(t["response"], field=f"{where}.response")
        except KeyError as exc:
            raise InputError(f"missing {exc.args[0]}", field=where, source=src) from None
        except InputError as err:
            raise InputError(err.rule, field=err.field, source=src) from None
        data = tuple((key, v) for key, v in t.items()
                     if key not in ("name", "weight", "prompt", "response"))  # fmt: skip
        tasks.append(Task(str(t.get("name", "")), float(t.get("weight", 1.0)), prompt,
                          response, data))  # fmt: skip
    try:
        mix = Mixture(tuple(tasks), name=name)
    except InputError as err:
        raise InputError(err.rule, field=err.field, source=src) from None
    return Profile(name, str(d.get("description", "")), str(d.get("source", "")),
                   str(d.get("units", "")), str(d.get("spread", "")), mix, src)  # fmt: skip


__all__ = [
    "DISTRIBUTIONS",
    "MAX_REDRAW_ROUNDS",
    "PROFILE_DIR",
    "Empirical",
    "Fixed",
    "Length",
    "Lognormal",
    "Mixture",
    "Profile",
    "Task",
    "Uniform",
    "draw_pairs",
    "load_profile",
    "parse_length",
    "profile_names",
]
