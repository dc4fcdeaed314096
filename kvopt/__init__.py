"""kvopt — exact optima, lower bounds, simulation and adversarial search for
KV-cache scheduling in LLM inference (see SPEC.md and README.md)."""

from .bounds import Bounds, lower_bounds
from .instance import Instance, Job, Regime, load_instance, save_instance
from .schedule import Attempt, CheckResult, Schedule, check_schedule, load_schedule, save_schedule

__version__ = "0.1.0"

__all__ = [
    "Attempt",
    "Bounds",
    "CheckResult",
    "Instance",
    "Job",
    "Regime",
    "Schedule",
    "__version__",
    "check_schedule",
    "load_instance",
    "load_schedule",
    "lower_bounds",
    "save_instance",
    "save_schedule",
]
