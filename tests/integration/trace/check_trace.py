#!/usr/bin/env python3
"""The timelines of real test programs, run under libgputrace.so on the
emulated driver: the Chrome trace (SPEC §7) or the Perfetto trace (SPEC
§11): its structure, and that it shows what happened (the emulator's
configured durations, the program's streams, threads and memory).

check_trace.py --lib LIB [--format chrome|perfetto --build-dir DIR] CASE -- program [args...]

The Perfetto trace is decoded with Perfetto's own definitions and read as
its trace processor reads it (tests/perfetto: the test is skipped, exit
77, when those cannot be had), then brought to the Chrome trace's terms,
so that both formats answer the same checks. Every case checks:
  - the document: Chrome: traceEvents and displayTimeUnit "ns", each
    event's phase and fields, ts/dur numbers, no dur below 0; Perfetto:
    none of the format's rules broken (pftrace_import.py), every GPU
    track under a "GPU d" track under the process
  - GPU slices: each kernel, copy and memset slice lasts its configured
    duration (kernel name, or bytes / rate) within 1% (1 ns for rounding);
    as many kernel slices as the JSON report has timed launches; graph
    launches under their own name
  - tracks: GPU work on tracks named "GPU d ..." (in Chrome's, with a sort
    index after the host threads); on each stream the slices do not
    overlap (a stream runs its work in order), beyond the GPU timer's
    resolution (STREAM_SLACK_NS)
  - flows: every GPU slice ends the flow its launching host call starts
  - host slices: on the threads that made the calls, never on GPU tracks
  - the memory counter: in use after each change in time order; its
    highest value is the JSON report's peak and its last the bytes still
    in use, per device
Cases add:
  streams   (cu_streams) the program's streams each have a track
  threads   (mt_launcher T N) each launching thread has N launch slices
  nvtx      (nvtx_prog) ranges on their threads, the named worker thread,
            domains in args; each range once opened lasting between the
            program's bounds and nested as deep as it opened it; the 200
            nested pushes left out past the depth cap and the log's
            warning naming that cause
  plain     nothing more (drv_linked: every copy and memset kind)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "intercept"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "perfetto"))
from verdict import check, report  # noqa: E402
from check_report import GBPS, base_name, copy_rate, emu_env, kernel_ns, read_json  # noqa: E402

GPU_TID_BASE = 1 << 22
PHASES = {"X", "C", "M", "b", "e", "i"}
TOLERANCE = 0.01
NVTX_MAX_DEPTH = 128
TIMEOUT = 300
# GPU times are an event's elapsed time (float milliseconds) since a
# per-context epoch event refreshed about once a second, placed at the
# epoch's host time: between two pieces of work on one stream they are good
# to the float's resolution (61 ns at 1 s), against host times to the
# epoch's placement, a microsecond or a few when the machine is busy.
STREAM_SLACK_NS = 100
CLOCK_SLACK_NS = 5000



def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def ns(us):
    return round(us * 1000)


def check_structure(doc):
    check(isinstance(doc, dict) and set(doc) == {"traceEvents", "displayTimeUnit"},
          f"top level keys {sorted(doc) if isinstance(doc, dict) else doc!r}")
    check(doc.get("displayTimeUnit") == "ns", "displayTimeUnit")
    events = doc.get("traceEvents")
    if not check(isinstance(events, list) and events, "no traceEvents"):
        return []
    for i, e in enumerate(events):
        ph = e.get("ph")
        where = f"event {i} ({e.get('name')!r})"
        check(ph in PHASES, f"{where}: ph {ph!r}")
        check(isinstance(e.get("name"), str) and isinstance(e.get("cat"), str),
              f"{where}: name/cat")
        check(isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int), f"{where}: pid/tid")
        check(number(e.get("ts")), f"{where}: ts")
        if ph == "X":
            check(number(e.get("dur")) and e["dur"] >= 0, f"{where}: dur {e.get('dur')!r}")
        if ph == "C":
            check(isinstance(e.get("args"), dict) and all(number(v) for v in e["args"].values()),
                  f"{where}: counter args")
        if ph in ("b", "e"):
            check(isinstance(e.get("id"), str), f"{where}: async id")
    return events


def metadata(events):
    return {(e["name"], e["tid"]): e["args"] for e in events if e["ph"] == "M"}


def expected_gpu_ns(e):
    """The configured duration of a GPU slice, or None for graph launches."""
    cat, name = e["cat"], e["name"]
    if cat == "kernel":
        return None if name == "[graph launch]" else kernel_ns(base_name(name))
    nbytes = e.get("args", {}).get("bytes")
    if not check(isinstance(nbytes, int), f"GPU slice {name!r} has no bytes"):
        return None
    if cat == "memset":
        return nbytes / GBPS["memset"]
    m = re.match(r"^(HtoD|DtoH|DtoD|HtoH|PtoP)(?: (pageable|pinned|managed))? (?:a?sync)$", name)
    if not check(m, f"copy slice name {name!r}"):
        return None
    return nbytes / copy_rate(m.group(1), m.group(2) or "none")


def check_gpu(events, report, pid, sort_index):
    meta = metadata(events)
    gpu = [e for e in events if e["ph"] == "X" and e["tid"] >= GPU_TID_BASE]
    check(gpu, "no GPU slices")
    for e in gpu:
        want = expected_gpu_ns(e)
        if want is not None:
            got = ns(e["dur"])
            check(abs(got - want) <= max(TOLERANCE * want, 1),
                  f"GPU slice {e['name']!r}: {got} ns, configured {want:.0f} ns")
        check(e["pid"] == pid, f"GPU slice {e['name']!r} in pid {e['pid']}")
    tracks = {}
    for e in gpu:
        tracks.setdefault(e["tid"], []).append(e)
    for tid, slices in tracks.items():
        name = meta.get(("thread_name", tid), {}).get("name", "")
        # Streams by the driver's number (cuStreamGetId), as nsys names them.
        check(re.match(r"^GPU \d+ (default stream|per-thread default stream|stream \d+)$",
                       name), f"GPU track {tid} named {name!r}")
        check(not sort_index or
              meta.get(("thread_sort_index", tid), {}).get("sort_index", 0) >= 1000000,
              f"GPU track {name!r} has no sort index after the host threads")
        slices.sort(key=lambda s: s["ts"])
        for a, b in zip(slices, slices[1:]):
            check(ns(b["ts"]) >= ns(a["ts"] + a["dur"]) - STREAM_SLACK_NS,
                  f"{name}: {b['name']!r} at {b['ts']} us starts before {a['name']!r} ends")
    # A graph's kernel nodes (CUPTI) are timed in their rows, drawn by the
    # launch's slice.
    timed = sum(r["timed"] - r.get("graph_calls", 0) for r in report["kernels"])
    slices = sum(1 for e in gpu if e["cat"] == "kernel")
    check(slices == timed, f"{slices} kernel slices, the report has {timed} timed launches")
    graphs = sum(r["timed"] for r in report["kernels"] if r["graph"])
    check(sum(1 for e in gpu if e["name"] == "[graph launch]") == graphs,
          f"graph launch slices, the report has {graphs} timed")
    return tracks


def check_flows(events, gpu):
    """Each GPU slice ends one flow (v2: bind_id, flow_in), started by the
    host call that launched it (flow_out): on a host thread, in the same
    category, no later than the work began (give or take CLOCK_SLACK_NS)."""
    outs = {e["bind_id"]: e for e in events if e["ph"] == "X" and e.get("flow_out") is True}
    ins = {e.get("bind_id"): e for e in gpu if e.get("flow_in") is True}
    check(len(ins) == len(gpu), f"{len(gpu)} GPU slices, {len(ins)} flow ends")
    check(set(ins) == set(outs), f"flows {len(outs)} started, {len(ins)} ended, not the same ids")
    for fid, g in ins.items():
        h = outs.get(fid)
        if h is None:
            continue
        check(h["tid"] < GPU_TID_BASE and h["pid"] == g["pid"] and h["cat"] == g["cat"],
              f"flow {fid}: {h['name']!r} on {h['tid']} launches {g['cat']} {g['name']!r}")
        check(ns(g["ts"]) >= ns(h["ts"]) - CLOCK_SLACK_NS,
              f"flow {fid}: {g['name']!r} at {g['ts']} us starts before its launch at {h['ts']} us")


def check_host(events, pid, tids):
    """Host slices on the calling threads (tids, when given), not on GPU tracks."""
    host = [e for e in events if e["ph"] == "X" and e["cat"] != "nvtx" and e["tid"] < GPU_TID_BASE]
    check(host, "no host slices")
    seen = {e["tid"] for e in host}
    if tids is not None:
        check(seen <= tids, f"host slices on threads {sorted(seen - tids)} that made no call")
    check(all(e["pid"] == pid for e in host), "host slices in another pid")
    return host


def check_memory(events, report):
    counters = {}
    for e in events:
        if e["ph"] == "C":
            counters.setdefault(e["name"], []).append(e)
    devices = report["memory"]["devices"]
    check(bool(devices) == bool(counters), f"memory rows {devices}, counters {sorted(counters)}")
    for d in devices:
        name = "host pinned memory" if d["device"] < 0 else f"GPU {d['device']} memory"
        samples = counters.get(name)
        if not check(samples, f"no counter {name!r}"):
            continue
        check([s["ts"] for s in samples] == sorted(s["ts"] for s in samples),
              f"{name}: counter samples out of time order")
        values = [s["args"]["bytes"] for s in samples]
        check(max(values) == d["peak_bytes"],
              f"{name}: counter peaks at {max(values)}, the report's peak is {d['peak_bytes']}")
        check(values[-1] == d["current_bytes"],
              f"{name}: counter ends at {values[-1]}, {d['current_bytes']} still in use")
        check(len(samples) == d["allocs"] + d["frees"],
              f"{name}: {len(samples)} samples for {d['allocs']} allocations and "
              f"{d['frees']} frees")


def run_case(args, directory):
    env = emu_env()
    env.update(LD_PRELOAD=args.lib, GPUTRACE_OUTPUT=os.path.join(directory, "r.%p"),
               GPUTRACE_FORMAT=f"json,{args.format}", GPUTRACE_VERBOSITY="default",
               GPUTRACE_LOG=os.path.join(directory, "log"),
               NVTX_INJECTION64_PATH=args.lib)
    p = subprocess.run(args.command, env=env, capture_output=True, timeout=TIMEOUT)
    if not check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr.decode()[-2000:]}"):
        return None
    reports = [f for f in os.listdir(directory) if re.match(r"r\.\d+\.json$", f)]
    if not check(len(reports) == 1, f"reports {reports}"):
        return None
    pid = int(reports[0].split(".")[1])
    report = read_json(os.path.join(directory, reports[0]))
    if args.format == "chrome":
        with open(os.path.join(directory, f"r.{pid}.trace.json"), "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))  # strict: valid UTF-8 throughout
    else:
        doc = pftrace_import.load(os.path.join(directory, f"r.{pid}.pftrace"))
    log_path = os.path.join(directory, "log")
    log = open(log_path, errors="replace").read() if os.path.exists(log_path) else ""
    return pid, report, doc, log


def perfetto_structure(trace):
    """The format's rules, then the GPU tracks' place: each under a "GPU d"
    track under the process."""
    for p in trace.problems:
        check(False, p)
    if trace.problems:
        return []
    for s in trace.slices:
        t = trace.tracks[s["track"]]
        if t["name"] and t["name"].startswith("GPU ") and not t["thread"]:
            group = trace.gpu_group(t)
            check(group is not None and t["name"].startswith(group["name"] + " "),
                  f"GPU track {t['name']!r} not under its device's track")
    return trace.events


def case_streams(tracks, streams):
    """Each of the program's streams runs launches on a track of its own."""
    with_kernels = {t for t, slices in tracks.items() if any(s["cat"] == "kernel" for s in slices)}
    check(len(with_kernels) >= streams,
          f"kernels on {len(with_kernels)} tracks, the program used {streams} streams")


def case_threads(events, pid, launches):
    host = [e for e in events if e["ph"] == "X" and "LaunchKernel" in e["name"]]
    per_thread = {}
    for e in host:
        per_thread[e["tid"]] = per_thread.get(e["tid"], 0) + 1
    workers = {t: n for t, n in per_thread.items() if t != pid}
    check(len(workers) == launches[0] and all(n == launches[1] for n in workers.values()),
          f"launch slices per thread {sorted(workers.values())}, expected {launches[0]} threads "
          f"x {launches[1]}")


def nvtx_domain(e):
    return e.get("args", {}).get("domain", "")


def check_nvtx_nesting(nvtx, manifest):
    """Each push/pop range opened once lasts between the program's bounds
    for it and lies inside as many ranges of its domain on its thread as
    the level the program was given; the deep ranges kept are nested one
    in the other."""
    for r in manifest["ranges"]:
        found = [e for e in nvtx if e["name"] == r["name"] and nvtx_domain(e) == r["domain"]]
        if r["calls"] != 1 or r["open"] or r["domain"] == "deep" or not found:
            continue  # several calls, open at exit, or a start/end range (not a slice)
        if not check(len(found) == 1, f"range {r['name']!r} drawn {len(found)} times"):
            continue
        e = found[0]
        dur = ns(e["dur"])
        check(r["inner_ns"] <= dur <= r["outer_ns"],
              f"range {r['name']!r}: {dur} ns, not in [{r['inner_ns']}, {r['outer_ns']}]")
        check(depth(e, nvtx) == r["level"],
              f"range {r['name']!r} at depth {depth(e, nvtx)}, opened at level {r['level']}")
    deep = [e for e in nvtx if nvtx_domain(e) == "deep"]
    check(sorted(depth(e, deep) for e in deep) == list(range(len(deep))),
          "the deep ranges are not nested one in the other")


def depth(e, among):
    """How many ranges of e's domain on e's thread enclose e."""
    start, end = ns(e["ts"]), ns(e["ts"] + e["dur"])
    return sum(1 for o in among if o is not e and o["tid"] == e["tid"] and
               nvtx_domain(o) == nvtx_domain(e) and ns(o["ts"]) <= start and
               ns(o["ts"] + o["dur"]) >= end)


def case_nvtx(events, log, manifest, trace_name):
    nvtx = [e for e in events if e["ph"] == "X" and e["cat"] == "nvtx"]
    meta = metadata(events)
    check(meta.get(("thread_name", manifest["worker_tid"]), {}).get("name") == "nvtx worker",
          "the worker thread is not named")
    on_worker = [e for e in nvtx if e["tid"] == manifest["worker_tid"]]
    check([e["name"] for e in on_worker] == ["worker range"], f"worker slices {on_worker}")
    iters = [e for e in nvtx if e["name"] == "iter"]
    domains = sorted(nvtx_domain(e) for e in iters)
    check(domains == [""] * 5 + ["mylib"], f"'iter' slices' domains {domains}")
    deep = [e for e in nvtx if nvtx_domain(e) == "deep"]
    check(len(deep) == NVTX_MAX_DEPTH, f"{len(deep)} slices in domain 'deep'")
    check_nvtx_nesting(nvtx, manifest)
    lost = 200 - NVTX_MAX_DEPTH
    check(re.search(rf"{trace_name} left out {lost} events: {lost} NVTX ranges nested deeper "
                    rf"than {NVTX_MAX_DEPTH}", log), f"no warning naming the deep ranges: {log!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--format", choices=["chrome", "perfetto"], default="chrome")
    parser.add_argument("--build-dir", help="where the Perfetto definitions' venv lives")
    parser.add_argument("case", choices=["streams", "threads", "nvtx", "plain"])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    args.command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.format == "perfetto":
        import perfetto_env
        perfetto_env.run_in_venv(args.build_dir)
        global pftrace_import
        import pftrace_import
    with tempfile.TemporaryDirectory(prefix="gt-trace-") as d:
        if args.case == "nvtx":
            args.command = args.command + [os.path.join(d, "nvtx.json")]
        got = run_case(args, d)
        if got is None:
            return report()
        pid, rep, doc, log = got
        nvtx_manifest = read_json(os.path.join(d, "nvtx.json")) if args.case == "nvtx" else None
    chrome = args.format == "chrome"
    events = check_structure(doc) if chrome else perfetto_structure(doc)
    if not events:
        return report()
    tracks = check_gpu(events, rep, pid, sort_index=chrome)
    check_flows(events, [s for slices in tracks.values() for s in slices])
    check_host(events, pid, {pid} if args.case in ("streams", "plain") else None)
    check_memory(events, rep)
    if args.case == "streams":
        case_streams(tracks, int(args.command[2]))
    elif args.case == "threads":
        case_threads(events, pid, (int(args.command[1]), int(args.command[2])))
    elif args.case == "nvtx":
        case_nvtx(events, log, nvtx_manifest, "the trace" if chrome else "the Perfetto trace")
    return report()



if __name__ == "__main__":
    sys.exit(main())
