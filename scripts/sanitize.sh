#!/usr/bin/env bash
# Runs the tests under sanitizers, each in its own build directory:
#   build/tsan   -DGPUTRACE_SANITIZE=thread             the pipeline tests (ctest -L pipeline)
#   build/asan   -DGPUTRACE_SANITIZE=address,undefined  every unit test (ctest -L unit)
# Only the unit test executables (target gt_unit_tests) are built. The integration
# tests preload libgputrace.so into programs, which would need the
# sanitizer runtime preloaded ahead of it; they are not configured in
# sanitizer builds. Exits non-zero on any failure.
#   GPUTRACE_TSAN_DIR, GPUTRACE_ASAN_DIR   build directories
set -euo pipefail
source "$(dirname "$0")/setup.sh"

gt_need_packages "${GT_BASE_PACKAGES[@]}"
gt_check_cuda

# run_label BUILD_DIR SANITIZERS LABEL
run_label() {
    local build=$1 sanitizers=$2 label=$3
    cmake -S "$gt_root" -B "$build" -DGPUTRACE_WERROR=ON -DBUILD_TESTING=ON \
        -DGPUTRACE_SANITIZE="$sanitizers" >/dev/null
    # Every unit test and what it needs (the emulated driver for the GPU
    # timing tests), wherever it is defined; not the programs nvcc links.
    cmake --build "$build" --target gt_unit_tests -j "$(gt_jobs)" >/dev/null
    (cd "$build" && ctest --output-on-failure -j "$(gt_jobs)" -L "$label")
}

export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export ASAN_OPTIONS="detect_leaks=1 abort_on_error=1 ${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 ${UBSAN_OPTIONS:-}"

run_label "${GPUTRACE_TSAN_DIR:-$gt_root/build/tsan}" thread pipeline
run_label "${GPUTRACE_ASAN_DIR:-$gt_root/build/asan}" address,undefined unit
echo "gputrace: sanitizer runs passed"
