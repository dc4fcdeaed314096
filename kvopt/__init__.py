"""kvopt — exact optima, lower bounds, simulation, adversarial search and theorem validation
for KV-cache scheduling in LLM inference (the documentation is the Sphinx site in docs/; the
contract, cited as "SPEC §N", is docs/spec.md).

The public API (:mod:`kvopt.api`) is what a notebook needs::

    import kvopt
    inst = kvopt.generate("random", seed=1, n=8, memory=48)
    opt = kvopt.solve(inst)                    # exact Opt with its proven bound
    run = kvopt.simulate(inst, "route")        # a policy's checked schedule
    cmp = kvopt.compare(inst, exact=True)      # every policy against Opt
    worst = kvopt.search("fcfs", budget=100)   # certified worst cases
    sweep = kvopt.grow(worst.best.record)      # bounded or growing along families?
    verdicts = kvopt.validate(quick=True)      # the papers' claims

Your own policy (SPEC §4) is a subclass of :class:`BlindPolicy` (non-clairvoyant) or
:class:`ClairvoyantPolicy`; every function above takes it (the class, or a reference
``"path/to/file.py:Class"``), :func:`check_policy` runs it through the conformance
battery and :func:`user_claim` states a constant for :func:`validate` to check::

    class Mine(kvopt.BlindPolicy):
        kills = False
        def on_events(self, now, events, view, act): ...
    kvopt.compare(inst, [Mine, "fcfs"], exact=True)
    kvopt.validate(user_claims=[kvopt.user_claim("mine-4", Mine, ratio_at_most=4)])

Solver packages are imported only when something is solved.  ``bounds``,
``claims``, ``compare``, ``policies``, ``search``, ``validate`` and the others
above are plain functions of :mod:`kvopt.api` (``help()`` and
``inspect.signature()`` show their real parameters); the modules that do the
work have other names (``kvopt.bound``, ``kvopt.claim``, ``kvopt.comparison``,
``kvopt.policy``, ``kvopt.campaign``, ``kvopt.validation``), so no function
hides a module.
"""

from . import api  # noqa: F401  (kvopt.api: the documented module of the public functions)
from ._version import __version__
from .api import (
    Table,
    bounds,
    check_policy,
    claims,
    compare,
    generate,
    grow,
    latencies,
    load_instance,
    plot_schedule,
    policies,
    run_experiment,
    search,
    simulate,
    solve,
    user_claim,
    validate,
)
from .bound import Bounds, lower_bounds
from .engine.contract import (
    ARRIVAL,
    COMPLETION,
    EXPIRY,
    OVERFLOW,
    WAKE,
    Actions,
    BlindPolicy,
    ClairvoyantPolicy,
    ClairvoyantView,
    Event,
    View,
)
from .instance import Instance, Job, Regime, save_instance
from .policy import Param
from .record import Record, load_record, save_record, verify_record
from .schedule import Attempt, CheckResult, Schedule, check_schedule, load_schedule, save_schedule

__all__ = [
    "ARRIVAL",
    "COMPLETION",
    "EXPIRY",
    "OVERFLOW",
    "WAKE",
    "Actions",
    "BlindPolicy",
    "ClairvoyantPolicy",
    "ClairvoyantView",
    "Event",
    "Param",
    "View",
    "Attempt",
    "Bounds",
    "CheckResult",
    "Instance",
    "Job",
    "Record",
    "Regime",
    "Schedule",
    "Table",
    "__version__",
    "bounds",
    "check_policy",
    "check_schedule",
    "claims",
    "compare",
    "generate",
    "grow",
    "latencies",
    "load_instance",
    "load_record",
    "load_schedule",
    "lower_bounds",
    "plot_schedule",
    "policies",
    "run_experiment",
    "save_instance",
    "save_record",
    "save_schedule",
    "search",
    "simulate",
    "solve",
    "user_claim",
    "validate",
    "verify_record",
]
