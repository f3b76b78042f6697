#!/usr/bin/env python3
"""How a traced process ends: exitpath_prog.c (and exitpath_py.py) run bare
and under libgputrace.so on the emulated driver, one case per invocation.

check_exitpath.py --lib LIB --prog PROG --py SCRIPT CASE

  signal    SIGINT (and SIGTERM) to 8 launching threads with a 10 s kernel
            pending: the shim adds at most EXIT_BOUND_S (plus a tolerance
            for loaded machines) to the exit; the pending kernel is reported
            without GPU time and counted
  return    main returns with that kernel still running: the same bound
  late      threads launching until the process ends: the program's own
            count of launches == reported + dropped + late, exactly, with a
            small buffer too (drops)
  exec      each exec variant: a success leaves the report of the work so
            far; a failure returns what it returns bare (errno too) and the
            final report counts everything once
  exit      _exit and _Exit write the report first
  children  vfork + exec (success and failure), vfork + _exit, posix_spawn:
            the child never reports in the parent's name or memory
  python    os.execv and os._exit from python3, and memory left to the
            primary context that an atexit handler releases
  memory    memory freed by an atexit handler, a C++ static destructor and
            the program's destructor is freed, memory in a destroyed or reset
            context released with it; only what was still held at the end is
            a leak
"""
import argparse
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from verdict import check, report  # noqa: E402

KERNEL_NS = "tick=1000,hold=10000000000"  # hold: 10 s, far past any bound
EXIT_BOUND_S = 0.100    # what the shim may add to an exit (no files asked for)
TOLERANCE_S = 0.900     # a loaded CI machine (0.5 s seen); the old exit path took 2 s or more
RUNS = 5                # latency: medians of this many runs
TIMEOUT = 120
MIB = 1024 * 1024
BEFORE, AFTER = 40, 25  # launches before and after the exit point (exitpath_prog.c)
EXEC_VARIANTS = ["execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle", "fexecve"]

args = None


def env_for(shim, **gputrace):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
    env.pop("LD_PRELOAD", None)
    env["GPUTRACE_EMU_KERNEL_NS"] = KERNEL_NS
    if shim:
        env["LD_PRELOAD"] = args.lib
    env.update({"GPUTRACE_" + k.upper(): v for k, v in gputrace.items()})
    return env


def run(command, shim, **gputrace):
    p = subprocess.run(command, env=env_for(shim, **gputrace), capture_output=True,
                       timeout=TIMEOUT)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def summaries(stderr):
    return [l for l in stderr.splitlines() if l.startswith("gputrace: ") and " | wall " in l]


def reports_in(d):
    out = []
    for path in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(path) as f:
            out.append(json.load(f))
    return out


def one_report(d, what):
    reports = reports_in(d)
    check(len(reports) == 1, f"{what}: {len(reports)} reports, expected one: {os.listdir(d)}")
    return reports[0] if reports else None


def kernel(r, name):
    rows = [k for k in r["kernels"] if k["name"] == name] if r else []
    return rows[0] if rows else {"calls": 0, "timed": 0}


def traced(command, what, **gputrace):
    """Runs command under the shim with a JSON report in a fresh directory:
    (status, stdout, stderr, the report)."""
    with tempfile.TemporaryDirectory() as d:
        status, out, err = run(command, True, output=os.path.join(d, "r.%p"), **gputrace)
        return status, out, err, one_report(d, what)


def same_as_bare(command, what, **gputrace):
    """Exit status and stdout as without the shim; returns the traced run."""
    bare = run(command, False)
    status, out, err, r = traced(command, what, **gputrace)
    check(status == bare[0], f"{what}: status {status} under the shim, {bare[0]} bare")
    check(out == bare[1], f"{what}: stdout {out!r} under the shim, {bare[1]!r} bare")
    return status, out, err, r


# ---------------------------------------------------------------- latency

def signal_exit_s(shim, sig, output_dir):
    """Seconds from the signal to the process's end, and its status."""
    env = env_for(shim, output=os.path.join(output_dir, "r.%p")) if shim else env_for(False)
    p = subprocess.Popen([args.prog, "signal"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    ready = p.stdout.readline()
    check(ready == b"ready\n", f"signal: the program said {ready!r}")
    time.sleep(0.3)
    t0 = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=TIMEOUT)
    return time.monotonic() - t0, p.returncode, err.decode(errors="replace")


def check_bound(what, bare, shim):
    b, s = statistics.median(bare), statistics.median(shim)
    check(s - b <= EXIT_BOUND_S + TOLERANCE_S,
          f"{what}: the shim added {1000 * (s - b):.0f} ms to the exit (median of {RUNS}; bare "
          f"{1000 * b:.1f} ms), more than {1000 * EXIT_BOUND_S:.0f} ms + "
          f"{1000 * TOLERANCE_S:.0f} ms")
    print(f"{what}: bare {1000 * b:.1f} ms, under the shim {1000 * s:.1f} ms (medians)")


def check_pending_hold(what, r, stderr):
    hold = kernel(r, "hold")
    check(hold["calls"] == 1 and hold["timed"] == 0,
          f"{what}: the pending kernel: {hold}, expected one call without GPU time")
    pending = r["totals"].get("gpu_pending_at_exit", 0) if r else 0
    check(pending >= 1, f"{what}: gpu_pending_at_exit {pending}, expected the pending kernel")
    check(f"{pending} GPU operations were still pending" in stderr,
          f"{what}: the summary does not say how many were pending: {stderr[:500]!r}")


def case_signal():
    for sig in (signal.SIGINT, signal.SIGTERM):
        what = signal.Signals(sig).name
        bare, shim = [], []
        for _ in range(RUNS):
            seconds, status, _ = signal_exit_s(False, sig, None)
            check(status == -sig, f"{what}: bare status {status}")
            bare.append(seconds)
            with tempfile.TemporaryDirectory() as d:
                seconds, status, err = signal_exit_s(True, sig, d)
                check(status == -sig, f"{what}: status {status} under the shim")
                shim.append(seconds)
                r = one_report(d, what)
                check_pending_hold(what, r, err)
        check_bound(what, bare, shim)


def case_return():
    bare, shim = [], []
    command = [args.prog, "return-pending"]
    for _ in range(RUNS):
        t0 = time.monotonic()
        b = run(command, False)
        bare.append(time.monotonic() - t0)
        t0 = time.monotonic()
        status, out, err, r = traced(command, "return")
        shim.append(time.monotonic() - t0)
        check(status == b[0] == 0 and out == b[1], f"return: {status} {out!r}, bare {b[:2]}")
        check_pending_hold("return", r, err)
        tick = kernel(r, "tick")
        check(tick["calls"] == BEFORE and tick["timed"] == BEFORE,
              f"return: completed kernels keep their GPU time: {tick}")
    check_bound("return", bare, shim)


# ---------------------------------------------------------------- late events

def case_late():
    for buffer_mb in ("64", "1"):
        what = f"late (buffer {buffer_mb} MiB)"
        status, out, err, r = traced([args.prog, "late", "8"], what, buffer_mb=buffer_mb)
        m = re.search(r"^launches (\d+)$", out, flags=re.M)
        check(status == 0 and m, f"{what}: status {status}, stdout {out!r}")
        if not (m and r):
            continue
        launched = int(m.group(1))
        reported = kernel(r, "tick")["calls"]
        dropped, late = r["totals"]["dropped"], r["totals"].get("late_events", 0)
        check(reported + dropped + late == launched,
              f"{what}: reported {reported} + dropped {dropped} + late {late} = "
              f"{reported + dropped + late}, the program launched {launched}")
        check(late > 0, f"{what}: no late events, though the threads launched past the cut")
        header = summaries(err)
        check(len(header) == 1 and header[0].endswith(f"| {dropped} dropped | {late} late"),
              f"{what}: header {header}")
        # With room to spare, every late event is a launch the drain read.
        if buffer_mb == "64" and dropped == 0:
            check(f"{late} kernel launches, copies and memsets came after the report was cut"
                  in err, f"{what}: the summary does not say GPU work came late")
        print(f"{what}: {launched} launched = {reported} reported + {dropped} dropped + "
              f"{late} late")


# ---------------------------------------------------------------- exec, _exit

def case_exec():
    for variant in EXEC_VARIANTS:
        what = f"{variant} (succeeds)"
        status, out, err, r = same_as_bare(
            [args.prog, "exec", variant, "/bin/sh", "-c", "exit 7"], what)
        check(status == 7, f"{what}: status {status}, expected the new image's 7")
        check(kernel(r, "tick")["calls"] == BEFORE,
              f"{what}: the report before the exec has {kernel(r, 'tick')['calls']} launches, "
              f"expected {BEFORE}")
        check(len(summaries(err)) == 1, f"{what}: {len(summaries(err))} summaries")
        what = f"{variant} (fails)"
        status, out, err, r = same_as_bare([args.prog, "exec", variant, "/nonexistent/x", "a"],
                                           what)
        check(re.search(r"^exec failed: rc -1 errno [1-9]", out, flags=re.M),
              f"{what}: {out!r}")
        check(kernel(r, "tick")["calls"] == BEFORE + AFTER,
              f"{what}: the final report has {kernel(r, 'tick')['calls']} launches, expected "
              f"{BEFORE + AFTER}: each once")
        check(r is not None and r["totals"].get("late_events") == 0, f"{what}: late events")
        # Bound to fail (no such file): no report before it, so one summary.
        check(len(summaries(err)) == 1, f"{what}: {len(summaries(err))} summaries")
    # A file that looks runnable (regular, executable) but is no program: the
    # report before the exec is made, and the final one still counts each
    # launch once.
    with tempfile.NamedTemporaryFile("wb", suffix=".notaprogram", delete=False) as f:
        f.write(b"\x7fELF\x00 not a program")
    try:
        os.chmod(f.name, 0o755)
        what = "execve of a file that is no program"
        status, out, err, r = same_as_bare([args.prog, "exec", "execve", f.name, "a"], what)
        check(re.search(r"^exec failed: rc -1 errno [1-9]", out, flags=re.M), f"{what}: {out!r}")
        check(kernel(r, "tick")["calls"] == BEFORE + AFTER,
              f"{what}: the final report has {kernel(r, 'tick')['calls']} launches, expected "
              f"{BEFORE + AFTER}")
        check(len(summaries(err)) == 2, f"{what}: {len(summaries(err))} summaries, expected the "
              f"one before the exec and the final one")
    finally:
        os.unlink(f.name)


def case_exit():
    for how in ("_exit", "_Exit"):
        status, out, err, r = same_as_bare([args.prog, how], how)
        check(status == 5, f"{how}: status {status}")
        check(kernel(r, "tick")["calls"] == BEFORE, f"{how}: {kernel(r, 'tick')}")
        check(len(summaries(err)) == 1, f"{how}: {len(summaries(err))} summaries")


def case_children():
    cases = [("vfork + exec", ["vfork", "/bin/sh", "-c", "exit 3"], 3),
             ("vfork + failed exec", ["vfork", "/nonexistent/x"], 127),
             ("vfork + _exit", ["vfork-exit"], 3),
             ("posix_spawn", ["spawn", "/bin/sh", "-c", "exit 4"], 4)]
    for what, argv, child_status in cases:
        status, out, err, r = same_as_bare([args.prog] + argv, what)
        check(f"child status {child_status}\n" in out, f"{what}: {out!r}")
        # The child neither reported (one report, one summary) nor ended the
        # parent's recording (every launch of the parent counted).
        check(len(summaries(err)) == 1, f"{what}: {len(summaries(err))} summaries: {err[:400]!r}")
        check(kernel(r, "tick")["calls"] == BEFORE + AFTER,
              f"{what}: {kernel(r, 'tick')['calls']} launches, expected {BEFORE + AFTER}")


# ---------------------------------------------------------------- python

def case_python():
    python = sys.executable
    for mode, want in (("execv", 4), ("_exit", 6)):
        what = f"python {mode}"
        status, out, err, r = same_as_bare([python, args.py, mode], what)
        check(status == want, f"{what}: status {status}")
        check(kernel(r, "tick")["calls"] == BEFORE, f"{what}: {kernel(r, 'tick')}")
    what = "python release-at-exit"
    status, out, err, r = same_as_bare([python, args.py, "release-at-exit"], what)
    if r:
        check(device_counts(r) == [{
            "device": 0, "allocs": 2, "frees": 0, "peak_bytes": 4 * MIB, "current_bytes": 0,
            "leaked_allocs": 0, "leaked_bytes": 0, "unknown_frees": 0,
            "context_released_allocs": 2, "context_released_bytes": 4 * MIB}] and
              device_leaks(r) == [[]], f"{what}: memory {r['memory']['devices']}")
        check("leak" not in [a["rule"] for a in r["advice"]], f"{what}: leak advice {r['advice']}")


# ---------------------------------------------------------------- memory

def device_counts(r):
    """The memory devices' counts, without their largest leaks (at times)."""
    return [{k: v for k, v in d.items() if k != "largest_leaks"} for d in r["memory"]["devices"]]


def device_leaks(r):
    return [d.get("largest_leaks") for d in r["memory"]["devices"]]

def case_memory():
    status, out, err, r = same_as_bare([args.prog, "memory"], "memory")
    if r:
        check(device_counts(r) == [{
            "device": 0, "allocs": 7, "frees": 4, "peak_bytes": 22 * MIB,
            "current_bytes": 5 * MIB, "leaked_allocs": 1, "leaked_bytes": 5 * MIB,
            "unknown_frees": 0, "context_released_allocs": 2,
            "context_released_bytes": 3 * MIB}] and
              [[(k["bytes"], k["kind"]) for k in leaks] for leaks in device_leaks(r)] ==
              [[(5 * MIB, "device")]], f"memory: {r['memory']['devices']}")
        leak = [a for a in r["advice"] if a["rule"] == "leak"]
        check(len(leak) == 1 and leak[0]["count"] == 1 and
              "still held when the process ended" in leak[0]["message"] and
              "Largest: 5.00 MiB on device 0 from exitpath_prog.c:" in leak[0]["message"],
              f"memory: leak advice {leak}")
    check(re.search(r"^ +Device +Allocs +Frees +Current +Peak +Leaked +Released$", err,
                    flags=re.M) and re.search(r"^ +GPU 0 +7 +4 +5\.00 MiB +22\.0 MiB +1 \(5\.00 "
                                              r"MiB\) +2 \(3\.00 MiB\)$", err, flags=re.M),
          f"memory: the table {err[:1500]!r}")
    status, out, err, r = same_as_bare([args.prog, "primary-reset"], "primary reset")
    if r:
        d = r["memory"]["devices"]
        check(len(d) == 1 and d[0].get("context_released_allocs") == 1 and
              d[0].get("context_released_bytes") == 6 * MIB and d[0]["leaked_allocs"] == 0,
              f"primary reset: memory {d}")
        check("leak" not in [a["rule"] for a in r["advice"]],
              f"primary reset: leak advice {r['advice']}")


CASES = {"signal": case_signal, "return": case_return, "late": case_late, "exec": case_exec,
         "exit": case_exit, "children": case_children, "python": case_python,
         "memory": case_memory}


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--prog", required=True)
    parser.add_argument("--py", required=True)
    parser.add_argument("case", choices=sorted(CASES))
    args = parser.parse_args()
    CASES[args.case]()
    return report()


if __name__ == "__main__":
    sys.exit(main())
