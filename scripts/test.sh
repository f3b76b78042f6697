#!/usr/bin/env bash
# Runs every test. Installs what is missing (as root), configures, builds
# with warnings as errors, runs ctest. Exits non-zero on any failure.
#   GPUTRACE_BUILD_DIR   build directory (default build/test)
#   extra arguments are passed to ctest (e.g. -R unit -L emu)
set -euo pipefail
source "$(dirname "$0")/setup.sh"

gt_need_packages "${GT_BASE_PACKAGES[@]}" "${GT_TEST_PACKAGES[@]}"
gt_check_cuda

build=${GPUTRACE_BUILD_DIR:-$gt_root/build/test}
gt_configure_build "$build" -DGPUTRACE_WERROR=ON -DBUILD_TESTING=ON
cd "$build"
ctest --output-on-failure -j "$(gt_jobs)" "$@"
