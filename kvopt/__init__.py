"""kvopt — exact optima, lower bounds, simulation, adversarial search and theorem validation
for KV-cache scheduling in LLM inference (see SPEC.md and README.md).

The public API (:mod:`kvopt.api`) is what a notebook needs::

    import kvopt
    inst = kvopt.generate("random", seed=1, n=8, memory=48)
    opt = kvopt.solve(inst)                    # exact Opt with its proven bound
    run = kvopt.simulate(inst, "route")        # a policy's checked schedule
    cmp = kvopt.compare(inst, exact=True)      # every policy against Opt
    worst = kvopt.search("fcfs", budget=100)   # certified worst cases
    verdicts = kvopt.validate(quick=True)      # the papers' claims

Solver packages are imported only when something is solved.  ``bounds``,
``claims``, ``compare``, ``policies``, ``search`` and ``validate`` are modules
that can be called (:mod:`kvopt._callable`): ``kvopt.search(...)`` runs a
search and ``kvopt.search.shrink`` is still the module's function.
"""

from . import api
from . import bounds as _bounds_module
from . import claims as _claims_module
from . import compare as _compare_module
from . import policies as _policies_module
from . import search as _search_module
from . import validate as _validate_module
from ._callable import make_callable
from ._version import __version__
from .api import Table, generate, load_instance, plot_schedule, simulate, solve
from .bounds import Bounds, lower_bounds
from .instance import Instance, Job, Regime, save_instance
from .record import Record, load_record, save_record, verify_record
from .schedule import Attempt, CheckResult, Schedule, check_schedule, load_schedule, save_schedule

# kvopt.bounds(...), kvopt.search(...) … call the API; the modules stay reachable (see _callable)
bounds = make_callable(_bounds_module.__name__, api.bounds)
claims = make_callable(_claims_module.__name__, api.claims)
compare = make_callable(_compare_module.__name__, api.compare)
policies = make_callable(_policies_module.__name__, api.policies)
search = make_callable(_search_module.__name__, api.search)
validate = make_callable(_validate_module.__name__, api.validate)


__all__ = [
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
    "check_schedule",
    "claims",
    "compare",
    "generate",
    "load_instance",
    "load_record",
    "load_schedule",
    "lower_bounds",
    "plot_schedule",
    "policies",
    "save_instance",
    "save_record",
    "save_schedule",
    "search",
    "simulate",
    "solve",
    "validate",
    "verify_record",
]
