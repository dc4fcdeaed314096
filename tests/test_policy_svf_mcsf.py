"""``mcsf``, ``mc-benchmark``, ``svf``, ``svf-1bit`` (SPEC §6.2): the shared future-memory
admission, hand-computed traces, predictions, and the per-round rule of SPEC §6 (the batch
is formed at every round) against a small per-round reference."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from kvopt.instance import Instance, Job
from kvopt.simulation import simulate


def _starts(res):
    return {a.job: a.start for a in res.schedule.attempts if a.completed}


def test_mcsf_hand_trace():
    # M = 10; (s, o) = (2, 4), (1, 2), (3, 3).  Order by o: 1, 2, 0.
    # t=0: {1}: peak 3; {1, 2}: max(3+5 at k=1, 6 at k=2) = 8; + job 0: 12 at k=1 -> stop.
    # t=2: job 1 done; job 2 holds 6 now, + job 0: max(6+3, 6) = 9 -> start.
    inst = Instance.from_arrays(10, [2, 1, 3], [4, 2, 3])
    res = simulate(inst, "mcsf")
    assert _starts(res) == {1: 0, 2: 0, 0: 2}
    assert res.completion_times == (6, 2, 3)
    assert res.stats.kills == 0


def test_mcsf_stops_at_first_failure():
    # M = 10; (s, o) = (5, 1), (5, 2), (1, 3).  t=0: {0}: 6; {0, 1}: 12 -> stop, although
    # job 2 would fit beside job 0 (6 + 2).  t=1: {1, 2}: k=0: 6+2, k=1: 7+3 = 10 -> both.
    inst = Instance.from_arrays(10, [5, 5, 1], [1, 2, 3])
    res = simulate(inst, "mcsf")
    assert _starts(res) == {0: 0, 1: 1, 2: 1}


def test_mc_benchmark_is_arrival_order():
    inst = Instance.from_arrays(8, [1, 1], [6, 1], [0, 0])
    # job 0 (o=6) first in arrival order: {0}: 7; {0,1}: k=0: 2+2=4, k=5: 7 -> both at 0
    assert _starts(simulate(inst, "mc-benchmark")) == {0: 0, 1: 0}
    inst = Instance.from_arrays(8, [3, 3], [5, 1])
    # {0}: 8; {0, 1}: k=0: 4 + 4 = 8 ok; k=4: 8 -> both at 0
    assert _starts(simulate(inst, "mc-benchmark")) == {0: 0, 1: 0}
    inst = Instance.from_arrays(8, [4, 3], [4, 1])
    # {0}: 8; {0, 1}: k=0: 5 + 4 = 9 > 8 -> job 1 waits although it is shorter
    assert _starts(simulate(inst, "mc-benchmark")) == {0: 0, 1: 4}
    # mcsf takes the shorter first
    assert _starts(simulate(inst, "mcsf")) == {1: 0, 0: 1}


def test_svf_area_order():
    # areas: job 0 = (1, 6): 6 + 21 = 27; job 1 = (5, 2): 10 + 3 = 13 -> job 1 first
    inst = Instance.from_arrays(8, [1, 5], [6, 2])
    # {1}: 7; {1, 0}: k=0: 6 + 2 = 8 ok, k=1: 7 + 3 = 10 > 8 -> job 0 waits until t=2
    assert _starts(simulate(inst, "svf")) == {1: 0, 0: 2}


def test_predictions_used_and_overflow_resolved():
    # predictions say job 0 is short; it is long: the check admits job 1 too early and
    # the real memory overflows; the newest attempt is killed and waits
    inst = Instance.from_arrays(10, [2, 2], [7, 5], predicted_response=[1, 1])
    res = simulate(inst, "mcsf")
    assert res.stats.kills >= 1
    exact = simulate(Instance.from_arrays(10, [2, 2], [7, 5]), "mcsf")
    assert exact.stats.kills == 0


def test_svf_1bit_orders_by_one_bit():
    # M = 16: threshold sqrt(16) = 4.  job 0 = (1, 5) is long (proxy 8), job 1 = (9, 4) is
    # short (proxy 2): 1-bit SVF puts job 1 first although its true area is larger.
    inst = Instance.from_arrays(16, [1, 9], [5, 4])
    assert _starts(simulate(inst, "svf-1bit"))[1] == 0
    # both at 0: k=0: 2 + 10 = 12, k=3: 5 + 13 = 18 > 16.  One round later job 1 holds
    # 11, 12, 13 in rounds 1-3 and job 0 would hold 2, 3, 4: 17 > 16 in round 3.  Two
    # rounds later: 12 + 2, 13 + 3 = 16, then job 0 alone -> job 0 starts at 2, no event
    assert _starts(simulate(inst, "svf-1bit")) == {1: 0, 0: 2}
    # svf: job 0 (area 20) first; job 1 beside it: 6 + 10 = 16 in round 4 -> starts at 4,
    # one round before job 0 completes
    assert _starts(simulate(inst, "svf")) == {0: 0, 1: 4}


def test_svf_1bit_threshold_is_sqrt_T():
    # the same two jobs as above, M = 16: job 0 = (1, 5), job 1 = (9, 4).  With T = 24,
    # sqrt(T) < 5: job 0 long (proxy 24^(3/4) ~ 10.8: volume ~ 75), job 1 short (proxy
    # 24^(1/4) ~ 2.2: ~ 22) -> job 1 first, the schedule of T = M above.  With T = 25,
    # 5 * 5 <= 25: both short, same proxy -> the smaller prompt, job 0, first: svf's order.
    inst = Instance.from_arrays(16, [1, 9], [5, 4])
    assert _starts(simulate(inst, "svf-1bit", {"T": 24})) == {1: 0, 0: 2}
    assert _starts(simulate(inst, "svf-1bit", {"T": 25})) == {0: 0, 1: 4}
    # predicted lengths carry the bit: job 0 predicted 4 is short under T = 24
    pred = Instance.from_arrays(16, [1, 9], [5, 4], predicted_response=[4, 4])
    assert _starts(simulate(pred, "svf-1bit", {"T": 24}))[0] == 0
    # unset T is M: the label's T = 16 gives the same schedule as none
    assert (simulate(inst, "svf-1bit[T=16]").schedule.attempts
            == simulate(inst, "svf-1bit").schedule.attempts)  # fmt: skip


@pytest.mark.parametrize("value", [0, -3, 1.5, "1.5", "abc", True, "0"])
def test_svf_1bit_rejects_a_bad_T(value):
    from kvopt.errors import InputError
    from kvopt.policy import resolve_policy
    from kvopt.policy.svf import SVF1Bit

    with pytest.raises(InputError, match="--param T"):
        resolve_policy("svf-1bit", {"T": value}).make()
    if not isinstance(value, str):
        with pytest.raises(InputError, match="--param T"):
            SVF1Bit(T=value)


def test_svf_1bit_bad_T_exits_2_one_line():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    path = root / "instances" / "random" / "mixed-n10.json"
    for value, words in (("0", "must be >= 1, got 0"), ("2.5", "must be an integer, got '2.5'")):
        proc = subprocess.run([sys.executable, "-m", "kvopt", "simulate", str(path), "--policy",
                               f"svf-1bit[T={value}]"], capture_output=True, text=True,
                              cwd=root)  # fmt: skip
        assert proc.returncode == 2 and not proc.stdout
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and f"--param T: {words}" in lines[0], proc.stderr


def test_next_job_fits_one_round_after_a_start():
    # M = 10; (s, o) = (4, 2), (3, 3); mcsf order: job 0, job 1.  t=0: {0}: 5, 6;
    # {0, 1}: round 1: 6 + 5 = 11 > 10 -> job 1 waits.  t=1 (no event: job 0 completes
    # at 2): job 1 started now holds 4 in round 1: 6 + 4 = 10, then 5, 6 alone -> fits.
    inst = Instance.from_arrays(10, [4, 3], [2, 3])
    for policy in ("mcsf", "mc-benchmark", "svf"):
        res = simulate(inst, policy, trace=True)
        assert _starts(res) == {0: 0, 1: 1}, policy
        assert res.completion_times == (2, 4)
        assert (1, "wake", -1, 0) in res.trace  # the policy woke up for it


def test_wake_up_waits_for_the_round_that_fits():
    # mc-benchmark, (s, o) = (2, 6), (4, 5): job 0 holds 3 + t up to its last round 5.
    # M = 12: job 1 started at u holds 10 - u in round 5: 8 + 10 - u <= 12 needs u >= 6,
    # but in round u itself 3 + u + 5 <= 12 needs u <= 4 -> no wake-up, it starts at 6.
    inst = Instance.from_arrays(12, [2, 4], [6, 5])
    res = simulate(inst, "mc-benchmark", trace=True)
    assert _starts(res) == {0: 0, 1: 6}
    assert not [r for r in res.trace if r[1] == "wake"]
    # M = 14: u = 0, 1 fail in job 1's own last round (7 + u + 9 > 14), u = 2, 3 in
    # round 5 (18 - u > 14); u = 4 fits: 7 + 5, 8 + 6, then 9 -> one wake-up, at 4
    inst = Instance.from_arrays(14, [2, 4], [6, 5])
    res = simulate(inst, "mc-benchmark", trace=True)
    assert _starts(res) == {0: 0, 1: 4}
    assert [r[0] for r in res.trace if r[1] == "wake"] == [4]


# --------------------------------------------------------------------------- per-round reference


def per_round(
    inst: Instance, policy: str, T: int | None = None
) -> list[tuple[int, int, int, bool]]:
    """SPEC §6.2 / §6 preamble, literally: a loop over every round.

    In round ``t``: completions, arrivals; while the running attempts hold more than
    ``M`` kill the most recently started (ties: later in the policy's order) and put it
    back; then scan the waiting jobs in order and start each while the memory of the
    running jobs plus it — every job counted round by round with its expected length
    (predicted; a job past it is expected to end after this round) — stays within ``M``
    in every future round; start the first anyway when nothing runs; stop at the first
    that fails.  ``T`` is svf-1bit's maximum model length (``None``: ``M``).
    """
    M, n = inst.memory, inst.n
    T = M if T is None else T
    s, o, a = inst.prompts.tolist(), inst.responses.tolist(), inst.arrivals.tolist()
    pred = inst.predicted.tolist()
    est = pred  # SPEC §10.1: svf-1bit too plans with the predictions

    def key(j):
        if policy == "mcsf":
            return (pred[j], j)
        if policy == "mc-benchmark":
            return (a[j], j)
        if policy == "svf":
            return (s[j] * pred[j] + pred[j] * (pred[j] + 1) / 2, j)
        p = T**0.25 if pred[j] * pred[j] <= T else T**0.75  # svf-1bit: the predicted bit
        return (s[j] * p + p * (p + 1) / 2, j)

    def fits(jobs, t):  # jobs: (prompt, start, last round expected)
        for tau in range(t, max(last for _, _, last in jobs) + 1):
            if sum(p + tau - b + 1 for p, b, last in jobs if tau <= last) > M:
                return False
        return True

    running: dict[int, int] = {}
    waiting: list[int] = []
    attempts, done, t = [], set(), 0
    while len(done) < n:
        for j in [j for j, start in running.items() if start + o[j] == t]:
            attempts.append((j, running.pop(j), o[j], True))
            done.add(j)
        waiting += [j for j in range(n) if a[j] == t]
        while sum(s[j] + t - st + 1 for j, st in running.items()) > M:
            j = max(running, key=lambda j: (running[j], key(j)))
            attempts.append((j, running[j], t - running.pop(j), False))
            waiting.append(j)
        waiting.sort(key=key)
        jobs = [(s[j], b, max(b + est[j] - 1, t)) for j, b in running.items()]
        while waiting:
            j = waiting[0]
            trial = jobs + [(s[j], t, t + est[j] - 1)]
            if jobs and not fits(trial, t):
                break
            jobs, running[j] = trial, t
            waiting.pop(0)
        t += 1
    return sorted(attempts)


@st.composite
def _instances(draw):
    M = draw(st.integers(3, 40))
    arrivals, predictions = draw(st.booleans()), draw(st.booleans())
    jobs = []
    for _ in range(draw(st.integers(1, 8))):
        s = draw(st.integers(1, M - 1))
        o = draw(st.integers(1, M - s))
        a = draw(st.integers(0, 2 * M)) if arrivals else 0
        p = draw(st.integers(1, M)) if predictions else None  # often wrong
        jobs.append(Job(s, o, a, None, p))
    return Instance(M, tuple(jobs), name="hypothesis")


@pytest.mark.parametrize("policy", ["mcsf", "mc-benchmark", "svf", "svf-1bit"])
def test_matches_per_round_reference(policy):
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(inst=_instances())
    def check(inst):
        note(json.dumps(inst.to_dict()))
        got = sorted(
            (x.job, x.start, x.rounds, x.completed)
            for x in simulate(inst, policy).schedule.attempts
        )
        assert got == per_round(inst, policy)

    check()


def test_svf_1bit_with_T_matches_per_round_reference():
    """svf-1bit's bit is ``õ ≤ √T`` for a given ``T`` (here also far from ``M``), and an
    unset ``T`` is ``T = M``."""

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(inst=_instances(), T=st.integers(1, 2000))
    def check(inst, T):
        note(json.dumps(inst.to_dict()))
        got = sorted(
            (x.job, x.start, x.rounds, x.completed)
            for x in simulate(inst, "svf-1bit", {"T": T}).schedule.attempts
        )
        assert got == per_round(inst, "svf-1bit", T)
        default = simulate(inst, "svf-1bit").schedule.attempts
        assert default == simulate(inst, "svf-1bit", {"T": inst.memory}).schedule.attempts

    check()
