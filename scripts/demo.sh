#!/usr/bin/env bash
# The demo: builds gputrace and the example batch ODE solver (examples/),
# runs the solver and its NVRTC variant under `gputrace`, prints their
# summaries and says where the text, JSON, CSV and trace files went. The
# commands it shows can be pasted once the environment script it writes
# (OUT/env.sh: gputrace on PATH, and the emulator's settings where it runs
# on the emulator) has been sourced.
#
# On a machine with an NVIDIA driver (`nvidia-smi -L` answers) the
# programs run on the GPU, as built by nvcc with its default static
# runtime. Elsewhere they run on the project's CPU emulation of CUDA,
# with simulated kernel and copy durations of roughly what an H200 takes,
# and the demo says so. On a fresh Debian machine, as root, it first
# installs what is missing (scripts/setup.sh): on a GPU only CMake, the
# compilers and python3.
#
# Usage: scripts/demo.sh [--run-only] [--emulator] [--build-dir DIR] [--out DIR]
#   --run-only       use the build directory as it is (no packages, no build)
#   --emulator       run on the CPU emulation even where there is a GPU
#   --build-dir DIR  where to build (default build/demo)
#   --out DIR        where the reports go (default out/demo)
set -euo pipefail
source "$(dirname "$0")/setup.sh"

build="$gt_root/build/demo"
out="$gt_root/out/demo"
run_only=0
emulator=0
while [ $# -gt 0 ]; do
    case "$1" in
    --run-only) run_only=1; shift ;;
    --emulator) emulator=1; shift ;;
    --build-dir | --out)
        [ $# -ge 2 ] || { echo "gputrace demo: $1 needs a directory" >&2; exit 2; }
        if [ "$1" = --out ]; then out=$2; else build=$2; fi
        shift 2
        ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gputrace demo: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done

if [ "$emulator" = 0 ] && nvidia-smi -L >/dev/null 2>&1; then
    gpu=1
else
    gpu=0
fi

# On the emulator the solver runs at a quarter of its default size: the
# emulator really moves the data of every copy on the CPU, which at full
# size leaves the simulated GPU waiting for the host between chunks, as no
# GPU would. Simulated durations (tests/emu/README.md), from the work
# itself: a chunk of 32768 oscillators x 1000 RK4 steps in double
# precision fills a quarter of an H200's SMs with one thread per system,
# each step some 4 dependent cosines and sixty other operations (a few
# thousand cycles at FP64 latency), about 1 ms a kernel; classifying the
# final states takes microseconds. Copies: PCIe 5 with pinned host memory
# about 50 GB/s, pageable (staged by the driver) about 12, HBM3e device to
# device about 2000, memsets 3000.
emu_args=(--systems 262144)
emu_kernel_ns="integrate_oscillator=1000000,integrate_oscillator_nvrtc=1000000"
emu_kernel_ns+=",_Z21classify_final_statesPKdS0_PiPji=5000,*=5000"
emu_gbps="pinned=50,pageable=12,dtod=2000,memset=3000,peer=300"

build_demo() {
    local targets=(gputrace gputrace_cli examples) testing=OFF
    if [ "$gpu" = 1 ]; then
        # On a GPU nothing of the test suite is needed: the compilers, CMake
        # and python3 (the build's generators) are all, so that the demo also
        # builds where no package archive can be reached.
        gt_need_packages cmake make gcc g++ python3
    else
        # The emulator lives with the tests: BUILD_TESTING configures it.
        gt_need_packages "${GT_BASE_PACKAGES[@]}"
        targets+=(gtemu_cuda gtemu_cudart)
        testing=ON
    fi
    gt_check_cuda
    echo "gputrace demo: building in $build" >&2
    cmake -S "$gt_root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=$testing >/dev/null
    cmake --build "$build" -j "$(gt_jobs)" --target "${targets[@]}" >/dev/null
}

# A path as the user would type it from the repository root.
shown() {
    case "$1" in
    "$gt_root"/*) echo "${1#"$gt_root"/}" ;;
    *) echo "$1" ;;
    esac
}

# run_traced NAME PROGRAM [ARGS...]: the program under gputrace, its
# summary on stdout, its reports at $out/NAME.*; the command shown with
# absolute paths, quoted for a shell, to be pasted after env.sh.
run_traced() {
    local name=$1
    shift
    local cmd=(gputrace -o "$out/$name" -f text,json,csv,chrome,perfetto "$@") line
    printf -v line '%q ' "${cmd[@]}"
    echo
    echo "gputrace demo: \$ ${line% }"
    "$build/bin/gputrace" "${cmd[@]:1}" 2>&1
}

# write_env FILE: what the commands shown need, for `source FILE`.
write_env() {
    {
        echo "# gputrace demo: source this file to run the commands the demo showed."
        printf 'export PATH=%q/bin${PATH:+:$PATH}\n' "$build"
        if [ "$gpu" = 0 ]; then
            echo "# The CPU emulation of CUDA and its simulated durations (tests/emu/README.md)."
            printf 'export LD_LIBRARY_PATH=%q/emu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n' "$build"
            printf 'export GPUTRACE_EMU_KERNEL_NS=%q GPUTRACE_EMU_GBPS=%q\n' "$emu_kernel_ns" "$emu_gbps"
        fi
    } >"$1"
}

[ "$run_only" = 1 ] || build_demo
for f in "$build/bin/gputrace" "$build/lib/libgputrace.so" "$build/examples/batch_ode"; do
    [ -e "$f" ] || { echo "gputrace demo: $f is missing: build first (without --run-only)" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(cd "$build" && pwd)

suffix=""
args=()
if [ "$gpu" = 1 ]; then
    echo "gputrace demo: $(nvidia-smi -L | head -n 1)"
else
    echo "gputrace demo: no NVIDIA GPU here, running on the CPU emulation of CUDA with simulated" \
        "durations (roughly an H200's: 1 ms per integration kernel, copies at 50 GB/s pinned)"
    suffix="_shared"
    args=("${emu_args[@]}")
    export LD_LIBRARY_PATH="$build/emu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export GPUTRACE_EMU_KERNEL_NS="$emu_kernel_ns" GPUTRACE_EMU_GBPS="$emu_gbps"
fi

write_env "$out/env.sh"
printf -v env_shown '%q' "$out/env.sh"
echo "gputrace demo: to run these commands yourself, first: source $env_shown" \
    "(it puts gputrace on PATH$([ "$gpu" = 1 ] || echo ", and sets the emulator's library path and durations"))"
run_traced batch_ode "$build/examples/batch_ode$suffix" "${args[@]}"
run_traced batch_ode_nvrtc "$build/examples/batch_ode_nvrtc$suffix" "${args[@]}"

echo
echo "gputrace demo: the reports are in $(shown "$out")/:"
for name in batch_ode batch_ode_nvrtc; do
    printf '  %-30s %s\n' "$name.txt" "the summary above" \
        "$name.json" "every table, for scripts (schema: docs/reports.md)" \
        "$name.csv" "the tables as CSV" \
        "$name.trace.json" "the timeline: open it in https://ui.perfetto.dev or chrome://tracing" \
        "$name.pftrace" "the same in Perfetto's own format, compressed, several times smaller: for long runs"
done
echo "gputrace demo: the solvers' --pin-all and --cubin options apply the advice" \
    "(examples/README.md); docs/reports.md says how to read the tables"
