"""Shared pieces of the command line: the parser, option parsing, output.

Exit status (SPEC §4): 0 success; 2 bad input (one line on stderr naming the
file and the field or option, no traceback); 1 internal error; 3 an error in
the user's own code (a policy or family given by reference); the whole table,
per command, is :mod:`kvopt.cli.exitcodes`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn

from ..fileio import dumps_json
from ..params import convert_value, parse_params

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_BAD_INPUT = 2
#: the user's own code (a policy or family given by reference, SPEC §4) raised or broke the
#: model: SPEC §4 names 0, 1 and 2 only; a bug in the user's code is neither bad input nor
#: kvopt's internal error, so it has its own status (kvopt.errors.UserCodeError)
EXIT_USER_CODE = 3


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error message and exit status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_BAD_INPUT)

    def format_help(self) -> str:
        """The help text; the epilog (the exit-status table) as written, not reflowed."""
        epilog, self.epilog = self.epilog, None
        try:
            text = super().format_help()
        finally:
            self.epilog = epilog
        return text + (f"\n{epilog}\n" if epilog else "")


#: The help of ``--time-model`` (``simulate``, ``compare``; SPEC §10).
TIME_MODEL_HELP = (
    "time model of the rounds in seconds (SPEC §10): a preset (kvopt time-models) or "
    "c0=…,c_b=…,c_k=…,c_p=…,c_q=… (omitted terms 0; default unit)"
)


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
    "POLICY_REF_HELP",
    "EXIT_BAD_INPUT",
    "EXIT_FAIL",
    "EXIT_OK",
    "EXIT_USER_CODE",
    "Parser",
    "convert_value",
    "emit_json",
    "json",
    "nonneg_int",
    "parse_params",
    "positive_float",
    "positive_int",
]


#: How ``--policy`` / ``--policies`` name a policy (SPEC §4, "References (user code)").
POLICY_REF_HELP = (
    "a name (kvopt policies) or a reference to your own: path/to/file.py:Class, "
    "package.module:Class, or a name registered in the entry-point group kvopt.policies"
)
