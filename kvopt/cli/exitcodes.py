"""Exit statuses of the command line, in one table (SPEC §4).

Every ``kvopt COMMAND --help`` ends with the rows that apply to it
(:func:`epilog`), and the documentation's reference page is generated from
the same table, so the two cannot disagree.
"""

from __future__ import annotations

import textwrap

#: status → meaning, for every command.  A broken pipe (``kvopt policies | head -1``) is not
#: an error: the command stops quietly with status 0, as other command-line tools do.
COMMON: dict[int, str] = {
    0: "success (also when stdout is closed early: a broken pipe is not an error)",
    1: "internal error (a bug: one line on stderr; KVOPT_DEBUG=1 prints the traceback)",
    2: "bad input: unreadable or invalid file, bad option value, unknown option (one line on "
    "stderr naming the file or option, the field and the rule, or the close option of a "
    "mistyped one; nothing written)",
    3: "your code raised: a policy or family given by reference (path/to/file.py:Name) raised "
    "an exception or broke the model; stderr names the reference, the round, your file and "
    "line, and the contract's rule where one applies (a bug in your code, not in kvopt)",
    130: "interrupted with Ctrl-C",
}

#: command → {status: meaning} where the command gives a status its own meaning
#: (these rows replace the common ones with the same status).
PER_COMMAND: dict[str, dict[int, str]] = {
    "solve": {
        0: "the solve ran, whatever its status (optimal, feasible, infeasible, unknown)",
        1: "a solver is missing or failed (or an internal error)",
        130: "interrupted with Ctrl-C: the result so far is still printed and --out written",
    },
    "check": {
        0: "the schedule (or every part of the record) is valid",
        1: "the schedule or record breaks a rule (the errors name the job, round and rule), "
        "or an internal error",
    },
    "search": {
        0: "the search ran (also when nothing beat ratio 1)",
        130: "interrupted with Ctrl-C: the result so far is printed, every finished "
        "evaluation is logged (resume with the same --out)",
    },
    "experiment": {
        130: "interrupted with Ctrl-C: every finished cell is kept in --out (stderr says how "
        "many); the same command resumes",
    },
    "policies": {
        1: "with --check: a check failed (the smallest failing instance is saved and named) "
        "or a check could not be run on any instance (shown as NOT RUN), or an internal error",
        3: "your policy's check_instance raised (the battery cannot tell which instances are "
        "in its class); an exception during a run is a failing no-exception check instead",
    },
    "validate": {
        0: "the validation ran, whatever the verdicts (a violated claim is a finding)",
        130: "interrupted with Ctrl-C: finished campaigns are kept in --out",
    },
    "demo": {
        1: "a bundled instance differs from its regenerated version (or an internal error)",
    },
}


def statuses(command: str | None = None) -> dict[int, str]:
    """Every exit status of ``command`` (the common table when ``None``), by status."""
    table = dict(COMMON)
    if command is not None:
        table.update(PER_COMMAND.get(command, {}))
    return dict(sorted(table.items()))


def epilog(command: str | None = None) -> str:
    """The "exit status" paragraph that ends ``kvopt COMMAND --help``."""
    lines = ["exit status:"]
    for code, text in statuses(command).items():
        lines += textwrap.wrap(text, 78, initial_indent=f"  {code:<4} ", subsequent_indent=" " * 7)
    return "\n".join(lines)
