"""Error categories shared by every kvopt module.

* :class:`InputError` — the user gave a bad file, field or option value.  The
  command line prints its one-line message and exits with status 2.
* :class:`UserCodeError` — code the user wrote (a policy or a family given by
  reference, SPEC §4) raised an exception or, for a policy, broke the model: a
  bug in the user's code, not in kvopt.  The command line prints what it names
  (the reference, the round, the user's own frames, the contract's rule where
  one applies) and exits with status 3 (:mod:`kvopt.cli.exitcodes`).
* Anything else escaping a command is an internal error (exit status 1).
"""

from __future__ import annotations


def did_you_mean(word: object, choices) -> str:
    """``"; did you mean 'X'?"`` when ``word`` is close to one of ``choices`` (difflib's
    ratio ≥ 0.6), else ``""``: the tail of an "unknown …" message (SPEC §4: bad input names
    the rule; the close name saves the reader the list)."""
    import difflib

    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


class InputError(ValueError):
    """Bad input: names the source (file or option), the field and the rule.

    ``str(err)`` is the one-line message the command line prints, e.g.
    ``inst.json: jobs[3].prompt: must be an integer >= 1, got 0``.
    """

    def __init__(self, rule: str, *, field: str | None = None, source: str | None = None):
        self.rule = rule
        self.field = field
        self.source = source
        super().__init__(self._message())

    def _message(self) -> str:
        parts = [p for p in (self.source, self.field) if p]
        parts.append(self.rule)
        return ": ".join(parts)

    def with_source(self, source: str) -> InputError:
        """Return the same error attributed to ``source`` (a file path or option)."""
        if self.source:
            return self
        return InputError(self.rule, field=self.field, source=source)

    def __reduce__(self):  # keep picklable for worker processes
        return (_rebuild_input_error, (self.rule, self.field, self.source))


def _rebuild_input_error(rule, field, source):
    return InputError(rule, field=field, source=source)


class PolicyError(RuntimeError):
    """A policy made a decision that breaks the model (SPEC §1).

    The engine raises it at once, naming the policy, the job and the round; it
    never repairs a decision silently.
    """


class BudgetError(RuntimeError):
    """A simulation went past the attempt budget its caller gave (``max_attempts``).

    Not a finding about the policy: the adversarial search skips such a candidate (a policy
    that kills at random, such as ``beta-clear``, can make millions of attempts on one
    instance and would stall its campaign).
    """


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a long run that keeps what it finished; the message says what is kept
    and how to resume (``23 of 126 cells kept in DIR/cells; run the same command again to
    resume``).  A ``KeyboardInterrupt``, so callers that catch Ctrl-C see no difference; the
    command line prints the message after ``interrupted:`` and exits with status 130."""


class SolverError(RuntimeError):
    """An exact solver is missing or failed (reported with exit status 1)."""


class UserCodeError(Exception):
    """Code the user wrote raised an exception (SPEC §4, "References (user code)").

    ``reference`` names the code (``peek.py:Peek``), ``kind`` is ``"policy"`` or
    ``"family"``, ``where`` says when (``"round 7, in on_events"``,
    ``"in __init__(lam=0.5)"``), ``error_type`` and ``error`` are the exception's
    class name and message, ``frames`` the user's own frames, innermost last, as
    ``(file, line, function, source line)``, and ``hint`` the contract's rule where
    one applies ("a BlindPolicy never sees responses; see ClairvoyantPolicy").
    ``str(err)`` is one line (the innermost frame and the hint included);
    :meth:`details` adds every frame, one per line, for the command line.
    The exception it wraps is its ``__cause__`` (the full traceback in a notebook).
    """

    def __init__(
        self,
        reference: str,
        error_type: str,
        error: str,
        *,
        kind: str = "policy",
        where: str | None = None,
        frames: tuple[tuple[str, int, str, str], ...] = (),
        hint: str | None = None,
    ):
        self.reference = reference
        self.error_type = error_type
        self.error = error
        self.kind = kind
        self.where = where
        self.frames = tuple(tuple(f) for f in frames)
        self.hint = hint
        super().__init__(self._message())

    def _verb(self) -> str:
        return f"raised {self.error_type}"

    def _message(self) -> str:
        head = f"your {self.kind} {self.reference!r} {self._verb()}"
        if self.where:
            head += f" ({self.where}"
            if self.frames:
                f = self.frames[-1]
                head += f", {f[0]} line {f[1]}"
            head += ")"
        elif self.frames:
            f = self.frames[-1]
            head += f" ({f[0]} line {f[1]})"
        text = f"{head}: {self.error}"
        if self.hint:
            text += f" — {self.hint}"
        return text

    def details(self) -> list[str]:
        """The message's lines for the command line: the summary, each of the user's frames
        (outermost first), the hint."""
        head = f"your {self.kind} {self.reference!r} {self._verb()}"
        if self.where:
            head += f" ({self.where})"
        lines = [f"{head}: {self.error}"]
        if self.frames:
            lines.append("  in your code (innermost last):")
        for file, line, func, text in self.frames:
            lines.append(f"    {file}, line {line}, in {func}" + (f": {text}" if text else ""))
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return lines

    def __reduce__(self):  # picklable for worker processes (the cause is not carried)
        return (
            _rebuild_user_error,
            (type(self), self.reference, self.error_type, self.error, self.kind, self.where,
             self.frames, self.hint),
        )  # fmt: skip


class UserPolicyError(UserCodeError, PolicyError):
    """A user's policy broke the model (SPEC §1): a :class:`PolicyError` the engine raised
    (an overflow, a start before an arrival, a stall, a read of a job not yet visible) while
    running code the user wrote.  Both a :class:`UserCodeError` (exit status 3) and a
    :class:`PolicyError` (a search logs it as a finding, the conformance battery counts it
    under ``model``)."""

    def _verb(self) -> str:
        return "broke the model"


def _rebuild_user_error(cls, reference, error_type, error, kind, where, frames, hint):
    return cls(reference, error_type, error, kind=kind, where=where, frames=frames, hint=hint)
