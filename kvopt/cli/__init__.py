"""The ``kvopt`` command line (SPEC §4).

Each subcommand is one module in this package with ``add_parser(subparsers)``
(which registers the subcommand and sets ``func``) and a ``run(args) -> int``.
:data:`COMMANDS` lists them explicitly, in the order ``kvopt --help`` shows.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from importlib import import_module

from ..errors import InputError, Interrupted, UserCodeError
from ..logs import configure_stderr
from .common import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK, EXIT_USER_CODE, Parser
from .exitcodes import epilog

#: Subcommand modules, in help order.
COMMANDS = [
    "solve",
    "simulate",
    "check",
    "bound",
    "policies",
    "compare",
    "time-models",
    "setups",
    "experiment",
    "gen",
    "search",
    "shrink",
    "grow",
    "certify",
    "validate",
    "plot",
    "demo",
]


def _available_commands():
    for name in COMMANDS:
        try:
            yield import_module(f"{__name__}.{name.replace('-', '_')}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name.replace('-', '_')}":
                continue  # subcommand not built yet
            raise


def build_parser() -> Parser:
    from .._version import __version__

    parser = Parser(
        prog="kvopt",
        description="KV-cache scheduling: exact Opt, bounds, policies, adversarial search, validation.",
        epilog=epilog(),
    )
    parser.add_argument("--version", action="version", version=f"kvopt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for mod in _available_commands():
        mod.add_parser(sub)
    for name, command in sub.choices.items():
        command.epilog = epilog(name)  # the exit-status table (kvopt.cli.exitcodes)
        _name_values(command)
        for action in command._actions:  # and its own subcommands' (kvopt experiment run)
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    child.epilog = epilog(name)
                    _name_values(child)
    return parser


#: What an option's value is called in usage and help where its command does not say
#: (argparse's default, the option's name in capitals, read "--dask-timeout DASK_TIMEOUT").
VALUE_NAMES = {
    "--time-limit": "S",
    "--dask-timeout": "S",
    "--threads": "N",
    "--seed": "N",
    "--workers": "K",
    "--batch": "B",
    "--gap": "G",
    "--out": "FILE",
    "--strategy": "NAME",
    "--title": "TEXT",
}


def _name_values(parser: argparse.ArgumentParser) -> None:
    """Give every option that takes a value and names none the name in :data:`VALUE_NAMES`."""
    for action in parser._actions:
        if action.option_strings and action.nargs != 0 and action.metavar is None:
            if action.choices is None:
                action.metavar = VALUE_NAMES.get(action.option_strings[-1])


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_stderr()  # progress messages (the kvopt loggers) as lines on stderr
    try:
        return int(args.func(args) or 0)
    except InputError as err:
        sys.stderr.write(f"kvopt {args.command}: error: {err}\n")
        return EXIT_BAD_INPUT
    except UserCodeError as err:  # a bug in the user's policy or family, not in kvopt
        if os.environ.get("KVOPT_DEBUG"):
            traceback.print_exc()
        lines = err.details()
        sys.stderr.write(f"kvopt {args.command}: error: {lines[0]}\n")
        for line in lines[1:]:
            sys.stderr.write(f"{line}\n")
        sys.stderr.write(
            f"  (exit status {EXIT_USER_CODE}: an error in your {err.kind}'s code, not in kvopt; "
            "KVOPT_DEBUG=1 prints the whole traceback)\n"
        )
        return EXIT_USER_CODE
    except KeyboardInterrupt as exc:  # an Interrupted says what was kept and how to resume
        said = f": {exc}" if isinstance(exc, Interrupted) and str(exc) else ""
        sys.stderr.write(f"kvopt {args.command}: interrupted{said}\n")
        return 130
    except BrokenPipeError:  # stdout closed early (kvopt policies | head -1): not an error
        _silence_stdout()
        return EXIT_OK
    except Exception as exc:  # internal error: exit 1, traceback only on request
        if os.environ.get("KVOPT_DEBUG"):
            traceback.print_exc()
        sys.stderr.write(f"kvopt {args.command}: internal error: {type(exc).__name__}: {exc}\n")
        return EXIT_FAIL


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush into a closed pipe
    neither prints an error nor changes the exit status."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def entry() -> None:  # pragma: no cover - run by every subprocess test
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    workers = sys.modules.get("kvopt.exact.workers")  # loaded only if a solver thread ran
    if workers is not None and not workers.drain():
        # a solver thread did not stop when asked: finalizing the interpreter under it
        # would abort the process (kvopt.exact.workers); end it now, keeping the status
        sys.stdout.flush()
        sys.stderr.write(f"kvopt: a solver thread did not stop; exiting with status {code}\n")
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
