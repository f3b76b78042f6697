#!/usr/bin/env python3
"""The demo's run step on the emulator: scripts/demo.sh --run-only
--emulator in a built tree, its output and its files.

check_demo.py DEMO_SH BUILD_DIR

Checks: the one line saying the run is emulated; for each program, the
summary's header and a section per category, the advice the example is
built to draw (pageable-async-memcpy from its pageable status copies in
both, ptx-jit from the NVRTC variant's PTX only); the files it lists
exist and parse (the text is the summary printed, the JSON has the same
advice, the CSV has SPEC's header, the trace's integration kernels last
the simulated 1 ms); the commands shown can be pasted: sourcing the
environment script the demo names, a shell with neither gputrace on PATH
nor the emulator's variables runs the first one as shown.
"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

SECTIONS = ["kernel", "memcpy", "memset", "memory", "compile", "module", "sync", "nvtx", "api",
            "advice"]
CSV_HEADER = ["category", "name", "calls", "total_ns", "avg_ns", "med_ns", "min_ns", "max_ns",
              "stddev_ns", "first_ns", "rest_avg_ns", "bytes", "gbps", "display_name", "clock",
              "time_pct", "pid", "host"]
PROGRAMS = {"batch_ode": ["pageable-async-memcpy"],
            "batch_ode_nvrtc": ["pageable-async-memcpy", "ptx-jit"]}
EXTENSIONS = [".txt", ".json", ".csv", ".trace.json", ".pftrace"]
KERNEL_NS = 1_000_000  # the demo's simulated integration kernel
TIMEOUT = 150



def runs(output):
    """{program: its part of the output}, split at the demo's command lines."""
    parts = re.split(r"^gputrace demo: \$ gputrace -o \S+/(\w+) ", output, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def is_subsequence(lines, text_lines):
    it = iter(text_lines)
    return all(any(line == t for t in it) for line in lines)


def check_run(name, part, out_dir):
    lines = part.splitlines()
    check(any(re.match(r"^gputrace: \S+ .*\| wall .* \| GPU busy .* events \| 0 dropped"
                       r"( \| \d+ late)?$", line)
              for line in lines), f"{name}: no summary header")
    # a category that recorded nothing is named on one line at default
    empty = [c for line in lines if line.startswith("none recorded: ")
             for c in line[len("none recorded: "):].split(", ")]
    for section in SECTIONS:
        check(any(line.startswith(section + ":") for line in lines) or section in empty,
              f"{name}: no {section} section")
    rules = re.findall(r"^  \[([a-z-]+)\] ", part, flags=re.M)
    for rule in PROGRAMS[name]:
        check(rule in rules, f"{name}: no {rule} advice ({rules})")
    if "ptx-jit" not in PROGRAMS[name]:
        check("ptx-jit" not in rules, f"{name}: ptx-jit advice, though nothing was PTX")

    base = os.path.join(out_dir, name)
    for ext in EXTENSIONS:
        if not check(os.path.isfile(base + ext), f"{base}{ext} missing"):
            return
    with open(base + ".txt", encoding="utf-8") as f:
        text = f.read().splitlines()
    check(is_subsequence(text, lines), f"{name}.txt is not the summary printed")
    with open(base + ".json") as f:
        doc = json.load(f)
    check(doc["tool"] == "gputrace" and doc["kernels"], f"{name}.json: no kernels")
    check(sorted(a["rule"] for a in doc["advice"]) == sorted(rules),
          f"{name}.json advice {[a['rule'] for a in doc['advice']]}, printed {rules}")
    with open(base + ".csv", newline="") as f:
        table = list(csv.reader(f))
    check(table and table[0] == CSV_HEADER, f"{name}.csv header {table[:1]}")
    check(any(r[0] == "kernel" and r[1].startswith("integrate_oscillator") for r in table[1:]),
          f"{name}.csv: no integration kernel row")
    with open(base + ".trace.json", encoding="utf-8") as f:
        trace = json.load(f)
    integrate = [e for e in trace["traceEvents"]
                 if e["ph"] == "X" and e["name"].startswith("integrate_oscillator")]
    check(len(integrate) == 8, f"{name}.trace.json: {len(integrate)} integration slices")
    check(all(abs(e["dur"] * 1000 - KERNEL_NS) <= KERNEL_NS / 100 for e in integrate),
          f"{name}.trace.json: integration slices of {[e['dur'] for e in integrate]} us")


def check_pasteable(output, env):
    source = re.search(r"^gputrace demo: to run these commands yourself, first: (source \S+) ",
                       output, flags=re.M)
    shown = re.search(r"^gputrace demo: \$ (gputrace .*)$", output, flags=re.M)
    if not check(source and shown, "no environment script or no command shown"):
        return
    bare = {k: v for k, v in env.items() if k != "LD_LIBRARY_PATH"}
    bare["PATH"] = "/usr/bin:/bin"
    p = subprocess.run(["bash", "-c", f"{source.group(1)} && {shown.group(1)}"], env=bare,
                       capture_output=True, timeout=TIMEOUT)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 0 and re.search(r"^gputrace: \S+ .*\| GPU busy ", err, flags=re.M)
          and "made no CUDA calls" not in err,
          f"the command shown, pasted: status {p.returncode}: {err[-1500:]}")


def main():
    demo, build = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="gt-demo-") as out_dir:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GPUTRACE_", "NVTX_")) and k != "LD_PRELOAD"}
        p = subprocess.run(["bash", demo, "--run-only", "--emulator", "--build-dir", build,
                            "--out", out_dir], env=env, capture_output=True, timeout=TIMEOUT)
        output = p.stdout.decode("utf-8", errors="replace")
        if not check(p.returncode == 0, f"demo.sh exited with {p.returncode}: "
                     f"{p.stderr.decode(errors='replace')[-2000:]}\n{output[-2000:]}"):
            return report()
        check(re.search(r"^gputrace demo: no NVIDIA GPU here, running on the CPU emulation of "
                        r"CUDA with simulated durations .*$", output, flags=re.M),
              "no line saying the run is emulated")
        check(f"gputrace demo: the reports are in {out_dir}/:" in output, "no line saying where")
        listed = re.findall(r"^  (\S+) ", output, flags=re.M)
        want = [name + ext for name in PROGRAMS for ext in EXTENSIONS]
        check(all(f in listed for f in want), f"files listed {listed}, want {want}")
        parts = runs(output)
        check(sorted(parts) == sorted(PROGRAMS), f"runs {sorted(parts)}")
        for name, part in parts.items():
            if name in PROGRAMS:
                check_run(name, part, out_dir)
        check_pasteable(output, env)  # last: it writes the first run's files again
    return report()



if __name__ == "__main__":
    sys.exit(main())
