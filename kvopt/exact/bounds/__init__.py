"""Lower bounds and window tightening beside the backends: :mod:`.relax` (the time-indexed
LP, its duals for the branch and bound, Lagrangian reduced-cost fixing of the start
windows, the typed bound) and :mod:`.blocks` (the time-block column generation's bound,
``models/time-indexed.md`` §9.6).  The start windows themselves are
:func:`kvopt.exact.common.start_windows`; the LP windows
:func:`kvopt.exact.backends.highs_matrix.lp_windows`.
"""
