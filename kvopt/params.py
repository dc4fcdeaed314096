"""Parsing ``KEY=VALUE`` parameters (``--param``) into typed values.

Shared by the generators, the policy registry and the command line, so that
every ``--param`` is checked the same way and errors name ``--param KEY``.
"""

from __future__ import annotations

from typing import Any

from .errors import InputError


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
