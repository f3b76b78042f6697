#!/usr/bin/env bash
# The real-GPU validation of gputrace: what only a GPU can prove.
#
# Builds the project (Release, in build/gpu-check: the shim, the test programs, the
# examples and the CUPTI reference recorder; no test suite, so no cmocka needed), then,
# where an NVIDIA driver answers (`nvidia-smi -L`), runs every test program and example
# bare, under libgputrace.so and under the CUPTI reference, and the Python workloads
# (numba-cuda, CuPy, PyTorch) where python3 has them, and prints the fidelity table
# (scripts/gpu_check/compare.py says what is compared and to what tolerance). The whole
# output is also in build/gpu-check/report.txt, the figures in summary.json beside it.
# Then it measures what each tracer adds to a kernel launch (scripts/gpu_check/
# launch_cost.py: 1 M empty-kernel launches on one stream and from 4 threads, bare, under
# gputrace with GPU timing off and on, under CUPTI; and one cuEventRecord's cost): its
# table follows in the same output, its figures in launch_cost.json.
# Exit status 1 when a check fails, or when the fidelity checks pass but the launch-cost
# measurement fails. Without a GPU it builds, checks that everything it would run was
# built and prints "no NVIDIA GPU: built only" (exit status 0).
#
# Usage: scripts/gpu-check.sh [--build-dir DIR] [--skip-build] [--no-launch-cost]
#                             [run.py options]
#   --build-dir DIR   where to build (default build/gpu-check)
#   --skip-build      use DIR as it is
#   --no-launch-cost  skip the launch-cost measurement
#   run.py options    --gpu-timing auto|cupti|events (GPUTRACE_GPU_TIMING for gputrace's
#                     runs; default auto, where CUPTI must be the source), --only REGEX,
#                     --no-python, --repeat N, --timeout S, --budget S, --tolerance F,
#                     --floor-us US (scripts/gpu_check/run.py --help)
# GPUTRACE_BUILD_JOBS sets the build's parallelism (default: every processor). It installs
# nothing: the check needs no package beyond the compilers, CMake, python3 and the CUDA
# toolkit (the command's report, diff and merge, which need cJSON, are built only where
# cJSON is found).
set -u -o pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build="$repo/build/gpu-check"
skip_build=0
launch_cost=1
run_options=()
while [ $# -gt 0 ]; do
    case "$1" in
    --build-dir)
        [ $# -ge 2 ] || { echo "gpu-check: --build-dir needs a directory" >&2; exit 2; }
        build=$2
        shift 2
        ;;
    --skip-build) skip_build=1; shift ;;
    --no-launch-cost) launch_cost=0; shift ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) run_options+=("$1"); shift ;;
    esac
done
python=$(command -v python3) || { echo "gpu-check: python3 is needed" >&2; exit 2; }
source "$repo/scripts/setup.sh"
check="$repo/scripts/gpu_check/run.py"

# The toolkit: CUDA_HOME, /usr/local/cuda, or the one whose nvcc is on PATH.
cuda_root() {
    local nvcc
    for root in "${CUDA_HOME:-}" /usr/local/cuda; do
        [ -n "$root" ] && [ -f "$root/include/cuda.h" ] && { echo "$root"; return; }
    done
    nvcc=$(command -v nvcc) && dirname "$(dirname "$(readlink -f "$nvcc")")"
}

# Progress goes to stderr: without a GPU, stdout is the one line of the verdict.
build_kit() {
    [ "$skip_build" = 1 ] && return 0
    mkdir -p "$build" || return 1
    local root jobs start=$SECONDS
    root=$(cuda_root)
    jobs=${GPUTRACE_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}
    echo "gpu-check: building in $build (Release, $jobs jobs, log in build.log there)" >&2
    if cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
        -DGPUTRACE_GPU_KIT=ON ${root:+-DGPUTRACE_CUDA_ROOT="$root"} >"$build/build.log" 2>&1 &&
        cmake --build "$build" -j "$jobs" >>"$build/build.log" 2>&1; then
        echo "gpu-check: built in $((SECONDS - start)) s" >&2
    else
        echo "gpu-check: the build failed; the end of $build/build.log:" >&2
        tail -n 30 "$build/build.log" >&2
        return 1
    fi
}

if ! nvidia-smi -L >/dev/null 2>&1; then
    build_kit || exit 1
    "$python" "$check" --build-dir "$build" --check-artifacts || exit 1
    echo "no NVIDIA GPU: built only"
    exit 0
fi

# The launch-cost figures are measurements, not checks: they change the exit status only
# when the fidelity checks passed and the measurement itself failed.
check_all() {
    build_kit || return 1
    "$python" "$check" --build-dir "$build" "${run_options[@]}"
    local status=$?
    if [ "$launch_cost" = 1 ]; then
        echo
        "$python" "$repo/scripts/gpu_check/launch_cost.py" --build-dir "$build" ||
            [ "$status" != 0 ] || status=1
    fi
    return "$status"
}

mkdir -p "$build" || exit 1
check_all 2>&1 | tee "$build/report.txt"
exit "${PIPESTATUS[0]}"
