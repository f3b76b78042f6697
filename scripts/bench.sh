#!/usr/bin/env bash
# Builds the benchmarks in Release and prints their figures:
#   the cost of recording an event (1 and 2 threads), the drain's
#   throughput, chunk memory against the cap; the writers (every format
#   for 1M and 10M events: time and peak memory); a kernel launch on the
#   emulated driver, bare and under libgputrace.so with GPU timing off and
#   on (ns added per launch, event records per launch, events created).
#   GPUTRACE_BENCH_DIR   build directory (default build/bench)
#   GPUTRACE_BENCH_FILES where the writers' benchmark writes (default /tmp;
#                        the 10M-event trace takes about 1.8 GB for a moment)
set -euo pipefail
source "$(dirname "$0")/setup.sh"

gt_need_packages "${GT_BASE_PACKAGES[@]}"
gt_check_cuda

build=${GPUTRACE_BENCH_DIR:-$gt_root/build/bench}
# BUILD_TESTING configures the emulated driver the launch benchmark runs on.
cmake -S "$gt_root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON >/dev/null
cmake --build "$build" -j "$(gt_jobs)" --target gt_bench_pipeline gt_bench_writers \
    gt_bench_launch gputrace >/dev/null
"$build/bench/gt_bench_pipeline"
"$build/bench/gt_bench_writers" "${GPUTRACE_BENCH_FILES:-/tmp}"
"$build/bench/gt_bench_launch" "$build/lib/libgputrace.so"
