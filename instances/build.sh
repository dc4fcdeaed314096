#!/usr/bin/env bash
# Regenerates every bundled instance from its generator and seed (kvopt gen is
# deterministic per seed, so this reproduces the files byte for byte).
# Run from the repository root:  bash instances/build.sh
set -euo pipefail
g() { out=$1; shift; kvopt gen "$@" --out "instances/$out"; }
g paper/prop1-L3-case1.json       prop1 --seed 0 --param L=3 --param case=1
g paper/prop1-L3-case2.json       prop1 --seed 0 --param L=3 --param case=2
g paper/prop1-L4-case2.json       prop1 --seed 0 --param L=4 --param case=2
g paper/two-point-M32.json        two-point --seed 0 --param memory=32 --param prompt=2 --param long=2 --param short=10
g random/mixed-n10.json           random --seed 1 --param n=10 --param memory=48 --param max_response=10
g random/large-n8.json            large --seed 2 --param n=8 --param memory=40 --param max_response=10
g random/prompt-heavy-n10.json    prompt-heavy --seed 3 --param n=10 --param memory=48
g random/response-heavy-n10.json  response-heavy --seed 4 --param n=10 --param memory=48 --param max_response=12
g random/identical-prompt-n10.json identical-prompt --seed 5 --param n=10 --param memory=40 --param prompt=3 --param max_response=12
g random/arrivals-n10.json        arrivals --seed 6 --param base=random --param rate=0.3 --param n=10 --param memory=48 --param max_response=10
g traces/azure-n40-M4096.json trace --seed 7 --param n=40 --param memory=4096 --param mode=random --param arrivals=true
g traces/azure-window-n1000-M16384.json trace --seed 0 --param n=1000 --param memory=16384 --param mode=head --param offset=10000 --param arrivals=true
