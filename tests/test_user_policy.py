"""A researcher's own policy, family and claims (SPEC §4, "References (user code)")."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import REPO

import kvopt
from kvopt.errors import InputError, PolicyError
from kvopt.instance import Instance, save_instance
from kvopt.policy import get_policy, resolve_policy
from kvopt.record import load_record, save_record, verify_record

SERIAL = '''
from kvopt import BlindPolicy


class Serial(BlindPolicy):
    """one job at a time, in index order (or reversed)"""

    kills = False

    def __init__(self, reverse: bool = False, gap: int = 0):
        self.reverse = reverse
        self.gap = gap

    def on_events(self, now, events, view, act):
        if view.running:
            return
        left = [j for j in view.jobs if j not in view.done]
        if left:
            act.start(max(left) if self.reverse else min(left))
'''

FAMILY = '''
import kvopt


def pairs(rng, n: int = 4, memory: int = 20, long: int = 6):
    """n jobs alternating short and long"""
    jobs = [kvopt.Job(int(rng.integers(1, 4)), long if k % 2 else 1) for k in range(n)]
    return kvopt.Instance(memory=memory, jobs=tuple(jobs), name="pairs")
'''


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A folder outside the repository holding a policy file, a family file and an instance."""
    (tmp_path / "mine.py").write_text(SERIAL)
    (tmp_path / "fam.py").write_text(FAMILY)
    inst = Instance.from_arrays(20, [3, 2, 5, 1], [4, 6, 2, 3], name="four")
    save_instance(inst, tmp_path / "four.json")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_file_reference_runs_like_a_builtin(folder, cli):
    r = cli("simulate", "four.json", "--policy", "mine.py:Serial", "--param", "reverse=true",
            "--json")  # fmt: skip
    assert r.code == 0, r.err
    d = r.json()
    assert d["policy"] == "mine.py:Serial" and d["params"] == {"reverse": True, "gap": 0}
    starts = sorted((a["start"], a["job"]) for a in d["schedule"]["attempts"])
    assert [j for _, j in starts] == [3, 2, 1, 0]  # reversed index order, one at a time
    spec = get_policy("mine.py:Serial")
    assert not spec.clairvoyant and not spec.kills and spec.code.kind == "file"
    assert spec.code.sha256 and Path(spec.code.path).is_absolute()


def test_module_reference_and_class(folder, monkeypatch):
    monkeypatch.syspath_prepend(str(folder))
    inst = kvopt.load_instance("four.json")
    by_module = kvopt.simulate(inst, "mine:Serial")
    import mine

    by_class = kvopt.simulate(inst, mine.Serial)
    assert by_module.schedule.attempts == by_class.schedule.attempts
    cmp = kvopt.compare(inst, [mine.Serial, "fcfs"])  # was: AttributeError 'strip'
    assert "mine:Serial" in cmp.summary()


@pytest.mark.parametrize(
    "ref, words",
    [
        ("missing.py:Serial", "file missing.py not found"),
        ("broken.py:X", "importing"),
        ("mine.py:Nope", "has no 'Nope'"),
        ("fam.py:pairs", "not a policy class"),
        ("numpy:ndarray", "not a policy"),
        ("no_such_package.module:X", "no module named"),
        ("no-such-entry-point", "unknown policy"),
        # a file without its class (issue 55 walkthrough): not "unknown policy 'mine.py'"
        (
            "mine.py",
            "'mine.py' names a file, not a policy: add the class after a colon (mine.py:ClassName)",
        ),  # fmt: skip
    ],
)
def test_bad_references_are_bad_input(folder, cli, ref, words):
    (folder / "broken.py").write_text("raise RuntimeError('boom at import')\n")
    r = cli("simulate", "four.json", "--policy", ref)
    assert r.code == 2 and r.out == ""
    assert len(r.err.strip().splitlines()) == 1 and words in r.err
    if ref == "broken.py:X":
        assert "RuntimeError: boom at import" in r.err
    if ":" in ref:
        assert ref in r.err  # the one line names the reference


def test_parameters_are_checked_against_the_signature(folder, cli):
    r = cli("simulate", "four.json", "--policy", "mine.py:Serial", "--param", "nope=1")
    assert r.code == 2 and "unknown parameter 'nope'" in r.err and "mine.py:Serial" in r.err
    r = cli("simulate", "four.json", "--policy", "mine.py:Serial", "--param", "gap=x")
    assert r.code == 2 and "must be an integer" in r.err
    r = cli("compare", "four.json", "--policies", "mine.py:Serial[gap=1],fcfs", "--json")
    assert r.code == 0, r.err


def test_an_optional_parameter_is_unset_unless_given(folder):
    """``x: int | None = None`` (as ``svf-1bit``'s ``T``): unset by default, an int when
    given, checked as one; a default None without such an annotation is refused."""
    (folder / "opt.py").write_text(textwrap.dedent('''
        from kvopt.policy.svf import SVF1Bit
        class Bit(SVF1Bit):
            pass
        class Own(SVF1Bit):
            def __init__(self, admission: str = "future", T: "int | None" = None,
                         cut: "float | None" = None):
                super().__init__(admission, T)
        class Untyped(SVF1Bit):
            def __init__(self, admission: str = "future", T=None):
                super().__init__(admission, T)
    '''))  # fmt: skip
    for ref in ("opt.py:Bit", "opt.py:Own"):
        by = {p.name: p for p in get_policy(ref).params}
        assert by["T"].default is None and by["T"].kind is int
        assert resolve_policy(ref, {"T": "16"}).params["T"] == 16
        assert resolve_policy(ref).params["T"] is None
        with pytest.raises(InputError, match="--param T: must be an integer"):
            resolve_policy(ref, {"T": "x"})
    assert get_policy("opt.py:Own").params[2].kind is float
    with pytest.raises(InputError, match="has default None: annotate it"):
        get_policy("opt.py:Untyped")


def test_a_class_without_defaults_or_not_a_policy_is_refused(folder):
    (folder / "odd.py").write_text(textwrap.dedent('''
        from kvopt import BlindPolicy
        class NeedsArg(BlindPolicy):
            def __init__(self, k):
                self.k = k
            def on_events(self, now, events, view, act):
                pass
        class Abstract(BlindPolicy):
            pass
    '''))  # fmt: skip
    with pytest.raises(InputError, match="has no default"):
        get_policy("odd.py:NeedsArg")
    with pytest.raises(InputError, match="abstract"):
        get_policy("odd.py:Abstract")


def test_declared_kills_false_is_enforced(folder):
    (folder / "killer.py").write_text(textwrap.dedent('''
        from kvopt import BlindPolicy
        class Killer(BlindPolicy):
            kills = False
            def on_events(self, now, events, view, act):
                for j, b in list(view.running.items()):
                    if now - b >= 1:
                        act.kill(j)
                if not view.running:
                    left = [j for j in view.jobs if j not in view.done]
                    if left:
                        act.start(min(left))
                if view.running:
                    act.wake(now + 1)
        class Capper(BlindPolicy):
            kills = False
            def on_events(self, now, events, view, act):
                if not view.running:
                    left = [j for j in view.jobs if j not in view.done]
                    if left:
                        act.start(min(left), cap=1)
    '''))  # fmt: skip
    inst = kvopt.load_instance("four.json")
    with pytest.raises(PolicyError, match="kills = False"):
        kvopt.simulate(inst, "killer.py:Killer")
    with pytest.raises(PolicyError, match="an expiry is a kill"):
        kvopt.simulate(inst, "killer.py:Capper")


def test_record_names_the_code_and_check_refuses_a_changed_file(folder, cli):
    r = cli("search", "--policy", "mine.py:Serial", "--budget", "6", "--seed", "1", "--out",
            "camp", "--no-progress", "--json")  # fmt: skip
    assert r.code == 0, r.err
    best = folder / "camp" / "best.json"
    rec = load_record(best)
    src = dict(rec.policy_source)
    assert src["reference"] == "mine.py:Serial" and src["kind"] == "file"
    assert src["sha256"] == get_policy("mine.py:Serial").code.sha256
    header = json.loads((folder / "camp" / "campaign.json").read_text())
    assert header["policy_source"]["sha256"] == src["sha256"]
    assert cli("check", str(best)).code == 0
    (folder / "mine.py").write_text(SERIAL + "\n# changed\n")
    r = cli("check", str(best))
    assert r.code == 1 and "has changed since the record was made" in r.out
    # --no-replay does not run the policy: a changed file is no error, and it says so (#55)
    r = cli("check", str(best), "--no-replay")
    assert r.code == 0 and r.out.startswith("valid record"), r.out
    assert "replay skipped" in r.out and "has changed since the record was made" in r.out
    tampered = json.loads(best.read_text())
    tampered["alg"] += 1
    (folder / "tampered.json").write_text(json.dumps(tampered))
    r = cli("check", "tampered.json", "--no-replay")  # the schedules and bracket still count
    assert r.code == 1 and "[alg]" in r.out and "replay skipped" in r.out, r.out
    (folder / "mine.py").unlink()
    r = cli("check", str(best))
    assert r.code == 1 and "is missing" in r.out
    r = cli("check", str(best), "--no-replay", "--json")
    assert r.code == 0, r.out
    d = r.json()
    assert d["valid"] and d["replayed"] is False and "is missing" in d["note"]
    r = cli("grow", str(best), "--steps", "1", "--directions", "memory")
    assert r.code == 2 and "is missing" in r.err  # never silently another version


def test_record_replays_from_another_folder(folder, cli, tmp_path_factory, monkeypatch):
    r = cli("search", "--policy", "mine.py:Serial", "--budget", "4", "--seed", "2", "--out",
            "camp", "--no-progress")  # fmt: skip
    assert r.code == 0, r.err
    best = (folder / "camp" / "best.json").resolve()
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert cli("check", str(best)).code == 0  # the stored absolute path, same bytes


def test_search_with_workers_ships_a_notebook_class(folder):
    """A class defined in ``__main__`` (a notebook cell) reaches spawned workers by value."""
    script = folder / "nb.py"
    script.write_text(SERIAL.replace("class Serial", "class Cell") + textwrap.dedent('''
        if __name__ == "__main__":
            import kvopt
            res = kvopt.search(Cell, budget=6, seed=3, workers=2, out="ws", progress=False)
            rec = kvopt.load_record(res.best.record)
            print(rec.policy, res.errors, kvopt.verify_record(rec) == [])
    '''))  # fmt: skip
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=folder, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["<__main__>:Cell", "0", "True"]


def test_a_crash_in_a_campaign_is_kept_as_a_finding(folder):
    (folder / "crash.py").write_text(SERIAL.replace(
        "        if left:\n", "        if len(left) == 3:\n            raise ZeroDivisionError('x')\n"
        "        if left:\n"))  # fmt: skip
    res = kvopt.search("crash.py:Serial", budget=12, seed=1, out="cr", progress=False)
    assert res.errors > 0
    saved = sorted((folder / "cr" / "errors").glob("*.json"))
    assert saved and "ZeroDivisionError" in json.loads(saved[0].read_text())["meta"]["error"]


def test_user_family_gen_and_search(folder, cli):
    r = cli("gen", "fam.py:pairs", "--seed", "1", "--param", "n=8")
    assert r.code == 0, r.err
    d = json.loads(r.out)
    assert len(d["jobs"]) == 8 and d["meta"]["family"] == "fam.py:pairs"
    assert d["meta"]["family_source"]["sha256"]
    assert cli("gen", "fam.py:pairs", "--seed", "1", "--param", "n=x").code == 2
    assert cli("gen", "fam.py:pairs", "--seed", "1", "--param", "bogus=1").code == 2
    r = cli("search", "--policy", "fcfs", "--strategy", "random", "--family", "fam.py:pairs",
            "--param", "n=6", "--budget", "4", "--out", "fs", "--no-progress", "--json")  # fmt: skip
    assert r.code == 0, r.err
    header = json.loads((folder / "fs" / "campaign.json").read_text())
    assert header["family"] == "fam.py:pairs" and header["family_source"]["kind"] == "file"


def test_a_family_file_without_its_function_says_so(folder, cli):
    # as a policy file without its class: not "unknown family 'fam.py' (known: random, …)"
    for argv in (["gen", "fam.py", "--seed", "1"],
                 ["search", "--policy", "fcfs", "--strategy", "random", "--family", "fam.py",
                  "--budget", "2", "--out", "fs"]):  # fmt: skip
        r = cli(*argv)
        assert r.code == 2 and len(r.err.strip().splitlines()) == 1, r.err
        assert "'fam.py' names a file, not a family: add the function after a colon " in r.err
        assert "(fam.py:function)" in r.err
    assert not (folder / "fs").exists()


def test_conformance_battery_passes_a_good_policy(folder, cli):
    r = cli("policies", "--check", "mine.py:Serial", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert d["passed"] and {c["check"] for c in d["checks"]} >= {"blind", "kills", "model"}
    assert not (folder / "kvopt-check").exists()  # nothing written when all pass


BAD = """
import gc
import random
import sys

from kvopt import BlindPolicy


class Base(BlindPolicy):
    kills = False

    def order(self, view, left):
        return sorted(left)

    def on_events(self, now, events, view, act):
        if view.running:
            return
        left = [j for j in view.jobs if j not in view.done]
        if left:
            act.start(self.order(view, left)[0])


class PeeksFrame(Base):
    def order(self, view, left):
        f = sys._getframe()
        while not hasattr(f.f_locals.get("self"), "resp"):
            f = f.f_back
        resp = f.f_locals["self"].resp
        return sorted(left, key=lambda j: (resp[j], j))


class PeeksGC(Base):
    def setup(self, view):  # the engine that holds this very view, found by the collector
        eng = next(o for o in gc.get_objects() if getattr(o, "view", None) is view)
        self.resp = eng.resp

    def order(self, view, left):
        return sorted(left, key=lambda j: (self.resp[j], j))


class Coin(Base):
    def order(self, view, left):
        random.shuffle(left)
        return left


class Killer(Base):
    def on_events(self, now, events, view, act):
        for j, b in list(view.running.items()):
            if now - b >= 1:
                act.kill(j)
        super().on_events(now, events, view, act)
        if view.running:
            act.wake(now + 1)


class Overflow(BlindPolicy):
    kills = True

    def on_events(self, now, events, view, act):
        for j in view.jobs:
            if j not in view.done and j not in view.running:
                act.start(j)
"""


@pytest.mark.parametrize(
    "cls, check",
    [("PeeksFrame", "blind"), ("Coin", "deterministic"), ("Killer", "kills"),
     ("Overflow", "model"),
     # gc.get_objects() at every run's setup: slow in a test process with a large heap
     pytest.param("PeeksGC", "blind", marks=pytest.mark.slow)],
)  # fmt: skip
def test_conformance_battery_catches(folder, cli, cls, check):
    (folder / "bad.py").write_text(BAD)
    r = cli("policies", "--check", f"bad.py:{cls}", "--out", "chk", "--json")
    assert r.code == 1, r.err
    d = r.json()
    failed = {c["check"]: c for c in d["checks"] if c["status"] == "failed"}
    assert check in failed, failed
    saved = Path(failed[check]["instance"])
    assert saved.is_file() and saved.parent.name == "chk"
    inst = kvopt.load_instance(saved)  # a valid instance file, with the failure in its meta
    assert inst.meta["check"] == check and inst.meta["failure"]
    assert inst.n <= 4  # shrunk


PEEK = """
from kvopt import BlindPolicy


class Peek(BlindPolicy):
    def on_events(self, now, events, view, act):
        self.order(view, act)

    def order(self, view, act):
        for j in sorted(view.unfinished(), key=lambda j: view.responses[j]):
            if not view.is_running(j):
                act.start(j)


class Late(BlindPolicy):
    def on_events(self, now, events, view, act):
        if now >= 2:
            raise ZeroDivisionError("late")
        if not view.running:
            act.start(min(j for j in view.jobs if j not in view.done))
        act.wake(now + 1)


class Greedy(BlindPolicy):
    def on_events(self, now, events, view, act):
        for j in view.jobs:
            if j not in view.done and j not in view.running:
                act.start(j)
"""


def test_a_users_exception_names_the_reference_round_frames_and_contract(folder, cli):
    (folder / "peek.py").write_text(PEEK)
    r = cli("simulate", "four.json", "--policy", "peek.py:Peek")
    assert r.code == 3 and r.out == "", r.err
    assert "internal error" not in r.err
    first = r.err.splitlines()[0]
    assert "'peek.py:Peek'" in first and "round 0" in first and "AttributeError" in first
    assert "peek.py, line 10, in order" in r.err  # the user's own frame, file and line
    assert "kvopt/engine" not in r.err  # and none of kvopt's
    assert "BlindPolicy never sees response lengths" in r.err and "ClairvoyantPolicy" in r.err
    r = cli("simulate", "four.json", "--policy", "peek.py:Late")
    assert r.code == 3 and "round 2" in r.err and "peek.py, line 18, in on_events" in r.err
    save_instance(Instance.from_arrays(10, [4, 4], [5, 5]), folder / "two.json")
    r = cli("simulate", "two.json", "--policy", "peek.py:Greedy")  # breaks the model
    assert r.code == 3 and "broke the model" in r.err and "> memory" in r.err, r.err
    assert "'peek.py:Greedy'" in r.err and "job 1, round 1" in r.err


WAKER = """
from kvopt import BlindPolicy


class Waker(BlindPolicy):
    def on_events(self, now, events, view, act):
        act.wake(now + 1)
"""


def test_a_policy_that_only_wakes_ends_promptly(folder):
    """Issue 55: a policy that only ever wakes and never starts a job hung ``kvopt simulate``
    and ``kvopt policies --check``; the engine's no-progress guard ends both (seconds)."""
    (folder / "waker.py").write_text(WAKER)

    def kv(*args):
        return subprocess.run([sys.executable, "-m", "kvopt", *args], capture_output=True,
                              text=True, cwd=folder, timeout=120)  # fmt: skip

    r = kv("simulate", "four.json", "--policy", "waker.py:Waker")
    assert r.returncode == 3 and r.stdout == "", r.stderr
    first = r.stderr.splitlines()[0]
    assert "'waker.py:Waker' broke the model" in first and "round 10001: no progress" in first
    r = kv("policies", "--check", "waker.py:Waker", "--out", "chk")
    assert r.returncode == 1, r.stderr
    assert "FAILED  model" in r.stdout and "no progress" in r.stdout


def test_validate_of_a_policy_that_always_raises_is_inconclusive(folder, cli):
    """A policy that broke the model on every instance searched nothing: its claim is not
    ``holds`` (found by a new user's walkthrough, issue 55), but inconclusive, saying why."""
    (folder / "peek.py").write_text(PEEK)
    r = cli("validate", "--policy", "peek.py:Peek", "--ratio-at-most", "3", "--budget", "4",
            "--out", "v", "--no-progress", "--json")  # fmt: skip
    assert r.code == 0, r.err
    claim = r.json()["claims"][0]
    assert claim["verdict"] == "inconclusive", claim
    assert "nothing was searched" in claim["text"] and "broke the model" in claim["text"]


def test_a_users_exception_in_the_api_keeps_its_cause(folder):
    from kvopt.errors import UserCodeError

    (folder / "peek.py").write_text(PEEK)
    inst = kvopt.load_instance("four.json")
    with pytest.raises(UserCodeError) as info:
        kvopt.simulate(inst, "peek.py:Peek")
    err = info.value
    assert isinstance(err.__cause__, AttributeError)  # the whole traceback in a notebook
    assert err.reference == "peek.py:Peek" and err.where == "round 0, in on_events"
    assert [f[2] for f in err.frames] == ["on_events", "order", "<lambda>"]
    with pytest.raises(PolicyError):  # a broken model is still a PolicyError (a finding)
        kvopt.simulate(Instance.from_arrays(10, [4, 4], [5, 5]), "peek.py:Greedy")


def test_a_builtins_exception_is_still_an_internal_error(cli, monkeypatch, tmp_path):
    from kvopt.policy.fcfs import FCFS

    def broken(self, now, events, view, act):
        raise KeyError("bug")

    monkeypatch.setattr(FCFS, "on_events", broken)
    save_instance(Instance.from_arrays(20, [3, 2], [4, 6]), tmp_path / "i.json")
    r = cli("simulate", str(tmp_path / "i.json"), "--policy", "fcfs")
    assert r.code == 1 and "internal error" in r.err


def test_a_users_family_that_raises_names_its_frame(folder, cli):
    (folder / "fam2.py").write_text("def boom(rng, n: int = 3):\n    return [1][n]\n")
    r = cli("gen", "fam2.py:boom", "--seed", "1")
    assert r.code == 3, r.err
    assert "your family 'fam2.py:boom' raised IndexError" in r.err and "boom(n=3)" in r.err
    assert "fam2.py, line 2, in boom" in r.err


def test_conformance_never_passes_a_check_it_could_not_run(folder, cli):
    (folder / "peek.py").write_text(PEEK)
    r = cli("policies", "--check", "peek.py:Peek", "--out", "chk", "--json")
    assert r.code == 1
    st = {c["check"]: (c["status"], c["runs"]) for c in r.json()["checks"]}
    assert st["no-exception"][0] == "failed"
    for c in ("model", "deterministic", "blind", "visibility"):
        assert st[c] == ("not-run", 0), st
    r = cli("policies", "--check", "peek.py:Peek", "--out", "chk")
    assert "NOT RUN model" in r.out and "PASSED" not in r.out
    assert not any("PASSED" in line and " 0 run" in line for line in r.out.splitlines())


def test_own_claims_violated_and_holds(folder, cli):
    # reversed serial on jobs whose last one is long: far from Opt, so 1.05 is violated
    r = cli("validate", "--policy", "mine.py:Serial[reverse=true]", "--ratio-at-most", "1.05",
            "--budget", "24", "--seed", "1", "--out", "v", "--no-progress", "--json")  # fmt: skip
    assert r.code == 0, r.err
    (c,) = r.json()["claims"]
    assert c["verdict"] == "violated" and c["record"]
    rec = load_record(c["record"])
    assert verify_record(rec) == [] and rec.ratio_certified > 1.05
    assert rec.policy_source["reference"] == "mine.py:Serial"
    r = cli("validate", "--policy", "mine.py:Serial", "--ratio-at-most", "1000", "--budget", "8",
            "--seed", "1", "--out", "v2", "--no-progress", "--json")  # fmt: skip
    (c,) = r.json()["claims"]
    assert c["verdict"] == "holds" and c["instances"] == 8 and c["worst_certified_ratio"] >= 1


def test_claims_file(folder, cli):
    (folder / "claims.toml").write_text(textwrap.dedent('''
        [[claim]]
        id = "serial-n"
        policy = "mine.py:Serial"
        kind = "ratio"
        constant = "n"
        objective = "total"
        source = "a serial schedule is at most n times Opt"

        [[claim]]
        id = "serial-greedy-formula"
        policy = "mine.py:Serial"
        params = { gap = 1 }
        kind = "ratio"
        constant = "1 + 2/(1-alpha)"
        objective = "makespan"
        space = { n_max = 5 }
    '''))  # fmt: skip
    r = cli("validate", "--claims-file", "claims.toml", "--budget", "10", "--seed", "1",
            "--out", "vf", "--no-progress", "--json")  # fmt: skip
    assert r.code == 0, r.err
    got = {c["id"]: c for c in r.json()["claims"]}
    assert set(got) == {"serial-n", "serial-greedy-formula"}
    assert got["serial-n"]["verdict"] == "holds"  # n * Opt bounds any serial order
    assert got["serial-greedy-formula"]["bound"] == "1 + 2/(1-alpha)"


@pytest.mark.parametrize(
    "body, words",
    [
        ('id = "a"\npolicy = "fcfs"\nobjective = "total"', "claim[0].kind: missing"),
        ('id = "a"\npolicy = "fcfs"\nkind = "ratio"\nobjective = "total"', "constant: missing"),
        ('id = "a"\npolicy = "fcfs"\nkind = "ratio"\nconstant = 2', "objective: missing"),
        ('id = "a"\npolicy = "nope.py:X"\nkind = "ratio"\nconstant = 2\nobjective = "total"',
         "not found"),
        ('id = "a"\npolicy = "fcfs"\nkind = "ratio"\nconstant = "2 + __import__(1)"\n'
         'objective = "total"', "may be called"),
        ('id = "rect-large"\npolicy = "fcfs"\nkind = "bounded"\nobjective = "total"',
         "SPEC §7 claim"),
    ],
)  # fmt: skip
def test_bad_claims_files(folder, cli, body, words):
    (folder / "c.toml").write_text("[[claim]]\n" + body + "\n")
    r = cli("validate", "--claims-file", "c.toml", "--out", "bad", "--budget", "2")
    assert r.code == 2 and words in r.err and "c.toml" in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1
    assert not (folder / "bad").exists()  # nothing written


def test_formula_is_parsed_not_executed():
    from kvopt.claim import Formula

    inst = Instance.from_arrays(10, [3, 2], [2, 2])
    assert Formula("1 + 2/(1-alpha)")(inst) == pytest.approx(1 + 2 / (1 - 0.5))
    assert Formula("sqrt(n) * log2(M)")(inst) == pytest.approx(2**0.5 * 10**0.0 * 3.321928, 1e-5)
    assert Formula("1/(1-alpha)")(Instance.from_arrays(4, [2], [2])) == float("inf")
    with pytest.raises(InputError):
        Formula("().__class__")


def test_entry_point_rejects_nothing_when_none_installed(cli):
    r = cli("policies", "--json")
    assert r.code == 0
    names = [p["name"] for p in r.json()["policies"]]
    assert names[: len(kvopt.policy.POLICIES)] == list(kvopt.policy.POLICIES)


@pytest.mark.slow
def test_example_package_registers_a_policy_and_a_family(tmp_path):
    """``examples/kvopt-example-policies`` installed: its entry points work on every command."""
    target = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                          "--target", str(target), str(REPO / "examples" / "kvopt-example-policies")],
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert pip.returncode == 0, pip.stderr
    env = {**__import__("os").environ, "PYTHONPATH": str(target)}

    def kv(*args):
        return subprocess.run([sys.executable, "-m", "kvopt", *args], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=600)  # fmt: skip

    listed = kv("policies", "--json")
    assert listed.returncode == 0, listed.stderr
    mine = [
        p for p in json.loads(listed.stdout)["policies"] if p["name"] == "shortest-prompt-first"
    ]
    assert mine and mine[0]["reference"]["kind"] == "entry-point"
    inst = kv("gen", "bimodal", "--seed", "1", "--param", "n=6", "--out", "b.json")
    assert inst.returncode == 0, inst.stderr
    sim = kv("simulate", "b.json", "--policy", "shortest-prompt-first", "--param", "headroom=2",
             "--json")  # fmt: skip
    assert sim.returncode == 0, sim.stderr
    assert json.loads(sim.stdout)["params"] == {"headroom": 2}
    assert kv("policies", "--check", "shortest-prompt-first").returncode == 0


@pytest.mark.slow
def test_search_on_a_local_dask_cluster(folder):
    """Dask workers import the file from the source the campaign ships (they run elsewhere)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:  # fmt: skip
        res = kvopt.search("mine.py:Serial", budget=8, seed=4, scheduler=cluster.scheduler_address,
                           out="dask", progress=False)  # fmt: skip
    assert res.errors == 0 and res.evaluations == 8
    assert verify_record(load_record(res.best.record)) == []


def test_install_executes_shipped_source_where_the_file_is_absent(folder):
    """A worker on another machine: the file is not there, its shipped source is run instead."""
    from kvopt import usercode

    spec = get_policy("mine.py:Serial")
    shipped = spec.code.shippable()
    moved = usercode.UserCode(**{**shipped.__dict__, "reference": "gone.py:Serial",
                                 "path": str(folder / "gone.py")})  # fmt: skip
    usercode.install(moved)
    inst = kvopt.load_instance("four.json")
    a = kvopt.simulate(inst, "gone.py:Serial").schedule.attempts
    assert a == kvopt.simulate(inst, "mine.py:Serial").schedule.attempts


def test_builtin_record_has_no_policy_source(tmp_path):
    rec_path = REPO / "instances" / "worst" / "small" / "fcfs.json"
    rec = load_record(rec_path)
    assert rec.policy_source is None
    save_record(rec, tmp_path / "r.json")
    assert "policy_source" not in json.loads((tmp_path / "r.json").read_text())


def test_a_formula_claim_gets_a_valid_id(folder, cli):
    r = cli("validate", "--policy", "mine.py:Serial", "--ratio-at-most", "1 + 2/(1-alpha)",
            "--budget", "4", "--out", "vid", "--no-progress", "--json")  # fmt: skip
    assert r.code == 0, r.err
    (c,) = r.json()["claims"]
    assert c["id"] == "Serial-ratio-at-most-1_2_1-alpha" and c["bound"] == "1 + 2/(1-alpha)"


def test_a_user_policys_record_and_campaign_validate_against_the_schemas(folder):
    pytest.importorskip("jsonschema")
    from test_docs_schemas import validator

    res = kvopt.search("mine.py:Serial", budget=4, seed=5, out="sch", progress=False)
    record = json.loads(Path(res.best.record).read_text())
    assert record["policy_source"]["kind"] == "file"
    validator("record").validate(record)
    validator("campaign").validate(json.loads((folder / "sch" / "campaign.json").read_text()))
    record["policy_source"]["sha256"] = "not a digest"
    assert list(validator("record").iter_errors(record))


@pytest.mark.parametrize("name", list(kvopt.policy.POLICIES))
def test_every_builtin_policy_passes_the_conformance_battery(name, tmp_path):
    """The battery's own check: kvopt's policies keep the contract it tests."""
    from kvopt.conformance import check_policy

    rep = check_policy(name, seed=1, out=tmp_path / "chk")
    assert rep.passed, [c.to_dict() for c in rep.checks if c.failures]
    assert rep.instances >= 17  # a narrow class still gets its own instances
    assert not (tmp_path / "chk").exists()


def test_simulate_resolves_a_reference_once(folder, monkeypatch):
    """Issue 55, item 9 (in part): kvopt.simulate resolves a reference once — its spec checks
    the class and builds the object — instead of loading the file again to build it."""
    import kvopt.policy

    real = kvopt.policy.load
    calls = []
    monkeypatch.setattr(kvopt.policy, "load", lambda *a, **k: calls.append(a) or real(*a, **k))
    inst = kvopt.load_instance("four.json")
    res = kvopt.simulate(inst, "mine.py:Serial", params={"reverse": "true"})
    assert len(calls) == 1 and res.policy == "mine.py:Serial" and res.params["reverse"] is True
    spec = get_policy("mine.py:Serial")
    calls.clear()
    assert kvopt.simulate(inst, spec).schedule == kvopt.simulate(inst, "mine.py:Serial").schedule
    assert len(calls) == 1  # the spec itself is not resolved again


def test_a_policy_is_resolved_once_per_command(folder, monkeypatch, cli):
    """Issue 55, item 9: a name or reference is resolved once into a ResolvedPolicy that the
    command, the battery, the comparison, the campaign (and its workers), records, shrink and
    grow pass on; before, the conformance battery read and hashed the user's file 454 times,
    a 16-evaluation search 27 times, kvopt shrink once per candidate."""
    import kvopt.policy

    real = kvopt.policy.load
    calls = []
    monkeypatch.setattr(kvopt.policy, "load", lambda *a, **k: calls.append(a) or real(*a, **k))

    def loads(*argv) -> int:
        calls.clear()
        r = cli(*argv)
        assert r.code == 0, r.err
        return len(calls)

    assert loads("simulate", "four.json", "--policy", "mine.py:Serial", "--json") == 1
    assert loads("policies", "--check", "mine.py:Serial", "--out", "chk") == 1
    assert loads("compare", "four.json", "--policies", "mine.py:Serial,fcfs") == 1
    # one in this process, one for the (here in-process) worker: 16 tasks resolve it once
    assert loads("search", "--policy", "mine.py:Serial", "--budget", "16", "--seed", "1",
                 "--out", "camp", "--no-progress", "--certify-seconds", "0") <= 2  # fmt: skip
    assert loads("check", "camp/best.json") == 1
    assert loads("shrink", "camp/best.json", "--min-ratio", "1.01", "--out", "s.json") == 1


def test_resolve_policy_takes_every_form_and_ships_picklable(folder):
    import pickle

    from kvopt.policy import PolicyRef, ResolvedPolicy, resolve_policy

    ref = resolve_policy("pack-and-schedule[packer=nfdh]")
    assert isinstance(ref, ResolvedPolicy) and ref.name == "pack-and-schedule"
    assert ref.label == "pack-and-schedule[packer=nfdh]" and ref.params["packer"] == "nfdh"
    assert dict(ref.given) == {"packer": "nfdh"}
    assert resolve_policy(ref) is ref and get_policy(ref) is ref.spec
    assert resolve_policy(get_policy("fcfs")).name == "fcfs"
    with pytest.raises(InputError, match="given both"):
        resolve_policy("pack-and-schedule[packer=nfdh]", {"packer": "steinberg"})
    with pytest.raises(InputError, match="unknown parameter"):
        resolve_policy("fcfs", {"nope": 1})
    mine = resolve_policy("mine.py:Serial", {"reverse": "true"})
    assert mine.params == {"reverse": True, "gap": 0} and mine.code is not None
    assert resolve_policy(mine, {"gap": 2}).params == {"reverse": True, "gap": 2}
    inst = kvopt.load_instance("four.json")
    # the API still takes the text forms, and gives the same schedule for the resolved one
    by_text = kvopt.simulate(inst, "mine.py:Serial", params={"reverse": "true"})
    assert kvopt.simulate(inst, mine).schedule == by_text.schedule
    shipped = pickle.loads(pickle.dumps(mine.shipped()))  # what a worker receives
    assert isinstance(shipped, PolicyRef) and shipped.code.source is not None
    again = shipped.resolve()
    assert again.params == mine.params and again.code.sha256 == mine.code.sha256
    assert shipped.resolve() is again  # a worker resolves a campaign's policy once


def test_search_param_without_family_names_the_policy_param_option(folder, cli):
    # --param is a family's parameter in `kvopt search` (simulate's --param is the policy's):
    # a user who passes the policy's parameter is told where it goes (issue 55 walkthrough)
    r = cli("search", "--policy", "mine.py:Serial", "--param", "reverse=true", "--budget", "2",
            "--out", "runs/x")  # fmt: skip
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1, r.err
    assert "--policy-param reverse=true" in r.err and "mine.py:Serial[reverse=true]" in r.err
    assert not (folder / "runs").exists()
    r = cli("search", "--policy", "fcfs", "--param", "n=3", "--budget", "2", "--out", "runs/x")
    assert r.code == 2 and "no --family is given" in r.err and "--policy-param" in r.err


KILL_NEWEST = '''
from kvopt import BlindPolicy


class KillNewest(BlindPolicy):
    """Start in prompt order while the round fits; on overflow kill the newest attempt."""

    seen = []

    def on_events(self, now, events, view, act):
        while view.memory_now() > view.memory:
            newest = max(view.running, key=lambda j: (view.running[j], j))
            act.kill(newest)
            self.seen.append(("kill", newest in view.running))
        for j in sorted(view.unfinished(), key=lambda j: view.prompts[j]):
            if not view.has_slot():  # the batch cap (SPEC §10.1)
                break
            if not view.is_running(j) and view.memory_now() + view.prompts[j] + 1 <= view.memory:
                act.start(j)
                self.seen.append(("start", j in view.running))
'''


def test_own_decisions_show_in_the_view_at_once_as_own_policy_md_says(folder):
    # a newcomer's policy read view.running[j] after act.kill(j) and got a KeyError: the
    # how-to now says the view reflects the policy's own start and kill at once, and lists the
    # helpers (memory_now, unfinished, is_running, ...) that the policy above relies on
    space: dict = {}
    exec(KILL_NEWEST, space)
    cls = space["KillNewest"]
    inst = Instance.from_arrays(12, [3, 2, 4, 1], [5, 6, 3, 4], name="kn")
    run = kvopt.simulate(inst, cls)
    assert kvopt.check_schedule(inst, run.schedule).valid and run.stats.kills >= 1
    assert ("kill", False) in cls.seen and ("start", True) in cls.seen
    assert set(cls.seen) == {("kill", False), ("start", True)}
    assert kvopt.check_policy(cls, out=folder / "kvopt-check").passed
    howto = (REPO / "docs" / "howto" / "own-policy.md").read_text(encoding="utf-8")
    members = [m for m in dir(kvopt.View) if not m.startswith("_")]
    missing = [m for m in members if f"view.{m}" not in howto]
    assert not missing, f"own-policy.md's table of the view misses {missing}"
    assert "show in the view at once" in howto


def test_check_of_a_record_whose_policy_changed_points_to_no_replay(folder, cli):
    # the walkthrough: after editing the policy file, `kvopt check best.json` said only that
    # the record is not re-checkable; --no-replay (documented in own-policy.md) checks the rest
    r = cli("search", "--policy", "mine.py:Serial", "--budget", "4", "--seed", "1", "--out",
            "camp", "--no-progress")  # fmt: skip
    assert r.code == 0, r.err
    best = folder / "camp" / "best.json"
    (folder / "mine.py").write_text(SERIAL + "\n# changed\n")
    r = cli("check", best)
    assert r.code == 1 and "has changed since the record was made" in r.out
    assert f"(kvopt check {best} --no-replay checks the schedules, objectives and bracket" in r.out
    tampered = json.loads(best.read_text())
    tampered["alg"] += 1  # a broken bracket as well: then the hint would mislead, so none
    (folder / "tampered.json").write_text(json.dumps(tampered))
    r = cli("check", "tampered.json")
    assert r.code == 1 and "[alg]" in r.out and "--no-replay" not in r.out, r.out


@pytest.mark.parametrize(
    "argv, option",
    [
        (["--ratio-at-most", "1+2/(1-alfa)"], "--ratio-at-most: unknown name 'alfa'"),
        (["--ratio-at-most", "2", "--claim-id", "a b"], "--claim-id: must be a non-empty name"),
        # a number given as text is held to the rule of a number in a claims file (ALG >= Opt:
        # a bound below 1 is violated by every instance, and was accepted from the command line)
        (["--ratio-at-most", "0.5"], "--ratio-at-most: must be a finite number >= 1, got 0.5"),
        (["--ratio-at-most", "inf"], "--ratio-at-most: must be a finite number >= 1, got inf"),
    ],
)
def test_a_bad_own_claim_on_the_command_line_names_the_option(folder, cli, argv, option):
    # the walkthrough: a typo in --ratio-at-most was reported as "--policy.constant: unknown
    # name 'alfa'", an option that does not exist
    r = cli("validate", "--policy", "mine.py:Serial", *argv, "--budget", "2", "--out", "v")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1, r.err
    assert option in r.err and "--policy." not in r.err
    assert not (folder / "v").exists()
