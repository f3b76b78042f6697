#!/usr/bin/env python3
"""capture_prog under libgputrace.so with capture windows.

check_capture.py --lib LIB --prog PROG --cli CLI --emu-dir DIR CASE

Every case: the program's exit status is 0; its own count of the emulated
driver's event records made while it was outside its windows is 0 (no
event pair outside a window) and inside is 2 per launch; the report holds
exactly the work inside the windows (vec_add, at its configured GPU time),
none of the work outside (no apps::scale row), and says what it captured.

  profiler           GPUTRACE_CAPTURE=profiler-api, three windows (driver,
                     runtime, driver): launches, copies, syncs and profiler
                     calls counted inside only; memory allocated before a
                     window and freed in or after one counted right.
  profiler_never     profiler-api on a program that never starts the
                     profiler: nothing recorded, and the summary says why.
  nvtx               nvtx:phase, a phase on two threads (push/pop and
                     start/end on different threads): ranges opened in the
                     window recorded, one opened before it not, marks inside
                     only, no anomaly.
  nvtx_other_domain  nvtx:phase@other: the program's "phase" ranges are in
                     the default domain, so nothing is recorded, and why.
  nvtx_any_domain    nvtx:phase@*: as nvtx.
  timed              GPUTRACE_DELAY=0.4, GPUTRACE_DURATION=0.8: the work at
                     0.7 s only, 0.8 s captured exactly.
  combined           gputrace --capture profiler-api --delay 0.4 --duration
                     0.8: of three profiler windows only the part of the
                     second after the delay.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from capture_cases import run_case  # noqa: E402
from verdict import check  # noqa: E402

LAUNCHES = 10
VEC_ADD_NS = 200_000
SCALE_NS = 300_000
MIB = 1 << 20
XYZ_BYTES = 3 * 4096 * 4  # the three buffers allocated before any window
TIMEOUT = 60


def env_for(args, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUTRACE_") and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH")}
    env["LD_LIBRARY_PATH"] = args.emu_dir
    env["GPUTRACE_EMU_KERNEL_NS"] = f"vec_add={VEC_ADD_NS},apps::scale={SCALE_NS}"
    # No event pair outside a window (the driver's count of event records
    # tells): event pairs, which read these durations exactly without the
    # emulator's latency. A CUPTI source adds no event record at all.
    env["GPUTRACE_GPU_TIMING"] = "events"
    env["GPUTRACE_EMU_EVENT_LATENCY_NS"] = "0"
    env.update(extra)
    return env


def run(args, mode, out_dir, capture=None, delay=None, duration=None, cli=False):
    """Runs the program traced; returns (process, JSON report, text report)."""
    template = os.path.join(out_dir, "rep")
    if cli:
        env = env_for(args)
        cmd = [args.cli, "-o", template, "-f", "json,text"]
        for opt, value in (("--capture", capture), ("--delay", delay), ("--duration", duration)):
            if value is not None:
                cmd += [opt, value]
        cmd += [args.prog, mode, str(LAUNCHES)]
    else:
        extra = {"LD_PRELOAD": args.lib, "NVTX_INJECTION64_PATH": args.lib,
                 "GPUTRACE_OUTPUT": template, "GPUTRACE_FORMAT": "json,text"}
        for var, value in (("GPUTRACE_CAPTURE", capture), ("GPUTRACE_DELAY", delay),
                           ("GPUTRACE_DURATION", duration)):
            if value is not None:
                extra[var] = value
        env = env_for(args, **extra)
        cmd = [args.prog, mode, str(LAUNCHES)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    check(p.returncode == 0, f"{mode}: exit status {p.returncode}: {p.stderr.strip()}")
    with open(template + ".json") as f:
        rep = json.load(f)
    with open(template + ".txt") as f:
        text = f.read()
    return p, rep, text


def records(p, where):
    for line in p.stdout.splitlines():
        if line.startswith(f"event records {where} "):
            return int(line.split()[-1])
    return None


def rows_by(rows, key):
    return {r[key]: r for r in rows}


def near(got, want, what, tolerance=0.01):
    return check(abs(got - want) <= tolerance * want, f"{what}: {got} ns, configured {want} ns")


def expect_work(p, rep, vec_adds, what):
    """vec_add exactly vec_adds times (or no row), apps::scale never, and the
    program's event-record counts."""
    check(records(p, "outside") == 0,
          f"{what}: {records(p, 'outside')} event records outside the windows")
    check(records(p, "inside") == 2 * vec_adds,
          f"{what}: {records(p, 'inside')} event records inside, expected {2 * vec_adds}")
    kernels = rows_by(rep["kernels"], "name")
    check("apps::scale(float*, float, int)" not in kernels and
          not any("scale" in k for k in kernels), f"{what}: work outside recorded: {list(kernels)}")
    if not vec_adds:
        check(not kernels, f"{what}: kernels recorded: {list(kernels)}")
        return
    k = kernels.get("vec_add")
    if check(k is not None, f"{what}: no vec_add row: {list(kernels)}"):
        check(k["calls"] == vec_adds, f"{what}: vec_add calls {k['calls']}, expected {vec_adds}")
        near(k["gpu_ns"]["total"], vec_adds * VEC_ADD_NS, f"{what}: vec_add GPU time")
    api = rows_by(rep["api"], "name")
    launches = api.get("cuLaunchKernel", {}).get("calls", 0)
    check(launches == vec_adds, f"{what}: cuLaunchKernel calls {launches}, expected {vec_adds}")


def expect_capture(rep, text, mode, windows, what):
    cap = rep.get("capture", {})
    check(cap.get("mode") == mode, f"{what}: capture mode {cap.get('mode')!r}, expected {mode!r}")
    check(cap.get("windows") == windows,
          f"{what}: capture windows {cap.get('windows')}, expected {windows}")
    line = next((x for x in text.splitlines() if x.startswith("gputrace: capture: ")), None)
    check(line is not None and line.startswith(f"gputrace: capture: {mode}"),
          f"{what}: the summary's capture line is {line!r}")
    return cap, line or ""


def api_calls(rep, name):
    return rows_by(rep["api"], "name").get(name, {}).get("calls", 0)


def case_profiler(args, out):
    p, rep, text = run(args, "profiler", out, capture="profiler-api")
    expect_work(p, rep, 3 * LAUNCHES, "profiler")
    cap, line = expect_capture(rep, text, "profiler-api", 3, "profiler")
    wall = rep["process"]["wall_ns"]
    check(90_000_000 <= cap.get("captured_ns", 0) < wall,
          f"profiler: captured {cap.get('captured_ns')} ns of {wall}: each window holds 30 ms")
    check(", 3 windows, " in line and " of " in line, f"profiler: capture line {line!r}")
    for name, calls in (("cuProfilerStart", 2), ("cuProfilerStop", 2), ("cudaProfilerStart", 1),
                        ("cudaProfilerStop", 1), ("cuMemAlloc", 1), ("cuMemFree", 1),
                        ("cuMemcpyHtoD", 3), ("cuCtxSynchronize", 3), ("cuModuleLoadData", 0),
                        ("cuInit", 0)):
        got = api_calls(rep, name)
        check(got == calls, f"profiler: {name} calls {got}, expected {calls}")
    copies = rep["memcpy"]
    check(len(copies) == 1 and copies[0]["calls"] == 3 and copies[0]["bytes"] == 3 * 4096,
          f"profiler: copies {copies}")
    sync = rows_by(rep["sync"], "api")
    check(sync.get("cuCtxSynchronize", {}).get("calls") == 3, f"profiler: sync rows {rep['sync']}")
    devices = rows_by(rep["memory"]["devices"], "device")
    d = devices.get(0)
    if check(d is not None, f"profiler: no memory row for device 0: {devices}"):
        want = {"allocs": 1, "frees": 1, "current_bytes": 4 * MIB + XYZ_BYTES,
                "leaked_allocs": 4, "peak_bytes": 3 * MIB + XYZ_BYTES}
        for key, value in want.items():
            check(d[key] == value, f"profiler: memory {key} {d[key]}, expected {value}")
    check(rep["totals"]["events"] > 0, "profiler: no events")


def case_profiler_never(args, out):
    p, rep, text = run(args, "nvtx", out, capture="profiler-api")
    expect_work(p, rep, 0, "profiler_never")
    cap, line = expect_capture(rep, text, "profiler-api", 0, "profiler_never")
    check(cap.get("captured_ns") == 0, f"profiler_never: captured {cap.get('captured_ns')} ns")
    check(line.endswith("nothing recorded: the program never called cuProfilerStart or "
                        "cudaProfilerStart"), f"profiler_never: capture line {line!r}")
    check(rep["totals"]["events"] == 0, f"profiler_never: {rep['totals']['events']} events")
    for table in ("kernels", "memcpy", "sync", "nvtx", "api", "nvtx_marks"):
        check(not rep[table], f"profiler_never: {table} has rows: {rep[table]}")
    d = rows_by(rep["memory"]["devices"], "device").get(0, {})
    check(d.get("current_bytes") == XYZ_BYTES and d.get("allocs") == 0 and
          d.get("leaked_allocs") == 3, f"profiler_never: memory {d}")


def expect_nvtx(p, rep, text, mode, what):
    expect_work(p, rep, 2 * LAUNCHES, what)
    expect_capture(rep, text, mode, 1, what)
    ranges = {(r["domain"], r["name"]): r for r in rep["nvtx"]}
    phase = ranges.get(("", "phase"))
    check(phase is not None and phase["calls"] == 2, f"{what}: phase rows {ranges}")
    inner = ranges.get(("", "inner"))
    check(inner is not None and inner["calls"] == 1, f"{what}: inner rows {ranges}")
    check(("", "straddle") not in ranges, f"{what}: a range opened outside was recorded")
    marks = {m["name"]: m["count"] for m in rep["nvtx_marks"]}
    check(marks == {"inside": 1}, f"{what}: marks {marks}")
    anomalies = {k: v for k, v in rep["anomalies"].items() if k.startswith("nvtx") and v}
    check(not anomalies, f"{what}: NVTX anomalies {anomalies}")


def case_nvtx(args, out):
    p, rep, text = run(args, "nvtx", out, capture="nvtx:phase")
    expect_nvtx(p, rep, text, "nvtx:phase", "nvtx")


def case_nvtx_any_domain(args, out):
    p, rep, text = run(args, "nvtx", out, capture="nvtx:phase@*")
    expect_nvtx(p, rep, text, "nvtx:phase@*", "nvtx_any_domain")


def case_nvtx_other_domain(args, out):
    p, rep, text = run(args, "nvtx", out, capture="nvtx:phase@other")
    expect_work(p, rep, 0, "nvtx_other_domain")
    _, line = expect_capture(rep, text, "nvtx:phase@other", 0, "nvtx_other_domain")
    check(line.endswith("nothing recorded: no NVTX range 'phase' was opened in domain 'other'"),
          f"nvtx_other_domain: capture line {line!r}")
    check(not rep["nvtx"] and not rep["nvtx_marks"], "nvtx_other_domain: NVTX recorded")


def case_timed(args, out):
    p, rep, text = run(args, "timed", out, delay="0.4", duration="0.8")
    expect_work(p, rep, LAUNCHES, "timed")
    cap, line = expect_capture(rep, text, "all", 1, "timed")
    check(cap.get("captured_ns") == 800_000_000 and cap.get("delay_ns") == 400_000_000 and
          cap.get("duration_ns") == 800_000_000, f"timed: capture {cap}")
    check(line.startswith("gputrace: capture: all, after 400 ms, for 800 ms, 1 window, 800 ms of "),
          f"timed: capture line {line!r}")


def case_combined(args, out):
    p, rep, text = run(args, "combined", out, capture="profiler-api", delay="0.4",
                       duration="0.8", cli=True)
    expect_work(p, rep, LAUNCHES, "combined")
    cap, _ = expect_capture(rep, text, "profiler-api", 1, "combined")
    # From the end of the delay (0.4 s) to the stop at 0.7 s or a little later.
    check(300_000_000 <= cap.get("captured_ns", 0) <= 450_000_000,
          f"combined: captured {cap.get('captured_ns')} ns, expected 0.3 s")
    for name, calls in (("cuProfilerStart", 0), ("cuProfilerStop", 0), ("cudaProfilerStart", 0),
                        ("cudaProfilerStop", 1)):
        got = api_calls(rep, name)
        check(got == calls, f"combined: {name} calls {got}, expected {calls}")


CASES = {
    "profiler": case_profiler,
    "profiler_never": case_profiler_never,
    "nvtx": case_nvtx,
    "nvtx_other_domain": case_nvtx_other_domain,
    "nvtx_any_domain": case_nvtx_any_domain,
    "timed": case_timed,
    "combined": case_combined,
}


if __name__ == "__main__":
    sys.exit(run_case(CASES))
