"""Attempt lists of the fully specified policies against small reference implementations.

Each reference below is written straight from SPEC §6 (independently of
``kvopt/policies``), as literally and naively as possible: Rect (§6.1,
Algorithm 1), SPS and Response (§6.1, Algorithm 2), GSA (§6.1), greedy-area,
MC-SF and mc-benchmark (§6.2; per round, §6 preamble), fcfs and serial (§6.3).  The registry's policies must
produce exactly the same attempts.
"""

from __future__ import annotations

import heapq
import random

import pytest

from kvopt.instance import Instance
from kvopt.simulation import simulate

# --------------------------------------------------------------------------- references


def rect_ref(inst):
    M, n = inst.memory, inst.n
    w = [M if 4 * s > M else 2 * s for s in inst.prompts.tolist()]
    p = inst.responses.tolist()
    queue = [(w[i], i, 0) for i in range(n)]  # (budget, job, level)
    heapq.heapify(queue)
    active, used, attempts = {}, 0, []

    def scan(t):
        nonlocal used
        while queue and used + w[queue[0][1]] <= M:
            _, i, r = heapq.heappop(queue)
            active[i] = (t, r)
            used += w[i]

    scan(0)
    while active or queue:
        t = min(st + min(p[i], 2**r) for i, (st, r) in active.items())
        comps = sorted(i for i, (st, r) in active.items() if st + p[i] == t and p[i] <= 2**r)
        exps = sorted(i for i, (st, r) in active.items() if st + 2**r == t and p[i] > 2**r)
        for i in comps:  # completions first, then expiries, each by job index
            st, r = active.pop(i)
            used -= w[i]
            attempts.append((i, st, p[i], True))
            scan(t)
        for i in exps:
            st, r = active.pop(i)
            used -= w[i]
            attempts.append((i, st, 2**r, False))
            heapq.heappush(queue, (w[i] * 2 ** (r + 1), i, r + 1))
            scan(t)
    return sorted(attempts)


def sps_ref(jobs, o, p, tau, M, t0):
    """SPS (SPEC §6.1): all at once if they fit, else the (g, d) of best throughput g/d."""
    k = len(jobs)
    if k * (p + tau) <= M:
        starts = [t0] * k
    else:
        best = None
        for d in range(1, tau + 1):
            peak1 = max(
                sum(p + x + q * d + 1 for q in range(tau) if x + q * d < tau) for x in range(d)
            )
            g = min(k, M // peak1)
            if g and (best is None or g * best[1] > best[0] * d):
                best = (g, d)
        g, d = best
        starts = [t0 + (idx // g) * d for idx in range(k)]
    atts = [(j, st, min(o[j], tau), o[j] <= tau) for j, st in zip(jobs, starts)]
    return atts, max([t0] + [st + r for _, st, r, _ in atts])


def response_ref(inst):
    M, s, o = inst.memory, inst.prompts.tolist(), inst.responses.tolist()
    unfinished, t, atts, r = set(range(inst.n)), 0, [], 0
    while unfinished:
        tau = 2**r
        elig = sorted(i for i in unfinished if s[i] <= tau)
        if elig:
            if 2 * tau > M:  # the proxy admits one job at a time: back to back
                new = []
                for j in elig:
                    new.append((j, t, min(o[j], tau), o[j] <= tau))
                    t += min(o[j], tau)
            else:
                new, t = sps_ref(elig, o, min(tau, M - tau), tau, M, t)
            atts += new
            unfinished -= {j for j, _, _, c in new if c}
        r += 1
    return sorted(atts)


def gsa_ref(inst):
    M, s, o = inst.memory, inst.prompts.tolist(), inst.responses.tolist()
    unfinished, t, atts, phase = set(range(inst.n)), 0, [], 0
    while unfinished:
        P = max(s[i] for i in unfinished)
        new, t = sps_ref(sorted(unfinished), o, P, min(2**phase, M - P), M, t)
        atts += new
        unfinished -= {j for j, _, _, c in new if c}
        phase += 1
    return sorted(atts)


def list_ref(inst, rule):
    """greedy-area (peak reservation) at events; mcsf / mc-benchmark (exact future memory)
    at every round (SPEC §6: their check can pass between events); no kills."""
    M, n = inst.memory, inst.n
    s, o, a = inst.prompts.tolist(), inst.responses.tolist(), inst.arrivals.tolist()
    A = inst.areas.tolist()
    running, done, atts, t = {}, set(), [], 0

    def fits_future(cands):
        jobs = [(s[j], st, o[j]) for j, st in running.items()] + [(s[j], t, o[j]) for j in cands]
        for tt in range(t, max(st + oo for _, st, oo in jobs)):
            if sum(ss + tt - st + 1 for ss, st, oo in jobs if st <= tt < st + oo) > M:
                return False
        return True

    while len(done) < n:
        for j in [j for j, st in running.items() if st + o[j] == t]:
            atts.append((j, running.pop(j), o[j], True))
            done.add(j)
        waiting = [j for j in range(n) if a[j] <= t and j not in done and j not in running]
        if rule == "greedy-area":
            for j in sorted(waiting, key=lambda j: (A[j], j)):
                if sum(s[k] + o[k] for k in running) + s[j] + o[j] > M:
                    break
                running[j] = t
        else:
            order = (lambda j: (o[j], j)) if rule == "mcsf" else (lambda j: (a[j], j))
            chosen = []
            for j in sorted(waiting, key=order):
                if not fits_future(chosen + [j]):
                    break
                chosen.append(j)
            running.update({j: t for j in chosen})
        if len(done) == n:
            break
        if rule == "greedy-area":
            t = min([st + o[j] for j, st in running.items()] + [x for x in a if x > t])
        else:
            t += 1
    return sorted(atts)


def fcfs_ref(inst):
    M, n = inst.memory, inst.n
    s, o, a = inst.prompts.tolist(), inst.responses.tolist(), inst.arrivals.tolist()

    def key(j):
        return (a[j], j)

    queue, running, done, atts, t, arrived = [], {}, set(), [], 0, set()

    def mem(t):
        return sum(s[j] + t - st + 1 for j, st in running.items())

    while len(done) < n:
        for j in sorted((j for j in range(n) if a[j] == t and j not in arrived), key=key):
            arrived.add(j)
            queue.append(j)
        for j in sorted(j for j, st in running.items() if st + o[j] == t):
            atts.append((j, running.pop(j), o[j], True))
            done.add(j)
        killed = []
        while running and mem(t) > M:  # kill the most recently started (ties: later in queue)
            j = max(running, key=lambda j: (running[j], key(j)))
            st = running.pop(j)
            atts.append((j, st, t - st, False))
            killed.append(j)
        queue = sorted(killed, key=key) + queue
        while queue and mem(t) + s[queue[0]] + 1 <= M:
            running[queue.pop(0)] = t
        if len(done) == n:
            break
        nxt = [st + o[j] for j, st in running.items()] + [x for x in a if x > t]
        if running:  # first round in which the running set overflows
            K = len(running)
            C = sum(s[j] + 1 - st for j, st in running.items())
            nxt.append(max((M - C) // K + 1, t + 1))
        t = min(nxt)
    return sorted(atts)


def serial_ref(inst):
    """One job at a time in arrival order (ties by index), each as soon as the previous one
    completed and it has arrived; never killed."""
    a, o = inst.arrivals.tolist(), inst.responses.tolist()
    t, atts = 0, []
    for j in sorted(range(inst.n), key=lambda j: (a[j], j)):
        start = max(t, a[j])
        atts.append((j, start, o[j], True))
        t = start + o[j]
    return sorted(atts)


# --------------------------------------------------------------------------- instances


def _instances(kind: str, count: int, seed0: int):
    for seed in range(seed0, seed0 + count):
        rng = random.Random(seed)
        M, n = rng.randint(8, 60), rng.randint(1, 8)
        s, o, a = [], [], []
        s0 = rng.randint(1, M // 3)
        for _ in range(n):
            if kind == "large":
                si = rng.randint(M // 4 + 1, M - 1)
                oi = rng.randint(1, M - si)
            elif kind == "prompt-heavy":
                si = rng.randint(1, M // 4)
                oi = rng.randint(1, si)
            elif kind == "response-heavy":
                si = rng.randint(1, max(1, min(M // 4, (M - 1) // 2)))
                oi = rng.randint(si + 1, M - si)
            elif kind == "identical":
                si, oi = s0, rng.randint(1, M - s0)
            else:
                si = rng.randint(1, M - 1)
                oi = rng.randint(1, M - si)
            s.append(si)
            o.append(oi)
            a.append(rng.choice([0, 0, rng.randint(0, 20)]) if kind == "arrivals" else 0)
        yield Instance.from_arrays(M, s, o, a)


def _attempts(inst, policy):
    return sorted(
        (x.job, x.start, x.rounds, x.completed) for x in simulate(inst, policy).schedule.attempts
    )


CASES = [
    ("rect", "large", rect_ref),
    ("rect", "prompt-heavy", rect_ref),
    ("response", "response-heavy", response_ref),
    ("gsa", "identical", gsa_ref),
    ("gsa", "mixed", gsa_ref),
    ("greedy-area", "arrivals", lambda i: list_ref(i, "greedy-area")),
    ("mcsf", "arrivals", lambda i: list_ref(i, "mcsf")),
    ("mc-benchmark", "arrivals", lambda i: list_ref(i, "mc-benchmark")),
    ("fcfs", "arrivals", fcfs_ref),
    ("fcfs", "mixed", fcfs_ref),
    ("serial", "arrivals", serial_ref),
    ("serial", "mixed", serial_ref),
]


@pytest.mark.parametrize("policy, kind, ref", CASES, ids=[f"{p}-{k}" for p, k, _ in CASES])
def test_attempt_lists_match_reference(policy, kind, ref):
    for inst in _instances(kind, 400, seed0=1000):
        assert _attempts(inst, policy) == ref(inst), inst.to_dict()
