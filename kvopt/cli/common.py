"""Shared pieces of the command line: the parser, option parsing, output.

Exit status (SPEC §4): 0 success; 2 bad input (one line on stderr naming the
file and the field or option, no traceback); 1 internal error; 3 an error in
the user's own code (a policy or family given by reference); the whole table,
per command, is :mod:`kvopt.cli.exitcodes`.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
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
    """argparse with a one-line error message and exit status 2.

    A command's parser names an unknown option before anything else, with the close one
    when there is one (``kvopt simulate i.json --polcy fcfs``: "unrecognized option
    --polcy (did you mean --policy?)", not "the following arguments are required:
    --policy"), and reports leftover arguments under its own name (``kvopt simulate``, not
    ``kvopt``).  Unique prefixes of an option stay accepted (argparse's ``allow_abbrev``).
    """

    _argv: list[str] = []

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        self._argv = [str(a) for a in (sys.argv[1:] if args is None else args)]
        ns, extras = super().parse_known_args(args, namespace)
        if extras and not self._has_commands():  # a command's own leftovers, named here
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return ns, extras

    def error(self, message: str) -> NoReturn:
        unknown = None if self._has_commands() else self._unknown_option()
        choice = re.search(r"invalid choice: '([^']*)'", message)
        if choice and self._has_commands():  # a mistyped command
            close = difflib.get_close_matches(choice[1], self._commands(), n=1)
            if close:
                message = f"unknown command {choice[1]!r} (did you mean {close[0]!r}?)"
        if unknown is not None:
            message = f"unrecognized option {unknown}"
            close = difflib.get_close_matches(
                unknown, [o for o in self._option_string_actions if o.startswith("--")], n=1
            )
            if close:
                message += f" (did you mean {close[0]}?)"
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_BAD_INPUT)

    def _has_commands(self) -> bool:
        return bool(self._commands())

    def _commands(self) -> list[str]:
        return [name for a in self._actions if isinstance(a, argparse._SubParsersAction)
                for name in a.choices]  # fmt: skip

    def _unknown_option(self) -> str | None:
        """The first argument that reads as an option of this parser but is none of its
        options (nor a unique prefix of one), or ``None``."""
        known = self._option_string_actions
        negative = getattr(self, "_negative_number_matcher", None)
        for arg in self._argv:
            if arg == "--":
                return None
            if not arg.startswith("-") or arg == "-" or (negative and negative.match(arg)):
                continue
            name = arg.split("=", 1)[0]
            if name in known or (not name.startswith("--") and name[:2] in known):
                continue  # an option, or a short one with its value attached (-n3)
            if self.allow_abbrev and any(o.startswith(name) for o in known if o[:2] == "--"):
                continue  # a prefix (argparse itself names an ambiguous one)
            return name
        return None

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
