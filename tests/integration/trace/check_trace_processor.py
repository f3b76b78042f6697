#!/usr/bin/env python3
"""The traces of real test programs as Perfetto itself reads them: the
program runs under libgputrace.so on the emulated driver, writing the JSON
report, the Chrome trace and the Perfetto trace; both traces are loaded
into Perfetto's trace processor (the Perfetto UI's WebAssembly build under
node, tests/perfetto/perfetto_ui.py), which must
  - record no error or data loss in its `stats` table;
  - see on each GPU track the same kernel, copy and memset slices, by
    name, in both traces: as many, and summed durations within 1 ns a
    slice (the Chrome trace's microseconds round);
  - see, over all GPU tracks, each kernel as many times as the report has
    timed launches of it (a graph's kernel nodes drawn by the launch's
    slice aside), lasting its GPU total within 1 ns a launch, and
    as many copies and memsets lasting as long as the report's timed ones.
Skipped (exit 77, one line) where the trace processor cannot be had.

check_trace_processor.py --lib LIB --build-dir DIR CASE -- program [args...]

CASE as check_trace.py's: nvtx gives the program the path of its manifest;
lanes (threads sharing a stream past the .pftrace's lanes for it, which
leaves slices out and says so) compares only the Chrome trace's slices.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "intercept"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "perfetto"))
from verdict import check, report  # noqa: E402
from check_report import emu_env, read_json  # noqa: E402
import perfetto_ui  # noqa: E402

TIMEOUT = 300
GPU_CATEGORIES = ("kernel", "memcpy", "memset")
STATS_ERRORS = ("select name, idx, severity, value from stats "
                "where value > 0 and severity in ('error', 'data_loss')")
# GPU work on the tracks named "GPU d ..." (the host calls that made it
# share its categories); Chrome's GPU tracks are threads, named by theirs.
GPU_SLICES = ("select coalesce(t.name, th.name) as track, s.category, s.name, count(*), sum(s.dur) "
              "from slice s join track t on s.track_id = t.id "
              "left join thread_track tt on tt.id = s.track_id left join thread th using (utid) "
              f"where s.category in {GPU_CATEGORIES} and track like 'GPU %' group by 1, 2, 3")


def run_program(args, directory):
    env = emu_env()
    env.update(LD_PRELOAD=args.lib, GPUTRACE_OUTPUT=os.path.join(directory, "r.%p"),
               GPUTRACE_FORMAT="json,chrome,perfetto", NVTX_INJECTION64_PATH=args.lib)
    p = subprocess.run(args.command, env=env, capture_output=True, timeout=TIMEOUT)
    if not check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr.decode()[-2000:]}"):
        return None
    reports = [f for f in os.listdir(directory) if re.match(r"r\.\d+\.json$", f)]
    if not check(len(reports) == 1, f"reports {reports}"):
        return None
    base = os.path.join(directory, reports[0][:-len(".json")])
    return read_json(base + ".json"), base + ".trace.json", base + ".pftrace"


def load(folder, trace):
    """Perfetto's view of trace: {(track, category, name): [count, summed ns]}."""
    errors, slices = perfetto_ui.query(folder, trace, [STATS_ERRORS, GPU_SLICES])
    name = os.path.basename(trace)
    check(not errors["error"] and not slices["error"],
          f"{name}: queries failed: {errors['error']} {slices['error']}")
    check(not errors["rows"], f"{name}: the trace processor's stats hold errors: {errors['rows']}")
    seen = {(track, cat, slice_name): [n, dur] for track, cat, slice_name, n, dur in slices["rows"]}
    check(seen, f"{name}: the trace processor sees no GPU slices")
    return seen


def compare_traces(pftrace, chrome):
    for key in sorted(set(pftrace) | set(chrome), key=str):
        a, b = pftrace.get(key, [0, 0]), chrome.get(key, [0, 0])
        check(a[0] == b[0] and abs(a[1] - b[1]) <= max(a[0], 1),
              f"{key}: .pftrace has {a[0]} slices, {a[1]} ns; Chrome trace {b[0]}, {b[1]} ns")


def compare_report(seen, rep, what):
    kernels = defaultdict(lambda: [0, 0])
    totals = defaultdict(lambda: [0, 0])
    for (_, cat, slice_name), (n, dur) in seen.items():
        if cat == "kernel":
            kernels[slice_name][0] += n
            kernels[slice_name][1] += dur
        totals[cat][0] += n
        totals[cat][1] += dur
    wanted = defaultdict(lambda: [0, 0])
    for k in rep["kernels"]:
        # A graph's kernel nodes (CUPTI) are timed in their rows but drawn
        # by the launch's slice; each run of a kernel lasts its configured
        # duration, so the launches' share of the time is in proportion.
        launches = k["timed"] - k.get("graph_calls", 0)
        if launches:
            wanted[k["name"]][0] += launches
            wanted[k["name"]][1] += k["gpu_ns"]["total"] * launches // k["timed"]
    for key in sorted(set(kernels) | set(wanted)):
        a, b = kernels.get(key, [0, 0]), wanted.get(key, [0, 0])
        check(a[0] == b[0] and abs(a[1] - b[1]) <= a[0],
              f"{what}: kernel {key!r}: {a[0]} slices lasting {a[1]} ns; "
              f"the report has {b[0]} timed launches, {b[1]} ns")
    for cat in ("memcpy", "memset"):
        timed = sum(e["timed"] for e in rep[cat])
        ns = sum(e["gpu_ns"]["total"] for e in rep[cat])
        a = totals.get(cat, [0, 0])
        check(a[0] == timed and abs(a[1] - ns) <= a[0],
              f"{what}: {a[0]} {cat} slices lasting {a[1]} ns; "
              f"the report has {timed} timed, {ns} ns")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("case")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    folder = perfetto_ui.ui_dir(args.build_dir)
    with tempfile.TemporaryDirectory() as d:
        if args.case == "nvtx":
            args.command = args.command + [os.path.join(d, "nvtx.json")]
        ran = run_program(args, d)
        if ran:
            rep, chrome_path, pftrace_path = ran
            pftrace = load(folder, pftrace_path)
            chrome = load(folder, chrome_path)
            compare_report(chrome, rep, "Chrome trace")
            # Past a stream's lanes the .pftrace leaves slices out, by design.
            if args.case != "lanes":
                compare_traces(pftrace, chrome)
                compare_report(pftrace, rep, ".pftrace")
    return report()


if __name__ == "__main__":
    sys.exit(main())
