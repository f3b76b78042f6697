#!/usr/bin/env bash
# Builds the benchmarks in Release and prints every figure as one Markdown
# table (figure | value | target), ready for docs/performance.md:
#   the event pipeline: recording an event (1 and 2 threads; the pipeline's
#   own cost, the clock read, and both together as a hook pays them), the
#   drain's throughput, chunk memory against the cap (bench_pipeline.c);
#   a kernel launch on the emulated driver, on the driver's and on the
#   shared runtime's path, bare and under libgputrace.so with GPU timing
#   off and on, with event records and events created per launch, with
#   the CUPTI source and with a bare CUPTI recorder (bench_launch.c), also
#   outside a capture window and with its categories off, and with native
#   call sites on against off; a Numba launch loop with Python call sites
#   on against off (bench_python_launch.py); 2M CUPTI-timed
#   launches from 2 threads through the drain, none dropped or pending; an
#   NVTX range's push and pop, without payload and with the payloads NVTX
#   can carry (bench_nvtx.c); a launch while snapshots of a large report
#   are written, against none (bench_snapshot.c); the checksums' hash per
#   core and what GPUTRACE_CHECKSUM adds to a copy read back, off against
#   the baseline (bench_checksum.c); the writers, every format for 1M and 10M events, to
#   a file and to /dev/null, and each streamed trace apart, the Chrome JSON
#   and the Perfetto protobuf side by side from the same run: its time (and
#   CPU time) and its bytes per record (bench_writers.c); gputrace report,
#   diff and merge on reports of 100,000 rows made for the purpose
#   (bench_tools.c); reading inlined calls and tail calls from the debug
#   information to name native call sites, on the CUDA C++ program of the
#   call sites' tests and on GPUTRACE_BENCH_DEBUG_OBJECTS (bench_inline.c).
# Figures are medians of several runs; the heading gives the machine and
# its load average (and the last line the load at the end), since other
# work on the machine moves them.
#   GPUTRACE_BENCH_DIR   build directory (default build/bench)
#   GPUTRACE_BENCH_BASELINE another libgputrace.so (an earlier build, or one
#                        configured -DGPUTRACE_HARDEN=OFF): the launch and
#                        NVTX figures of both, side by side from the same runs
#   GPUTRACE_BENCH_PYTHON_VENV the Numba environment of the Python launch loop
#                        (default build/test/python-venv, which the python
#                        tests make)
#   GPUTRACE_BENCH_DEBUG_OBJECTS more objects built with -g (space-separated)
#                        whose inlined calls bench_inline.c reads
#   GPUTRACE_BENCH_FILES where the writers' and the tools' benchmarks write
#                        (default /tmp; the 10M-event traces take about
#                        2.9 GB for a moment, the tools' reports 50 MB)
set -euo pipefail
source "$(dirname "$0")/setup.sh"

gt_need_packages "${GT_BASE_PACKAGES[@]}"
gt_check_cuda

build=${GPUTRACE_BENCH_DIR:-$gt_root/build/bench}
files=${GPUTRACE_BENCH_FILES:-/tmp}
# BUILD_TESTING configures the emulated driver and runtime the launch benchmark runs on.
cmake -S "$gt_root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON >/dev/null
cmake --build "$build" -j "$(gt_jobs)" --target gt_bench_pipeline gt_bench_writers \
    gt_bench_launch gt_bench_snapshot gt_bench_nvtx gt_bench_tools gt_bench_checksum gt_bench_inline gputrace gputrace_cli \
    gtemu_cupti cupti_ref mt_launcher gt_callsite_cu_O2 >/dev/null

load() { cut -d' ' -f1 /proc/loadavg; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)

# "N events to DIR: T s in all [...], C s of CPU: ...; trace M MiB, B bytes
# per record; peak RSS K KiB (...)" and "N events to DIR: FORMAT trace T s
# (C s CPU), M MiB, B bytes per record" -> table rows; another line as it is.
writer_rows() {
    local re='^([0-9]+) events to ([^:]+): ([0-9.]+) s in all.*, ([0-9.]+) s of CPU.*; trace ([0-9]+) MiB.*peak RSS ([0-9]+) KiB.*'
    local trace_re='^([0-9]+) events to ([^:]+): (chrome|perfetto) trace ([0-9.]+) s \(([0-9.]+) s CPU\), ([0-9]+) MiB, ([0-9.]+) bytes per record.*'
    local line n target name
    while IFS= read -r line; do
        if [[ $line =~ $trace_re ]]; then
            n=${BASH_REMATCH[1]}
            target=""
            name="Chrome JSON"
            if [ "${BASH_REMATCH[3]}" = perfetto ]; then
                name="Perfetto protobuf"
                # Its packets take 60 bytes a record before they are
                # deflated (docs/limitations.md).
                [ "$n" = 10000000 ] && target="< 1 s; <= 30 bytes per record (60 undeflated)"
            fi
            printf '| %s trace alone, %sM events to %s | %s s (%s s CPU); %s bytes per record (%s MiB) | %s |\n' \
                "$name" "$((n / 1000000))" "${BASH_REMATCH[2]}" "${BASH_REMATCH[4]}" \
                "${BASH_REMATCH[5]}" "${BASH_REMATCH[7]}" "${BASH_REMATCH[6]}" "$target"
        elif [[ $line =~ $re ]]; then
            n=${BASH_REMATCH[1]}
            target=""
            [ "$n" = 10000000 ] && target="<= 2 s; memory flat"
            printf '| writers: every format, %sM events to %s | %s s (%s s CPU); trace %s MiB; peak RSS %s KiB | %s |\n' \
                "$((n / 1000000))" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}" "${BASH_REMATCH[4]}" \
                "${BASH_REMATCH[5]}" "${BASH_REMATCH[6]}" "$target"
        else
            printf '| writers | %s | |\n' "$line"
        fi
    done
}

echo "gputrace benchmarks, $(date -u +%Y-%m-%d): ${cpu:-unknown CPU}, $(gt_jobs) cores," \
    "load average $(load) at the start; medians of several runs"
echo
echo "| figure | value | target |"
echo "|---|---|---|"
"$build/bench/gt_bench_pipeline"
"$build/bench/gt_bench_launch" "$build/lib/libgputrace.so" 1000000 7 "${GPUTRACE_BENCH_BASELINE:--}" \
    "$build/gpu/libcupti_ref.so"
# Python call sites on a Numba launch loop, on against off, in the python
# tests' environment when a test build made one (tests/python/venv.py).
py_venv=${GPUTRACE_BENCH_PYTHON_VENV:-$gt_root/build/test/python-venv}
if [ -x "$py_venv/bin/python" ]; then
    python3 "$gt_root/bench/bench_python_launch.py" "$py_venv" "$build/bin/gputrace" \
        "$build/emu/lib" 20000 7
else
    echo "| Numba launch loop | no Python environment at $py_venv (run the python tests first) | |"
fi
# The drain keeps up with CUPTI's records: 2 M launches of a 1 us kernel
# from 2 threads at the default buffer, none dropped, none pending at the cut.
keep=$(mktemp -d "$files/gt_bench_cupti.XXXXXX")
LD_LIBRARY_PATH="$build/emu/lib" GPUTRACE_EMU_KERNEL_NS='*=1000' \
    "$build/bin/gputrace" -v none --gpu-timing cupti -o "$keep/run" -f json -- \
    "$build/tests/apps/mt_launcher" 2 1000000 >/dev/null
python3 - "$keep/run.json" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
t, k = r["totals"], r["kernels"][0]
print(f"| drain with CUPTI: 2M launches from 2 threads, default buffer ({r['gpu_timing']['source']}) "
      f"| {k['timed']} timed, {t['dropped']} dropped, {t.get('gpu_pending_at_exit', 0)} pending at "
      f"the cut | 0 dropped, 0 pending |")
EOF2
rm -rf "$keep"
"$build/bench/gt_bench_nvtx" "$build/lib/libgputrace.so" 1000000 7 "${GPUTRACE_BENCH_BASELINE:--}"
snapdir=$(mktemp -d "$files/gt_bench_snapshot.XXXXXX")
"$build/bench/gt_bench_snapshot" "$build/lib/libgputrace.so" "$snapdir"
rm -rf "$snapdir"
"$build/bench/gt_bench_checksum" "$build/lib/libgputrace.so" 5 "${GPUTRACE_BENCH_BASELINE:--}"
"$build/bench/gt_bench_writers" "$files" | writer_rows
"$build/bench/gt_bench_tools" "$build/bin/gputrace" "$files"
# shellcheck disable=SC2086 # a list of paths
"$build/bench/gt_bench_inline" "$build/tests/integration/callsites/gt_callsite_cu_O2" \
    ${GPUTRACE_BENCH_DEBUG_OBJECTS:-}
echo
echo "Load average $(load) at the end."
