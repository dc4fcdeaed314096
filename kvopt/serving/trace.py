"""Request traces (SPEC §3, "Trace CSV") and instances sampled from them.

A trace CSV has a header row and one request per row, with a prompt-token
column and a generated-token column; the Azure LLM inference trace 2023
layout ``TIMESTAMP,ContextTokens,GeneratedTokens`` loads as is.  Recognised
column names (case-insensitive):

* prompt:    ``ContextTokens``, ``prompt``, ``prompt_tokens``, ``input_tokens``, ``context_tokens``,
  ``Request tokens`` (BurstGPT), ``input_length`` (Mooncake)
* response:  ``GeneratedTokens``, ``response``, ``response_tokens``, ``output_tokens``, ``generated_tokens``,
  ``Response tokens`` (BurstGPT), ``output_length`` (Mooncake)
* timestamp: ``TIMESTAMP``, ``timestamp``, ``time``, ``arrival_time`` (optional; ISO date-time or seconds)

So the Azure LLM inference traces 2023 and 2024 (same columns) and BurstGPT
(``Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type``) load as
they are.  A ``.jsonl`` file is read as one JSON object per line with the same keys
(Mooncake-style ``{"timestamp": …, "input_length": …, "output_length": …}``); its
``timestamp`` is in **milliseconds**, Mooncake's unit (seconds = timestamp / 1000).

A folder is read as all its ``*.csv`` files merged by timestamp (stable, in
file-name order for equal stamps).  The bundled Azure trace lives in
``instances/traces/azure-llm-2023/`` with its NOTICE and LICENSE.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..instance import Instance, Job

PROMPT_COLUMNS = (
    "contexttokens",
    "prompt",
    "prompt_tokens",
    "input_tokens",
    "context_tokens",
    "request tokens",
    "input_length",
)
RESPONSE_COLUMNS = (
    "generatedtokens",
    "response",
    "response_tokens",
    "output_tokens",
    "generated_tokens",
    "response tokens",
    "output_length",
)
TIME_COLUMNS = ("timestamp", "time", "arrival_time")

#: Default decode rounds per second when trace timestamps become arrival rounds
#: (about 20 ms per decode iteration, typical of a busy replica).
DEFAULT_ROUNDS_PER_SECOND = 50.0


def bundled_trace_dir() -> Path:
    """The bundled Azure 2023 trace folder (``KVOPT_TRACE_DIR`` overrides)."""
    env = os.environ.get("KVOPT_TRACE_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "instances" / "traces" / "azure-llm-2023"


@dataclass(frozen=True)
class Trace:
    """Requests of a trace: ``prompt``, ``response`` (int64) and ``timestamp`` (seconds, NaN if none)."""

    prompt: np.ndarray
    response: np.ndarray
    timestamp: np.ndarray
    source: str

    def __len__(self) -> int:
        return len(self.prompt)


def _parse_time(text: str) -> float:
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    main, _, frac = text.partition(".")
    dt = datetime.fromisoformat(main)
    return dt.timestamp() + (float("0." + frac) if frac else 0.0)


def _find(header: list[str], names: tuple[str, ...]) -> int | None:
    low = [h.strip().lower() for h in header]
    for name in names:
        if name in low:
            return low.index(name)
    return None


def _read_csv(path: Path) -> tuple[list[int], list[int], list[float]]:
    src = str(path)
    try:
        fh = open(path, newline="", encoding="utf-8")
    except FileNotFoundError:
        raise InputError("file not found", source=src) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", source=src) from None
    with fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise InputError(
                "empty file, expected a header row", field="header", source=src
            ) from None
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(f"not a readable CSV ({exc})", source=src) from None
        ip = _find(header, PROMPT_COLUMNS)
        io = _find(header, RESPONSE_COLUMNS)
        it = _find(header, TIME_COLUMNS)
        if ip is None:
            raise InputError(
                f"no prompt-token column (expected one of {', '.join(PROMPT_COLUMNS)})",
                field="header",
                source=src,
            )
        if io is None:
            raise InputError(
                f"no generated-token column (expected one of {', '.join(RESPONSE_COLUMNS)})",
                field="header",
                source=src,
            )
        prompts, responses, times = [], [], []
        try:
            for line_no, row in enumerate(reader, start=2):
                if not row or all(not c.strip() for c in row):
                    continue
                vals = []
                for col, name in ((ip, header[ip]), (io, header[io])):
                    try:
                        vals.append(int(row[col]))
                    except (ValueError, IndexError):
                        got = row[col] if col < len(row) else "nothing"
                        raise InputError(
                            f"must be an integer, got {got!r}",
                            field=f"line {line_no}, column {name}",
                            source=src,
                        ) from None
                prompts.append(vals[0])
                responses.append(vals[1])
                if it is not None:
                    try:
                        times.append(_parse_time(row[it]))
                    except (ValueError, IndexError):
                        raise InputError(
                            "not a timestamp",
                            field=f"line {line_no}, column {header[it]}",
                            source=src,
                        ) from None
                else:
                    times.append(float("nan"))
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(f"not a readable CSV ({exc})", source=src) from None
    return prompts, responses, times


def _read_jsonl(path: Path) -> tuple[list[int], list[int], list[float]]:
    """Mooncake-style JSONL: one object per line with a prompt and a response key (the
    names of :data:`PROMPT_COLUMNS`, :data:`RESPONSE_COLUMNS`), optional ``timestamp`` in ms."""
    import json

    src = str(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError("file not found", source=src) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file ({exc})", source=src) from None
    prompts, responses, times = [], [], []
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg})", field=f"line {line_no}",
                             source=src) from None  # fmt: skip
        if not isinstance(obj, dict):
            raise InputError("must be a JSON object", field=f"line {line_no}", source=src)
        keys = list(obj)
        ip, io = _find(keys, PROMPT_COLUMNS), _find(keys, RESPONSE_COLUMNS)
        for idx, what, names in ((ip, "prompt-token", PROMPT_COLUMNS),
                                 (io, "generated-token", RESPONSE_COLUMNS)):  # fmt: skip
            if idx is None:
                raise InputError(f"no {what} key (expected one of {', '.join(names)})",
                                 field=f"line {line_no}", source=src)  # fmt: skip
        vals = []
        for idx in (ip, io):
            v = obj[keys[idx]]
            if isinstance(v, bool) or not isinstance(v, int):
                raise InputError(f"must be an integer, got {v!r}",
                                 field=f"line {line_no}, {keys[idx]}", source=src)  # fmt: skip
            vals.append(v)
        prompts.append(vals[0])
        responses.append(vals[1])
        it = _find(keys, TIME_COLUMNS)
        ts = obj[keys[it]] if it is not None else None
        if ts is not None and (isinstance(ts, bool) or not isinstance(ts, int | float)):
            raise InputError(f"must be a number (ms), got {ts!r}",
                             field=f"line {line_no}, {keys[it]}", source=src)  # fmt: skip
        times.append(float("nan") if ts is None else float(ts) / 1000.0)
    return prompts, responses, times


def load_trace(path: str | os.PathLike) -> Trace:
    """Read a trace CSV (or ``.jsonl``), or every ``*.csv`` of a folder merged by timestamp."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*.csv"))
        if not files:
            raise InputError("folder holds no .csv file", source=str(p))
    else:
        files = [p]
    s: list[int] = []
    o: list[int] = []
    t: list[float] = []
    for f in files:
        a, b, c = _read_jsonl(f) if f.suffix.lower() == ".jsonl" else _read_csv(f)
        s += a
        o += b
        t += c
    ts = np.asarray(t, dtype=np.float64)
    order = (
        np.argsort(ts, kind="stable")
        if len(files) > 1 and not np.isnan(ts).any()
        else np.arange(len(s))
    )
    return Trace(
        prompt=np.asarray(s, dtype=np.int64)[order],
        response=np.asarray(o, dtype=np.int64)[order],
        timestamp=ts[order],
        source=str(p),
    )


def usable_requests(trace: Trace, memory: int) -> np.ndarray:
    """Positions (ascending) of the requests of ``trace`` that an instance with budget
    ``memory`` can serve: both lengths at least 1 and ``prompt + response ≤ memory``."""
    tr = trace
    return np.flatnonzero(
        (tr.prompt >= 1) & (tr.response >= 1) & (tr.prompt + tr.response <= memory)
    )


def trace_instance(
    trace: Trace | str | os.PathLike | None = None,
    n: int = 20,
    memory: int = 16384,
    seed: int = 0,
    *,
    mode: str = "head",
    offset: int = 0,
    arrivals: bool = False,
    rounds_per_second: float = DEFAULT_ROUNDS_PER_SECOND,
    name: str = "",
) -> Instance:
    """Sample ``n`` requests of a trace as an instance with memory budget ``memory``.

    Requests with a zero length or with ``prompt + response > memory`` cannot be
    served and are skipped (their count goes to ``meta.skipped``).  ``mode``:
    ``head`` takes the first ``n`` usable requests from position ``offset``;
    ``random`` draws ``n`` of them without replacement (seeded) and keeps trace
    order.  With ``arrivals``, request ``i`` arrives at round
    ``⌊(t_i − t_first) · rounds_per_second⌋``; otherwise all arrive at 0.
    """
    if trace is None:
        trace = bundled_trace_dir()
    tr = trace if isinstance(trace, Trace) else load_trace(trace)
    if mode not in ("head", "random"):
        raise InputError(f"must be head or random, got {mode!r}", source="--param mode")
    usable = usable_requests(tr, memory)
    skipped = len(tr) - len(usable)
    if mode == "head":
        pick = usable[offset : offset + n]
    else:
        if n > len(usable):
            pick = usable
        else:
            rng = np.random.default_rng(seed)
            pick = np.sort(rng.choice(usable, size=n, replace=False))
    if len(pick) < n:
        raise InputError(
            f"the trace has only {len(pick)} usable requests (prompt + response <= {memory}) "
            f"from offset {offset}, asked for {n}",
            source="--param n",
        )
    if arrivals:
        if np.isnan(tr.timestamp[pick]).any():
            raise InputError("the trace has no timestamp column", source="--param arrivals")
        t0 = tr.timestamp[pick].min() if len(pick) else 0.0
        arr = np.floor((tr.timestamp[pick] - t0) * rounds_per_second).astype(np.int64)
    else:
        arr = np.zeros(len(pick), dtype=np.int64)
    jobs = tuple(
        Job(
            prompt=int(tr.prompt[k]),
            response=int(tr.response[k]),
            arrival=int(a),
            id=f"row-{int(k)}",
        )
        for k, a in zip(pick, arr)
    )
    meta = {
        "source": f"trace {Path(tr.source).name}",
        "trace": Path(tr.source).name,
        "rows": int(len(tr)),
        "skipped": int(skipped),
        "mode": mode,
        "offset": int(offset),
        "seed": int(seed),
        "arrivals": bool(arrivals),
        "rounds_per_second": float(rounds_per_second),
    }
    return Instance(
        memory=memory, jobs=jobs, name=name or f"trace-{mode}-n{n}-M{memory}", meta=meta
    )
