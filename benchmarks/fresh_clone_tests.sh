#!/usr/bin/env bash
# The README's test command from fresh clones, as issue 56 asks: each run clones the repository
# (HEAD of this checkout) into a new folder, makes a new virtual environment, and runs the
# command exactly, with no cache of any kind (no Numba cache, no .pytest_cache, no .hypothesis).
# With --burners K, K CPU burners (`yes > /dev/null`) run beside each run.  Prints one line per
# run: wall seconds, the pytest summary line, and the load average at the end.
#
#   bash benchmarks/fresh_clone_tests.sh --runs 5
#   bash benchmarks/fresh_clone_tests.sh --runs 3 --burners 2
#   bash benchmarks/fresh_clone_tests.sh --runs 1 --slow    # the slow tests .ci/run runs too
set -euo pipefail
runs=1 burners=0 marker="not slow"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --burners) burners="$2"; shift 2 ;;
    --slow) marker="slow"; shift ;;
    *) echo "fresh_clone_tests.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
repo="$(cd "$(dirname "$0")/.." && pwd)"
echo "marker '$marker', $burners burner(s), $(nproc) cores"
for i in $(seq 1 "$runs"); do
  work="$(mktemp -d)"
  git clone -q "$repo" "$work/kvopt"
  commit="$(git -C "$work/kvopt" rev-parse --short HEAD)"
  pids=()
  for _ in $(seq 1 "$burners"); do yes > /dev/null & pids+=($!); done
  start=$(date +%s)
  set +e
  (
    cd "$work/kvopt"
    python3 -m venv .venv && . .venv/bin/activate && pip install -q -e '.[dev]' \
      && ruff check . && ruff format --check . && lint-imports \
      && python -m pytest -q -n 2 -m "$marker"
  ) > "$work/log" 2>&1
  code=$?
  set -e
  took=$(( $(date +%s) - start ))
  for p in "${pids[@]}"; do kill "$p"; done
  summary="$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$work/log" | tail -1)"
  echo "run $i ($commit, $(date -u +%H:%M) UTC): exit $code, ${took} s, ${summary}, load $(cut -d' ' -f1-3 /proc/loadavg)"
  grep -E '^FAILED|^ERROR' "$work/log" || true
  if [ "$code" -eq 0 ]; then rm -rf "$work"; else echo "  log kept: $work/log"; fi
done
