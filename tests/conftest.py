"""Shared test helpers: run the command line in-process; small instance strategies."""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from kvopt.cli import main
from kvopt.instance import Instance, Job

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent

# No Hypothesis example has a deadline and no data generation is "too slow": a loaded or
# slow machine must not fail a property (issue 56); a test's own settings keep the rest
settings.register_profile(
    "kvopt", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("kvopt")


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def json(self):
        return json.loads(self.out)


def cpu_seconds() -> float:
    """CPU seconds used so far by this process (all its threads) and its reaped children.
    Tests that a limit or a stop is honoured compare the work done with it, not the wall
    clock: a loaded machine stretches the one and not the other (issue 56)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.fixture(scope="session", autouse=True)
def _compiled_search_ready():
    """Compile the branch and bound (the ``fast`` extra) once, before any test's time limit
    runs: on a machine without Numba's cache that takes about 15 s."""
    from kvopt.exact.bnb import compiled as bnbfast

    if bnbfast.available():
        bnbfast.prepare()


@pytest.fixture(autouse=True)
def _ctrl_c_reaches_python():
    """Python's own Ctrl-C handler for every test, restored afterwards.  A process started in
    the background by a non-interactive shell (``cmd &`` in a script) inherits SIGINT
    *ignored*, and Python then installs no handler: a test that raises a real SIGINT would
    wait for a ``KeyboardInterrupt`` that never comes (seen: the local search ran on its
    one-hour clock), and a ``kvopt`` child process would inherit the ignore too.  Setting the
    handler here makes those tests independent of how pytest was started."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before if before is not None else signal.SIG_DFL)


@pytest.fixture
def cli(capsys):
    """``cli("bound", path, "--json")`` → CliResult(code, out, err), in-process."""

    def run(*argv: str) -> CliResult:
        capsys.readouterr()
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse errors and --help
            code = exc.code if isinstance(exc.code, int) else 2
        cap = capsys.readouterr()
        return CliResult(code, cap.out, cap.err)

    return run


@st.composite
def instances(draw, max_n: int = 5, max_memory: int = 24, arrivals: bool = False) -> Instance:
    """Small valid instances of any regime mix (Hypothesis strategy)."""
    memory = draw(st.integers(2, max_memory))
    n = draw(st.integers(0, max_n))
    jobs = []
    for _ in range(n):
        s = draw(st.integers(1, memory - 1))
        o = draw(st.integers(1, memory - s))
        a = draw(st.integers(0, 6)) if arrivals else 0
        jobs.append(Job(prompt=s, response=o, arrival=a))
    return Instance(memory=memory, jobs=tuple(jobs))


def job_triples(prompt: int, response: int, arrival: int, max_n: int):
    """Lists of 1 … ``max_n`` ``(prompt, response, arrival)`` tuples with each value up to the
    given maximum (prompts and responses from 1, arrivals from 0; Hypothesis strategy)."""
    return st.lists(
        st.tuples(st.integers(1, prompt), st.integers(1, response), st.integers(0, arrival)),
        min_size=1,
        max_size=max_n,
    )


def fits_by_rounds(inst: Instance, starts) -> bool:
    """Lemma 1 of ``models/orders.md`` by rounds, independent of the code under test: every
    round's memory is at most ``M`` with job ``i`` started at ``starts[i]`` (arrivals unchecked)."""
    mem: dict[int, int] = {}
    for s, o, t in zip(inst.prompts, inst.responses, starts):
        for u in range(int(o)):
            mem[int(t) + u] = mem.get(int(t) + u, 0) + int(s) + u + 1
    return all(v <= inst.memory for v in mem.values())


def feasible_start_vectors(inst: Instance, lo, hi):
    """Every start vector inside the windows ``[lo_i, hi_i]`` that :func:`fits_by_rounds`."""
    ranges = [range(int(a), int(b) + 1) for a, b in zip(lo, hi)]
    for starts in itertools.product(*ranges):
        if fits_by_rounds(inst, starts):
            yield starts


def lemma_l1_values(inst: Instance, prices, lo, hi) -> list[int]:
    """Check Lemma L1 of the time-indexed LP's prices (``models/time-indexed.md`` §9.1):
    ``SCALE·ΣC ≥ base + Σ_i T_i(S_i)`` for every feasible schedule in the windows (not only
    optimal ones), and ``prices.bound`` at most Opt; returns every schedule's total completion."""
    from kvopt.exact.bounds.lagrange import SCALE

    values = []
    for starts in feasible_start_vectors(inst, lo, hi):
        total = sum(int(t) + int(o) for t, o in zip(starts, inst.responses))
        rhs = prices.base + sum(int(tab[t - a]) for tab, t, a in zip(prices.tables, starts, lo))
        assert SCALE * total >= rhs
        values.append(total)
    assert prices.bound <= min(values)
    return values


BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_benchmark(name: str):
    """The script ``benchmarks/<name>.py`` as a module (its own imports of the other scripts,
    such as ``exact``, resolved from ``benchmarks/``)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return mod
