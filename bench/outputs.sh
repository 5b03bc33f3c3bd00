#!/usr/bin/env bash
# Writes every output a refactor must keep byte-identical (issue 41) into one folder, so that
# two builds can be compared with `diff -r`:
#   accuracy.txt        bench/accuracy's tables (every corpus point, estimator agreement, bands)
#   error-bands.json    the bands it fits (instance-catalog/error-bands.json but for its command)
#   NAME.simulate.json  `trainsim simulate --json` of every ready scenario
#   NAME.estimate.json  the same with --estimate (the planner's estimator)
#   NAME.plan.json      `trainsim plan` of every ready scenario (the default one included)
#   sim_speed.txt       bench/sim_speed's table with the wall-time and memory columns cut
#
# Usage: bench/outputs.sh BUILD_DIR OUT_DIR [--quick]
#   --quick  skips the plans that take minutes here (llama2-70b-p5, llama2-7b-finetune,
#            mixtral-8x7b-p5) and sim_speed.
# Then: diff -r OUT_DIR_OLD OUT_DIR_NEW (error-bands.json differs in its "generated_by" only).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: bench/outputs.sh BUILD_DIR OUT_DIR [--quick]" >&2
  exit 1
fi
build=$(cd "$1" && pwd)
out=$2
quick=${3:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)

slow="llama2-70b-p5 llama2-7b-finetune mixtral-8x7b-p5"
for f in scenarios/*.json; do
  name=$(basename "$f" .json)
  echo "outputs: $name" >&2
  "$build/trainsim" simulate "$f" --json > "$out/$name.simulate.json"
  "$build/trainsim" simulate "$f" --json --estimate > "$out/$name.estimate.json"
  if [ "$quick" = "--quick" ] && [[ " $slow " == *" $name "* ]]; then continue; fi
  "$build/trainsim" plan "$f" --jobs 2 --out "$out/$name.plan.json" > /dev/null 2>&1
done

echo "outputs: accuracy" >&2
# Its last lines name the bands' path and the wall time: cut them.
"$build/bench/accuracy" --jobs 2 --write-bands "$out/error-bands.json" |
  grep -v '^error bands written to \|^([0-9]* points, [0-9]* s)$' > "$out/accuracy.txt"

if [ "$quick" != "--quick" ]; then
  echo "outputs: sim_speed" >&2
  # Columns: GPUs, nodes, built, model, tp/pp/dp, microbatches, step_s, simulated GPUs, ...;
  # the wall times and memory vary from run to run: keep the simulated figures only.
  taskset -c 0 "$build/bench/sim_speed" | awk -F'|' 'NF > 8 { print $2 "|" $3 "|" $4 "|" $5 "|" $6 "|" $7 "|" $8 "|" $9 }' \
    > "$out/sim_speed.txt"
fi
