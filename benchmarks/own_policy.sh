#!/usr/bin/env bash
# Every command on a policy written outside the repository (issue 44's acceptance; the figures
# of its stop note).  Run from the repository root:  bash benchmarks/own_policy.sh
# It works in a fresh temporary folder, starts a local Dask scheduler and two workers in another
# folder (port 8797), and prints each command's exit status.  About 2 minutes on 2 cores.
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d /tmp/kvopt-own-XXXX); cd "$W"
cat > mine.py <<'PY'
from kvopt.engine.contract import BlindPolicy, ARRIVAL, COMPLETION


class MyFCFS(BlindPolicy):
    """Arrival order, admit while the peak reservation... (blind): start while current memory + s + 1 fits."""

    kills = False

    def __init__(self, slack: int = 0):
        self.slack = slack
        self.queue = []

    def setup(self, view):
        self.queue = sorted(view.jobs, key=lambda j: (view.arrival(j), j))

    def on_events(self, now, events, view, act):
        for e in events:
            if e.kind == ARRIVAL and e.job not in self.queue:
                self.queue.append(e.job)
        if not view.running and self.queue:
            j = self.queue.pop(0)
            act.start(j)
PY
cat > fam.py <<'PY'
import kvopt


def bimodal(rng, n: int = 6, memory: int = 40, short: int = 2):
    """n jobs: half tiny, half long."""
    jobs = []
    for k in range(n):
        if k % 2:
            jobs.append(kvopt.Job(int(rng.integers(1, 4)), short))
        else:
            jobs.append(kvopt.Job(int(rng.integers(4, 10)), int(rng.integers(5, 12))))
    return kvopt.Instance(memory=memory, jobs=tuple(jobs), name="bimodal")
PY
# a copy of the built-in fcfs as a user's file (its true worst ratio grows with M)
sed 's/from \.\.engine\.contract/from kvopt.engine.contract/' "$REPO/kvopt/policy/fcfs.py" > fcfs_copy.py
kvopt gen random --seed 3 --param n=8 --param memory=40 --out inst.json
run() { "$@" > out.txt 2> err.txt; echo "exit $?  :: $*"; }
run kvopt simulate inst.json --policy mine.py:MyFCFS --param slack=1 --json
run kvopt compare inst.json --policies mine.py:MyFCFS,fcfs --exact
run kvopt search --policy mine.py:MyFCFS --budget 24 --seed 1 --out s1 --no-progress
run kvopt search --policy mine.py:MyFCFS --budget 24 --seed 2 --workers 2 --out s2 --no-progress
mkdir -p ../dask-elsewhere-$$; (cd ../dask-elsewhere-$$ && dask scheduler --host 127.0.0.1 --port 8797 --no-dashboard > s.log 2>&1 &) ; sleep 5
(cd ../dask-elsewhere-$$ && dask worker tcp://127.0.0.1:8797 --nworkers 2 --nthreads 1 --no-dashboard > w.log 2>&1 &); sleep 10
run kvopt search --policy mine.py:MyFCFS --budget 24 --seed 3 --scheduler tcp://127.0.0.1:8797 --out s3 --no-progress
pkill -f "dask worker tcp://127.0.0.1:8797"; pkill -f "port 8797"
for d in s1 s2 s3; do run kvopt check $d/best.json; done
run kvopt shrink s2/best.json --min-ratio 1.2 --out shrunk.json
run kvopt check shrunk.json
run kvopt grow s1/best.json --steps 2 --directions memory --out grown
run kvopt certify s1/best.json
run kvopt plot s1/best.json --out worst.png
run kvopt policies --check mine.py:MyFCFS
run kvopt validate --policy fcfs_copy.py:FCFS --ratio-at-most 2 --budget 200 --seed 1 --out v1 --no-progress
grep -o "violated[^|]*" out.txt | head -1
run kvopt validate --policy fcfs_copy.py:FCFS --ratio-at-most 50 --budget 30 --seed 1 --out v2 --no-progress
grep -o "holds[^|]*" out.txt | head -1
cat > claims.toml <<'T'
[[claim]]
id = "fcfs-copy-2"
policy = "fcfs_copy.py:FCFS"
kind = "ratio"
constant = 2
objective = "total"
source = "a copy of fcfs: known to be unbounded"

[[claim]]
id = "mine-alpha"
policy = "mine.py:MyFCFS"
kind = "ratio"
constant = "n"
objective = "total"
source = "serial: within n of Opt"
T
run kvopt validate --claims-file claims.toml --budget 200 --seed 1 --out v3 --no-progress --json
python -c "import json;[print(c['id'],c['verdict'],c.get('record')) for c in json.load(open('out.txt'))['claims']]"
run kvopt gen fam.py:bimodal --seed 1 --param n=8 --out fam8.json
run kvopt search --policy mine.py:MyFCFS --strategy random --family fam.py:bimodal --param n=8 --budget 12 --out sf --no-progress
echo "--- bad input (exit 2, one line, nothing written)"
echo "raise ImportError('my own error')" > broken.py
echo "class NotAPolicy: pass" > notpol.py
for ref in missing.py:X broken.py:X mine.py:Nope notpol.py:NotAPolicy; do run kvopt simulate inst.json --policy $ref --out never.json; cat err.txt; done
run kvopt simulate inst.json --policy mine.py:MyFCFS --param nope=1 --out never.json; cat err.txt
run kvopt simulate inst.json --policy mine.py:MyFCFS --param slack=x --out never.json; cat err.txt
printf '[[claim]]\nid = "x"\npolicy = "mine.py:MyFCFS"\nkind = "ratio"\nconstant = 3\n' > bad.toml
run kvopt validate --claims-file bad.toml --out never; cat err.txt
ls never.json never 2>&1 | head -2
echo "folder: $W"
