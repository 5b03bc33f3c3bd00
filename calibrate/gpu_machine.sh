#!/usr/bin/env bash
# Builds and runs trainsim-calibrate on a GPU machine that has CUDA and CMake
# but no SimGrid, Boost or package registry (docs/calibration.md).
#   calibrate/gpu_machine.sh [trainsim-calibrate arguments...]
# nlohmann/json: the Debian header when installed, else third_party/nlohmann/
# (carry it there from a machine that has it). GoogleTest, for the calibrate
# tests: the system's, else sources in third_party/googletest (Debian's
# /usr/src/googletest). NCCL: the CUDA toolkit's, else
# the one inside a PyTorch install (site-packages/nvidia/nccl).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${TRAINSIM_BUILD_DIR:-build-cal}

if [ ! -f /usr/include/nlohmann/json.hpp ] && [ ! -f third_party/nlohmann/json.hpp ]; then
  echo "gpu_machine.sh: nlohmann/json.hpp not found: copy it to third_party/nlohmann/" >&2
  exit 1
fi
nccl_args=()
if [ -z "${NCCL_ROOT:-}" ] && command -v python3 >/dev/null; then
  root=$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)
  [ -n "$root" ] && [ -f "$root/include/nccl.h" ] && nccl_args=(-DNCCL_ROOT="$root")
fi
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_CALIBRATE_ONLY=ON \
  -DCMAKE_CUDA_ARCHITECTURES=native "${nccl_args[@]}"
cmake --build "$BUILD_DIR" -j "$(nproc)"
# The calibrate tests (the cuda backend's on this GPU), when GoogleTest was
# found or carried to third_party/googletest; a failure is reported, and the
# calibration still runs.
if [ -f "$BUILD_DIR/calibrate_tests" ]; then
  ctest --test-dir "$BUILD_DIR" --output-on-failure || echo "gpu_machine.sh: some calibrate tests failed (above)" >&2
fi
"$BUILD_DIR/calibrate/trainsim-calibrate" "$@"
