#!/usr/bin/env bash
# How long `kvopt grow` takes with every default on a record of at most 10 jobs (issue 55: within
# 5 minutes on 2 cores; the default --seconds budget is 240 s).  A figure to quote, not a test
# (issue 56: no test asserts the machine's speed).
#
#   bash benchmarks/grow_defaults.sh [RECORD]
set -euo pipefail
record="${1:-instances/worst/small/fcfs.json}"
out="$(mktemp -d)/g"
start=$(date +%s.%N)
kvopt grow "$record" --out "$out" > /dev/null
end=$(date +%s.%N)
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f'{sys.argv[2]}: {float(sys.argv[4])-float(sys.argv[3]):.1f} s wall, budget {d[\"seconds_budget\"]} s, stopped: {d.get(\"stopped\")}, load {open(\"/proc/loadavg\").read().split()[0]}')" "$out/growth.json" "$record" "$start" "$end"
