#!/usr/bin/env python3
"""Where GPU times come from (SPEC §12, DESIGN §5): CUPTI activity records
where CUPTI can be used, event pairs where not, on the emulator (its
libcupti.so.13 beside its libcuda.so.1; an event pair there reads the work
plus GPUTRACE_EMU_EVENT_LATENCY_NS, a CUPTI record the work alone).

check_gpu_timing.py --cli CLI --lib LIB --apps DIR --own-cupti PROG --emu-dir DIR CASE

  exact        auto, 4 threads x 25,000 launches of a 1 us kernel on one stream:
               source cupti, every launch exactly 1 us (event pairs would
               also time the other threads' kernels)
  events       --gpu-timing events, 1 thread: source events (asked for),
               every launch read 1 us plus the front-end latency
  cupti_path   --gpu-timing cupti with GPUTRACE_CUPTI_PATH naming no file:
               event pairs, one warning line, the detail names the path
  other_major  GPUTRACE_CUPTI_PATH naming a CUPTI 12: refused (the process's
               CUDA is 13), event pairs
  nsight       a variable Nsight Systems sets: event pairs, and why
  subscriber   another CUPTI subscriber holds CUPTI: event pairs, and why
  init_error   CUPTI cannot start (insufficient privileges): event pairs
  fail_kind    CUPTI refuses one activity kind: event pairs, nothing left
               half set up (the program's own later CUPTI use still works)
  handover     a program that starts its own CUPTI session midway: it gets
               its kernel records, the report says mixed and from when,
               work before timed exactly by CUPTI, after by event pairs
  graph        a graph launched 3 times with 4 kernel nodes: each node's
               run is in its kernel's row (graph_calls) at its exact time,
               the launches keep their row
  fork         a child forked after CUDA started: the parent's report
               cupti, the child's event pairs, saying why
  drops        CUPTI drops every 10th record: those launches untimed, the
               detail says how many records CUPTI dropped
  zero         every 10th record without timestamps: untimed, counted
  no_cuda      a process that makes no CUDA call maps no libcupti
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

KERNEL_NS = 1000
LATENCY_NS = 5000
TIMEOUT = 120


def env_for(args, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUTRACE_", "NSYS_", "CUDA_INJECTION"))
           and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH")}
    env["LD_LIBRARY_PATH"] = args.emu_dir
    env["GPUTRACE_EMU_KERNEL_NS"] = f"*={KERNEL_NS}"
    env["GPUTRACE_EMU_EVENT_LATENCY_NS"] = str(LATENCY_NS)
    env.update(extra)
    return env


def traced(args, cmd, options=(), json_name="rep", **extra):
    """Runs cmd under the gputrace command; (process, reports by pid)."""
    d = tempfile.mkdtemp(prefix="gt_timing_")
    template = os.path.join(d, json_name + ".%p")
    p = subprocess.run([args.cli, "-o", template, "-f", "json", *options, "--", *cmd],
                       env=env_for(args, **extra), capture_output=True, text=True,
                       timeout=TIMEOUT)
    reports = {}
    for name in os.listdir(d):
        if name.endswith(".json"):
            with open(os.path.join(d, name)) as f:
                rep = json.load(f)
            reports[rep["process"]["pid"]] = rep
    return p, reports


def one(p, reports, what):
    check(p.returncode == 0, f"{what}: exit status {p.returncode}: {p.stderr.strip()}")
    check(len(reports) == 1, f"{what}: {len(reports)} reports")
    return next(iter(reports.values())) if reports else {"kernels": [], "gpu_timing": {}}


def kernel(rep, name):
    rows = [k for k in rep["kernels"] if k["name"] == name or k.get("display_name") == name]
    check(len(rows) == 1, f"kernel {name!r}: {len(rows)} rows in {[k['name'] for k in rep['kernels']]}")
    return rows[0] if rows else {"calls": 0, "gpu_ns": {}, "graph_calls": 0, "timed": 0}


def timing(rep):
    return rep.get("gpu_timing", {})


def expect_source(rep, source, what, *detail_words):
    t = timing(rep)
    check(t.get("source") == source, f"{what}: source {t.get('source')!r}, want {source!r} ({t})")
    for w in detail_words:
        check(w in t.get("detail", ""), f"{what}: detail {t.get('detail')!r} lacks {w!r}")


def launcher(args, threads, launches, shared):
    return [os.path.join(args.apps, "mt_launcher"), str(threads), str(launches), str(shared)]


def case_exact(args):
    threads, launches = 4, 25000
    p, reps = traced(args, launcher(args, threads, launches, 1))
    rep = one(p, reps, "exact")
    expect_source(rep, "cupti", "exact", "libcupti.so.13")
    k = kernel(rep, "empty_kernel()")
    g = k["gpu_ns"]
    n = threads * launches
    check(k["calls"] == n and k.get("timed") == n, f"exact: {k['calls']} calls, {k.get('timed')} timed")
    check(g.get("min") == KERNEL_NS and g.get("max") == KERNEL_NS,
          f"exact: GPU times {g.get('min')}..{g.get('max')} ns, want {KERNEL_NS} each")
    check(g.get("total") == n * KERNEL_NS, f"exact: total {g.get('total')}")


def case_events(args):
    p, reps = traced(args, launcher(args, 1, 200, 0), ("--gpu-timing", "events"))
    rep = one(p, reps, "events")
    expect_source(rep, "events", "events", "GPUTRACE_GPU_TIMING=events")
    check(timing(rep).get("requested") == "events", f"events: requested {timing(rep)}")
    g = kernel(rep, "empty_kernel()")["gpu_ns"]
    want = KERNEL_NS + LATENCY_NS
    check(abs(g.get("med", 0) - want) <= want // 10,
          f"events: a pair read {g.get('med')} ns (median), want {want} +- 10%")
    check("not CUPTI" not in p.stderr, "events: the summary calls event pairs a fallback")


def fallback(args, what, options, *words, warned=False, **extra):
    p, reps = traced(args, launcher(args, 1, 50, 0), options, **extra)
    rep = one(p, reps, what)
    expect_source(rep, "events", what, *words)
    warnings = [l for l in p.stderr.splitlines() if "CUPTI cannot be used" in l]
    check(len(warnings) == (1 if warned else 0), f"{what}: {len(warnings)} warning lines: {p.stderr}")
    check("GPU times from CUDA event pairs, not CUPTI" in p.stderr,
          f"{what}: the summary does not say why: {p.stderr}")
    g = kernel(rep, "empty_kernel()")["gpu_ns"]
    check(g.get("min", 0) >= KERNEL_NS + LATENCY_NS * 9 // 10,
          f"{what}: event pairs read {g.get('min')} ns")
    return rep


def case_cupti_path(args):
    fallback(args, "cupti_path", ("--gpu-timing", "cupti"), "/nonexistent/libcupti.so.13",
             warned=True, GPUTRACE_CUPTI_PATH="/nonexistent/libcupti.so.13")


def case_other_major(args):
    path = os.path.join(args.emu_dir, "variants", "cupti12", "libcupti.so.12")
    fallback(args, "other_major", (), "CUPTI 12", "CUDA is 13", GPUTRACE_CUPTI_PATH=path)


def case_nsight(args):
    fallback(args, "nsight", (), "NSYS_PROFILING_SESSION_ID", NSYS_PROFILING_SESSION_ID="7")


def case_subscriber(args):
    fallback(args, "subscriber", (), "cuptiSubscribe", "another CUPTI client",
             GPUTRACE_EMU_CUPTI_SUBSCRIBER="nsys")


def case_init_error(args):
    fallback(args, "init_error", (), "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
             GPUTRACE_EMU_CUPTI_INIT_ERROR="insufficient-privileges")


def case_fail_kind(args):
    fallback(args, "fail_kind", (), "cuptiActivityEnable", GPUTRACE_EMU_CUPTI_FAIL_KINDS="memset")
    # Nothing was left on: a program's own session gets its kernel records.
    p, reps = traced(args, [args.own_cupti, "5", "7"],
                     GPUTRACE_EMU_CUPTI_FAIL_KINDS="memset")
    one(p, reps, "fail_kind (own session)")
    check("own_cupti: 7 kernel records" in p.stdout, f"fail_kind: the program's session: {p.stdout}")


def case_handover(args):
    p, reps = traced(args, [args.own_cupti, "20", "30"])
    rep = one(p, reps, "handover")
    check("own_cupti: 30 kernel records" in p.stdout, f"handover: the program got {p.stdout!r}")
    expect_source(rep, "mixed", "handover", "cuptiActivityRegisterCallbacks", "then event pairs")
    check("GPU times from CUPTI, then from CUDA event pairs" in p.stderr,
          f"handover: the summary does not say so: {p.stderr}")
    k = kernel(rep, "apps::scale(float*, float, int)")
    g = k["gpu_ns"]
    check(k["calls"] == 50 and k.get("timed") == 50, f"handover: {k['calls']} calls, {k.get('timed')} timed")
    check(g.get("min") == KERNEL_NS, f"handover: CUPTI's launches read {g.get('min')} ns")
    check(g.get("max", 0) >= KERNEL_NS + LATENCY_NS * 9 // 10,
          f"handover: the pairs after it read {g.get('max')} ns")
    check(g.get("total", 0) >= 20 * KERNEL_NS + 30 * (KERNEL_NS + LATENCY_NS * 9 // 10),
          f"handover: total {g.get('total')}")


def case_graph(args):
    p, reps = traced(args, [os.path.join(args.apps, "capture"), "3", "4", "1024"])
    rep = one(p, reps, "graph")
    expect_source(rep, "cupti", "graph")
    k = kernel(rep, "step")
    check(k.get("graph_calls") == 12, f"graph: step ran {k.get('graph_calls')} times as a node, want 12")
    check(k["calls"] == 5, f"graph: step has {k['calls']} calls (1 launched, 4 captured)")
    g = k["gpu_ns"]
    check(g.get("total") == 13 * KERNEL_NS and g.get("max") == KERNEL_NS,
          f"graph: step's GPU time {g}, want 13 runs of {KERNEL_NS} ns")
    launches = [r for r in rep["kernels"] if r.get("graph")]
    check(len(launches) == 1 and launches[0]["calls"] == 3 and launches[0].get("timed") == 3,
          f"graph: graph launch rows {launches}")
    if launches:
        check(launches[0]["gpu_ns"].get("min", 0) >= 4 * KERNEL_NS,
              f"graph: a launch's span {launches[0]['gpu_ns']} is shorter than its 4 kernels")


def case_fork(args):
    p, reps = traced(args, [os.path.join(args.apps, "fork_after_init"), "3", "1024"])
    check(p.returncode == 0, f"fork: exit status {p.returncode}: {p.stderr}")
    check(len(reps) == 2, f"fork: {len(reps)} reports")
    parent = [r for r in reps.values() if r["process"]["ppid"] not in reps]
    child = [r for r in reps.values() if r["process"]["ppid"] in reps]
    if len(parent) == 1 and len(child) == 1:
        expect_source(parent[0], "cupti", "fork (parent)")
        expect_source(child[0], "events", "fork (child)", "forked child")
        for k in parent[0]["kernels"]:
            check(k.get("timed") == k["calls"], f"fork: parent's {k['name']} untimed")


def lossy(args, what, word, **extra):
    p, reps = traced(args, launcher(args, 1, 100, 0), **extra)
    rep = one(p, reps, what)
    expect_source(rep, "cupti", what, word)
    k = kernel(rep, "empty_kernel()")
    check(k["calls"] == 100 and k.get("timed") == 90, f"{what}: {k['calls']} calls, {k.get('timed')} timed")
    check(k["gpu_ns"].get("min") == KERNEL_NS, f"{what}: timed ones read {k['gpu_ns']}")


def case_drops(args):
    lossy(args, "drops", "dropped by CUPTI", GPUTRACE_EMU_CUPTI_DROP="10")


def case_zero(args):
    lossy(args, "zero", "without timestamps", GPUTRACE_EMU_CUPTI_ZERO_TIMESTAMPS="10")


def case_no_cuda(args):
    prog = [sys.executable, "-c", "print(open('/proc/self/maps').read())"]
    p = subprocess.run([args.cli, "--", *prog], env=env_for(args), capture_output=True, text=True,
                       timeout=TIMEOUT)
    check(p.returncode == 0, f"no_cuda: exit status {p.returncode}")
    check("libgputrace" in p.stdout, "no_cuda: the library was not in the process")
    check("libcupti" not in p.stdout, "no_cuda: libcupti was loaded into a process without CUDA")


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--apps", required=True)
    ap.add_argument("--own-cupti", required=True)
    ap.add_argument("--emu-dir", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args()
    CASES[args.case](args)
    return report()


if __name__ == "__main__":
    sys.exit(main())
