"""Callable modules: ``kvopt.search(...)`` runs a search, ``kvopt.search.search`` still exists.

The public API's names (:mod:`kvopt.api`) ``bounds``, ``claims``, ``compare``,
``policies``, ``search`` and ``validate`` are also names of kvopt's modules.
Python binds ``kvopt.<name>`` to the module as soon as that module is imported
anywhere, so a plain function of the same name in ``kvopt/__init__.py`` would be
replaced by the module.  Instead each of these modules is made *callable*:
calling it calls the API function, and every attribute of the module stays
reachable (``kvopt.policies.POLICIES``, ``from kvopt.search import shrink``).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable


def make_callable(module_name: str, fn: Callable) -> types.ModuleType:
    """Make ``sys.modules[module_name]`` callable as ``fn``; return the module."""
    mod = sys.modules[module_name]

    class CallableModule(types.ModuleType):
        def __call__(self, *args, **kwargs):
            return fn(*args, **kwargs)

    CallableModule.__call__.__doc__ = fn.__doc__
    CallableModule.__name__ = f"CallableModule[{module_name}]"
    mod.__class__ = CallableModule
    return mod
