"""Error categories shared by every kvopt module.

* :class:`InputError` — the user gave a bad file, field or option value.  The
  command line prints its one-line message and exits with status 2.
* Anything else escaping a command is an internal error (exit status 1).
"""

from __future__ import annotations


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


class SolverError(RuntimeError):
    """An exact solver is missing or failed (reported with exit status 1)."""
