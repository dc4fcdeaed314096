"""The LP bound (``kvopt bound --lp``) and model export (``kvopt solve --export``)."""

from __future__ import annotations

import os

from ..errors import InputError
from ..instance import Instance
from .common import check_objective, start_windows, stdout_to_stderr, value_of
from .heuristic import heuristic_starts


def lp_bound(instance: Instance, time_limit: float = 60.0) -> float:
    """LP relaxation value of the time-indexed model of SPEC §5 (total completion).

    The model is built over the start windows of :func:`start_windows` with the
    heuristic's upper bound; those windows keep some optimal schedule, so the
    value is still ``≤ Opt``, and it is ``≥`` the exact area bound of Lemma 1
    (proof in ``models/time-indexed.md`` §5).  The empty instance gives 0.
    """
    if instance.n == 0:
        return 0.0
    from .backends.highs_matrix import lp_value

    st = heuristic_starts(instance, "total", seconds=min(0.2, 0.05 * time_limit))
    lo, hi = start_windows(instance, "total", value_of(instance, st, "total"))
    return lp_value(instance, lo, hi, time_limit=time_limit)


def export_model(
    instance: Instance, path: str | os.PathLike, *, objective: str = "total", tightened: bool = True
) -> None:
    """Write the time-indexed IP (as solved by the default path) to ``.mps`` or ``.lp``.

    ``tightened=False`` writes the textbook model (horizon ``max a + Σ o``, one
    column per job and start).  Column ``x_g{g}_t{t}`` counts the jobs of group
    ``g`` (identical jobs, see the model file) that start at round ``t``; the
    groups are listed in the instance order of their first job.
    """
    check_objective(objective)
    p = str(path)
    if not (p.endswith(".mps") or p.endswith(".lp")):
        raise InputError(f"must end in .mps or .lp, got {p!r}", source="--export")
    from ..errors import SolverError
    from .backends.highs_glue import to_highs
    from .backends.highs_matrix import build_matrix

    ub = None
    if tightened and instance.n:
        ub = value_of(instance, heuristic_starts(instance, objective, seconds=0.2), objective)
    lo, hi = start_windows(instance, objective, ub)
    model = build_matrix(
        instance, objective, lo, hi, aggregate=tightened, max_batch=instance.max_batch
    )
    h = to_highs(model, names=True)
    tmp = f"{p}.tmp{os.getpid()}{os.path.splitext(p)[1]}"
    with stdout_to_stderr():
        status = h.writeModel(tmp)
    if not os.path.exists(tmp):
        raise SolverError(f"HiGHS could not write {p} ({status})")
    os.replace(tmp, p)
