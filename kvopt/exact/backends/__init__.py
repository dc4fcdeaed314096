"""The exact backends on kvopt's models (SPEC §5), one module each, all answering
``solve(problem, limits, hooks) -> RawResult`` (:mod:`kvopt.exact.backend`) and each
translating its solver's native status into :class:`~kvopt.exact.common.SolveStatus`
(its own table): :mod:`.highs` (the time-indexed IP through highspy; the matrix in
:mod:`.highs_matrix`, the solver glue in :mod:`.highs_glue`, a worker process in
:mod:`.highs_worker`), :mod:`.cpsat` (OR-Tools CP-SAT) and :mod:`.pyomo_model` (the
readable reference model).  The branch and bound is its own package
(:mod:`kvopt.exact.bnb`); the registry of names is :mod:`kvopt.exact.registry`.
"""
