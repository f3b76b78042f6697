#!/usr/bin/env python3
"""NVTX ranges through libgputrace.so, checked against the manifest
nvtx_prog writes (its own measurements and the emulator's configured
durations).

    check_nvtx.py --lib LIB --prog PROG [--cli GPUTRACE] CASE

CASE:
  preload         LD_PRELOAD and NVTX_INJECTION64_PATH: the JSON rows (calls,
                  wall time, GPU time, level), the anomalies, the Chrome trace
                  (slices on their thread, thread names, start/end pairs,
                  marks), the marks table (JSON and text) and the verbose
                  text tree
  cli             the same through the gputrace command
  injection_only  NVTX_INJECTION64_PATH alone: NVTX loads the library itself
                  (from a static initialiser); ranges and wall times, no GPU
                  time (nothing else is intercepted)
  nvtx_off        GPUTRACE_CATEGORIES=all,-nvtx: NVTX still answers right (the
                  program checks), no range is reported, threads are named

Tolerances: a range's wall time must lie between the program's inner and
outer measurements (see nvtx_prog.c) widened by 5 us + 0.1% for the
conversion of the shim's clock; GPU times within 1% of the configured
durations.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

KERNEL_NS = "nvtx_k1=300000,nvtx_k2=200000"
GBPS = "pinned=10,memset=100"
TIMEOUT = 60
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUTRACE_") and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH")}
    # GPU times are checked against these durations: event pairs read them exactly.
    env.update(GPUTRACE_EMU_KERNEL_NS=KERNEL_NS, GPUTRACE_EMU_GBPS=GBPS,
               GPUTRACE_EMU_EVENT_LATENCY_NS="0")
    env.update(extra)
    return env


def run(args, env):
    p = subprocess.run(args, env=env, capture_output=True, timeout=TIMEOUT)
    if p.returncode != 0:
        print(p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"))
    check(p.returncode == 0, f"{args[0]} exited with {p.returncode}")
    return p


def label(domain, name):
    return f"{domain}:{name}" if domain else name


def wall_slack(ns):
    return 5000 + ns // 1000


def check_rows(report, manifest, gpu):
    rows = {(r["domain"], r["name"]): r for r in report["nvtx"]}
    for m in manifest["ranges"]:
        what = label(m["domain"], m["name"])
        row = rows.get((m["domain"], m["name"]))
        if not check(row is not None, f"no nvtx row for {what}"):
            continue
        check(row["calls"] == m["calls"], f"{what}: {row['calls']} calls, expected {m['calls']}")
        wall = row["wall_ns"]["total"]
        low = m["inner_ns"] - wall_slack(m["inner_ns"])
        if m["open"]:
            check(wall >= low, f"{what}: open range's wall {wall} ns < {m['inner_ns']} ns")
        else:
            high = m["outer_ns"] + wall_slack(m["outer_ns"])
            check(low <= wall <= high,
                  f"{what}: wall {wall} ns outside [{m['inner_ns']}, {m['outer_ns']}] ns")
        check(row["level"] == m["level"], f"{what}: level {row['level']}, expected {m['level']}")
        if not gpu or m["gpu_ns"] is None:
            continue
        got, want = row["gpu_ns_total"], m["gpu_ns"]
        check(abs(got - want) <= want // 100, f"{what}: gpu_ns_total {got}, expected {want}")
        if want and not m["open"]:
            # one stream, synchronised inside the range: the span holds the
            # work and lies inside the range
            span = row["gpu_span_ns_total"]
            check(got * 99 // 100 <= span <= wall + wall_slack(wall),
                  f"{what}: GPU span {span} ns, GPU time {got} ns, wall {wall} ns")
    return rows


def check_deep(report, manifest, rows):
    deep = rows.get(("deep", "deep"))
    too_deep = report["anomalies"]["nvtx_too_deep"]
    if not check(deep is not None, "no row for the deep ranges"):
        return
    check(too_deep > 0 and deep["calls"] + too_deep == manifest["deep_pushes"],
          f"deep: {deep['calls']} timed + {too_deep} too deep != {manifest['deep_pushes']} pushes")
    want = deep["calls"] * manifest["deep_gpu_each"]
    check(abs(deep["gpu_ns_total"] - want) <= want // 100,
          f"deep: gpu_ns_total {deep['gpu_ns_total']}, expected {want}")


def check_anomalies(report, manifest):
    a = report["anomalies"]
    check(a["nvtx_unbalanced_pops"] == manifest["unbalanced_pops"],
          f"unbalanced pops {a['nvtx_unbalanced_pops']}, expected {manifest['unbalanced_pops']}")
    check(a["nvtx_open_at_exit"] == manifest["open_at_exit"],
          f"open at exit {a['nvtx_open_at_exit']}, expected {manifest['open_at_exit']}")
    check(a["nvtx_unmatched_ends"] == 0, f"unmatched ends {a['nvtx_unmatched_ends']}")
    check(a["nvtx_untracked"] == 0, f"untracked ranges {a['nvtx_untracked']}")


def check_trace(trace, manifest, rows):
    events = trace["traceEvents"]
    names = {(e["tid"], e["args"]["name"]) for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    check((manifest["worker_tid"], manifest["worker_name"]) in names,
          f"no thread_name {manifest['worker_name']!r} for tid {manifest['worker_tid']}")
    slices = {}
    for e in events:
        if e["ph"] == "X" and e["cat"] == "nvtx":
            s = slices.setdefault((e["tid"], e["name"]), [0, 0.0])
            s[0] += 1
            s[1] += e["dur"]
    want = {}
    for m in manifest["ranges"]:
        if m["name"] in ("handoff", "never ended"):
            continue  # start/end ranges: b/e events
        row = rows.get((m["domain"], m["name"]))
        w = want.setdefault((m["tid"], m["name"]), [0, 0])
        w[0] += row["calls"] if row else m["calls"]
        w[1] += row["wall_ns"]["total"] if row else 0
    for key, (calls, wall) in want.items():
        got = slices.get(key, [0, 0.0])
        check(got[0] == calls, f"trace: {got[0]} slices {key[1]!r} on tid {key[0]}, expected {calls}")
        check(abs(got[1] * 1000 - wall) <= calls,
              f"trace: slices {key[1]!r} last {got[1] * 1000:.0f} ns, the report says {wall} ns")
    for name in ("handoff", "never ended"):
        b = [e for e in events if e["ph"] == "b" and e["name"] == name]
        e_ = [e for e in events if e["ph"] == "e" and e["name"] == name]
        check(len(b) == 1 and len(e_) == 1 and b[0]["id"] == e_[0]["id"],
              f"trace: start/end range {name!r} is not one b/e pair")
    marks = [e["name"] for e in events if e["ph"] == "i" and e["cat"] == "nvtx"]
    check(sorted(marks) == sorted(manifest["marks"]), f"trace: marks {marks}")


def check_marks(report, text, manifest):
    """The marks table: one row per mark the program made (each made once),
    its times within the run; the text summary lists them."""
    marks = report["nvtx_marks"]
    check(sorted(m["name"] for m in marks) == sorted(manifest["marks"]), f"JSON marks: {marks}")
    wall = report["process"]["wall_ns"]
    for m in marks:
        check(m["domain"] == "" and m["count"] == 1 and m["first_ns"] == m["last_ns"] <= wall,
              f"JSON mark {m}")
    if text is None:
        return
    n = len(manifest["marks"])
    check(f"\nnvtx marks: {n} names, {n} marks\n" in text, "text: no marks table")
    for name in manifest["marks"]:
        check(re.search(r"^ +1 +\+\S+ \S+ +\+\S+ \S+ +" + re.escape(name) + "$", text, re.M),
              f"text: no mark row {name!r}")


def nvtx_text_rows(text):
    """The labels of the verbose nvtx table, in order, as printed."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("nvtx: ")), None)
    if start is None or start + 1 >= len(lines) or "Name" not in lines[start + 1]:
        return None
    column = lines[start + 1].index("Name")
    labels = []
    for line in lines[start + 2:]:
        if not line.strip() or line.strip().startswith("note:"):
            break
        labels.append(line[column:].rstrip())
    return labels


def check_text(text, manifest):
    labels = nvtx_text_rows(text)
    if not check(labels is not None, "no nvtx table in the text summary"):
        return
    for m in manifest["ranges"]:
        want = " " * (2 * m["level"]) + label(m["domain"], m["name"])
        check(want in labels, f"text: no row {want!r} (rows: {labels})")
    # the tree: step's two children right after it
    if "    kernels" in labels and "  step" in labels:
        at = labels.index("  step")
        check(sorted(labels[at + 1:at + 3]) == ["    copies", "    kernels"],
              f"text: step's children do not follow it: {labels}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--cli")
    ap.add_argument("case", choices=["preload", "cli", "injection_only", "nvtx_off"])
    args = ap.parse_args()
    lib = os.path.realpath(args.lib)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        manifest_path = os.path.join(tmp, "manifest.json")
        report_env = dict(GPUTRACE_OUTPUT=out, GPUTRACE_FORMAT="json,chrome,text",
                          GPUTRACE_VERBOSITY="verbose", GPUTRACE_LOG=os.path.join(tmp, "log"))
        if args.case == "cli":
            run([args.cli, "-v", "verbose", "-o", out, "-f", "json,chrome,text", "--",
                 args.prog, manifest_path], clean_env(GPUTRACE_LOG=report_env["GPUTRACE_LOG"]))
        elif args.case == "injection_only":
            run([args.prog, manifest_path], clean_env(NVTX_INJECTION64_PATH=lib, **report_env))
        else:
            extra = {"GPUTRACE_CATEGORIES": "all,-nvtx"} if args.case == "nvtx_off" else {}
            run([args.prog, manifest_path],
                clean_env(LD_PRELOAD=lib, NVTX_INJECTION64_PATH=lib, **report_env, **extra))
        if failures:
            return report(args.case)
        with open(manifest_path) as f:
            manifest = json.load(f)
        with open(out + ".json") as f:
            rep = json.load(f)
        with open(out + ".trace.json") as f:
            trace = json.load(f)
        with open(out + ".txt", encoding="utf-8") as f:
            text = f.read()

        if args.case == "nvtx_off":
            check(rep["nvtx"] == [], f"nvtx rows with the category off: {rep['nvtx']}")
            check(rep["nvtx_marks"] == [], f"marks with the category off: {rep['nvtx_marks']}")
            check(len(rep["kernels"]) == 2, "the kernels are not reported")
            check(not any(e.get("cat") == "nvtx" for e in trace["traceEvents"]),
                  "nvtx events in the trace with the category off")
            names = {(e["tid"], e["args"]["name"]) for e in trace["traceEvents"]
                     if e["ph"] == "M" and e["name"] == "thread_name"}
            check((manifest["worker_tid"], manifest["worker_name"]) in names,
                  "the worker thread is not named")
            return report(args.case)

        emulated = all(m["gpu_ns"] is not None for m in manifest["ranges"] if not m["open"])
        rows = check_rows(rep, manifest, gpu=emulated and args.case != "injection_only")
        check_anomalies(rep, manifest)
        check_marks(rep, text, manifest)
        if args.case == "injection_only":
            check(all(r["gpu_ns_total"] == 0 for r in rep["nvtx"]),
                  "GPU time in ranges though nothing but NVTX is traced")
            return report(args.case)
        check(emulated, "the emulator's durations were not found")
        check_deep(rep, manifest, rows)
        check_trace(trace, manifest, rows)
        check_text(text, manifest)
        return report(args.case)


def report(case):
    for f in failures:
        print("FAIL:", f)
    print(f"nvtx {case}: {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
