#!/usr/bin/env bash
# Builds the libFuzzer harnesses in build-fuzz/ and runs each on its seed corpus
# (fuzz/corpus/NAME) and its regression inputs (fuzz/regression/NAME), then prints
# a table: executions, seconds, crashes, timeouts, leaks. See docs/fuzzing.md.
#
#   fuzz/run.sh                          CI: 2000 executions per harness
#   fuzz/run.sh --runs 1000000           the long run (docs/BENCHMARKS.md)
#   fuzz/run.sh --max-total-time 60      a minute per harness
#   fuzz/run.sh --only scenario          one harness (repeat --only for more)
#
# Inputs libFuzzer finds go to build-fuzz/corpus/NAME (never into the repo), what
# crashes to build-fuzz/artifacts/NAME/. Exit status 1 when any harness failed.
# Environment: CXX (default clang++), TRAINSIM_FUZZ_BUILD_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=2000
MAX_TIME=0
ONLY=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --max-total-time) MAX_TIME=$2; shift 2 ;;
    --only) ONLY+=("$2"); shift 2 ;;
    *) echo "usage: fuzz/run.sh [--runs N] [--max-total-time S] [--only NAME]..." >&2; exit 2 ;;
  esac
done

BUILD=build-fuzz
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -DTRAINSIM_FUZZ=ON -DCMAKE_CXX_COMPILER="${CXX:-clang++}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" \
    -DTRAINSIM_BUILD_TESTS=OFF -DTRAINSIM_BUILD_BENCH=OFF -DTRAINSIM_GUI=OFF -DTRAINSIM_CUDA=OFF
fi
cmake --build "$BUILD" --target fuzzers -j "${TRAINSIM_FUZZ_BUILD_JOBS:-$(nproc)}"

# Every fuzz/NAME_fuzzer.cc, or those named by --only.
NAMES=()
if [ ${#ONLY[@]} -gt 0 ]; then
  NAMES=("${ONLY[@]}")
else
  for f in fuzz/*_fuzzer.cc; do
    n=$(basename "$f" .cc)
    NAMES+=("${n%_fuzzer}")
  done
fi

# The dictionary of a harness: its own format's (fuzz/dict/NAME.dict).
dict_of() {
  [ -f "fuzz/dict/$1.dict" ] && echo "-dict=fuzz/dict/$1.dict"
  return 0
}

# "crash", "timeout", "leak" or "" from a libFuzzer log.
failure_of() {
  if grep -q "ERROR: libFuzzer: timeout" "$1"; then
    echo timeout
  elif grep -q "ERROR: LeakSanitizer" "$1"; then
    echo leak
  elif grep -qE "ERROR: (libFuzzer|AddressSanitizer|UndefinedBehaviorSanitizer)|runtime error:|fuzz check failed" "$1"; then
    echo crash
  fi
}

failed=()
rows=()
for name in "${NAMES[@]}"; do
  bin="$BUILD/fuzz/${name}_fuzzer"
  [ -x "$bin" ] || { echo "no harness $bin" >&2; exit 2; }
  mkdir -p "$BUILD/corpus/$name" "$BUILD/artifacts/$name" "$BUILD/logs"
  dirs=("$BUILD/corpus/$name" "fuzz/corpus/$name")
  [ -d "fuzz/regression/$name" ] && dirs+=("fuzz/regression/$name")
  log="$BUILD/logs/$name.log"
  echo "== $name: $bin -runs=$RUNS ${dirs[*]}" >&2
  start=$(date +%s.%N)
  set +e
  "$bin" -runs="$RUNS" -max_total_time="$MAX_TIME" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$name/" $(dict_of "$name") \
    "${dirs[@]}" > "$log" 2>&1
  rc=$?
  set -e
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  execs=$(grep -o "stat::number_of_executed_units: [0-9]*" "$log" | tail -1 | awk '{print $2}' || true)
  failure=$(failure_of "$log")
  if [ $rc -ne 0 ] && [ -z "$failure" ]; then failure=crash; fi
  crashes=0 timeouts=0 leaks=0
  case "$failure" in
    crash) crashes=1 ;;
    timeout) timeouts=1 ;;
    leak) leaks=1 ;;
  esac
  if [ -n "$failure" ]; then
    failed+=("$name")
    echo "$name: $failure (log: $log, input: $BUILD/artifacts/$name/)" >&2
    grep -E "fuzz check failed|runtime error|ERROR:|SUMMARY" "$log" | head -5 >&2 || true
  fi
  rows+=("$(printf '| %s | %s | %.0f | %d | %d | %d |' "$name" "${execs:-?}" "$seconds" \
    "$crashes" "$timeouts" "$leaks")")
done

echo
echo "| harness | executions | seconds | crashes | timeouts | leaks |"
echo "|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
