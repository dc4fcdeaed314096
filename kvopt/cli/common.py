"""Shared pieces of the command line: the parser, option parsing, output.

Exit status (SPEC §4): 0 success; 2 bad input (one line on stderr naming the
file and the field or option, no traceback); 1 internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn

from ..errors import InputError
from ..fileio import dumps_json

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_BAD_INPUT = 2


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error message and exit status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_BAD_INPUT)


def parse_params(items: list[str] | None, option: str = "--param") -> dict[str, str]:
    """``KEY=VALUE`` strings → dict (values stay strings; callers convert)."""
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise InputError(f"expected KEY=VALUE, got {item!r}", source=option)
        key, value = item.split("=", 1)
        key = key.strip()
        if not key:
            raise InputError(f"empty key in {item!r}", source=option)
        if key in out:
            raise InputError(f"key {key!r} given twice", source=option)
        out[key] = value.strip()
    return out


def convert_value(key: str, raw: str, default: Any, option: str = "--param") -> Any:
    """Convert a ``--param`` string to the type of ``default`` (bool, int, float, str)."""
    where = f"{option} {key}"
    if isinstance(default, bool):
        low = raw.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise InputError(f"must be true or false, got {raw!r}", source=where)
    if isinstance(default, int):
        try:
            return int(raw)
        except ValueError:
            raise InputError(f"must be an integer, got {raw!r}", source=where) from None
    if isinstance(default, float):
        try:
            return float(raw)
        except ValueError:
            raise InputError(f"must be a number, got {raw!r}", source=where) from None
    return raw


def emit_json(obj: Any) -> None:
    """Print exactly one JSON object on stdout."""
    sys.stdout.write(dumps_json(obj, indent=None) + "\n")
    sys.stdout.flush()


def positive_int(option: str):
    def conv(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} must be an integer, got {text!r}") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{option} must be >= 1, got {v}")
        return v

    return conv


def nonneg_int(option: str):
    def conv(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} must be an integer, got {text!r}") from None
        if v < 0:
            raise argparse.ArgumentTypeError(f"{option} must be >= 0, got {v}")
        return v

    return conv


def positive_float(option: str):
    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} must be a number, got {text!r}") from None
        if not v > 0 or v != v or v == float("inf"):
            raise argparse.ArgumentTypeError(f"{option} must be a positive number, got {text!r}")
        return v

    return conv


__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FAIL",
    "EXIT_OK",
    "Parser",
    "convert_value",
    "emit_json",
    "json",
    "nonneg_int",
    "parse_params",
    "positive_float",
    "positive_int",
]
