#!/usr/bin/env python3
"""Loads the Chrome trace with the json module and checks its structure
against the Trace Event Format (SPEC §7).

Usage: report_chrome_check.py EMITTER DIR

EMITTER is unit_report_chrome; `--emit PATH HEXNAME...` writes a trace of
the sample run, then per hostile name a kernel launch (GPU time 5 us, on
stream 0x7f0000009000), a second launch captured into a graph (no GPU
time: its host slice names the kernel), a mark of the same name, and a
thread named by it,
then BULK launches of bulk_kernel(float*) alternating devices 0/1 and
three streams, with GPU durations 1000 + i % 1000 ns.
"""
import json
import os
import subprocess
import sys

from report_json_check import HOSTILE

BULK = 60000
GPU_TID_BASE = 1 << 22
PHASES = {"X", "C", "M", "b", "e", "i"}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_event(ev, i):
    where = f"event {i}"
    if not isinstance(ev, dict):
        check(False, f"{where} is not an object")
        return
    ph = ev.get("ph")
    check(ph in PHASES, f"{where}: ph {ph!r}")
    check(isinstance(ev.get("name"), str), f"{where}: name")
    check(isinstance(ev.get("cat"), str), f"{where}: cat")
    check(isinstance(ev.get("pid"), int) and isinstance(ev.get("tid"), int), f"{where}: pid/tid")
    check(number(ev.get("ts")), f"{where}: ts")
    if ph == "X":
        check(number(ev.get("dur")) and ev["dur"] >= 0, f"{where}: dur {ev.get('dur')!r}")
    if ph == "C":
        args = ev.get("args")
        check(isinstance(args, dict) and args and all(number(v) for v in args.values()),
              f"{where}: counter args {args!r}")
    if ph in ("b", "e"):
        check(isinstance(ev.get("id"), str), f"{where}: async id")
    if ph == "i":
        check(ev.get("s") in ("t", "p", "g"), f"{where}: instant scope")
    if ph == "M":
        check(isinstance(ev.get("args"), dict), f"{where}: metadata args")


def main():
    emitter, workdir = sys.argv[1], sys.argv[2]
    path = os.path.join(workdir, "check.trace.json")
    subprocess.run([emitter, "--emit", path] + [n.hex() for n in HOSTILE], check=True)
    raw = open(path, "rb").read()
    os.unlink(path)
    doc = json.loads(raw.decode("utf-8"))  # strict: the whole file must be valid UTF-8
    check(isinstance(doc, dict) and set(doc) == {"traceEvents", "displayTimeUnit"},
          "top level: traceEvents and displayTimeUnit")
    check(doc.get("displayTimeUnit") == "ns", "displayTimeUnit")
    events = doc.get("traceEvents", [])
    check(len(raw) > 4 * (1 << 20), f"the trace is only {len(raw)} bytes")
    for i, ev in enumerate(events):
        check_event(ev, i)
    if failures:
        return report()
    check_content(events, sort_index=True)
    return report()


def check_content(events, sort_index, flow_base=0):
    """What the sample run, the hostile names and the bulk launches must
    show (in the Chrome trace's terms; report_pftrace_check.py brings the
    Perfetto trace to them). GPU tracks have a sort index in Chrome's;
    flow ids count from flow_base + 1."""
    meta = [e for e in events if e["ph"] == "M"]
    names = {(e["name"], e["tid"]): e["args"] for e in meta}
    check(any(e["name"] == "process_name" and e["args"].get("name") == "batch_ode" for e in meta),
          "process_name")
    gpu = [e for e in events if e["ph"] == "X" and e["tid"] >= GPU_TID_BASE]
    for e in gpu:
        check(("thread_name", e["tid"]) in names, f"GPU track {e['tid']} has no thread_name")
        check(not sort_index or ("thread_sort_index", e["tid"]) in names,
              f"GPU track {e['tid']} has no sort index")
    tracks = {names[("thread_name", e["tid"])]["name"] for e in gpu if e["name"].startswith("bulk")}
    want_tracks = {f"GPU {i % 2} stream 0x{0x7f000000a000 + 0x100 * (i % 3):x}" for i in range(6)}
    check(tracks == want_tracks, f"bulk tracks {sorted(tracks)}")

    # The GPU slices' durations are the records': 1000 + i % 1000 ns, in order.
    bulk = [e for e in gpu if e["name"] == "bulk_kernel(float*)"]
    check(len(bulk) == BULK, f"{len(bulk)} bulk GPU slices")
    durations = [round(e["dur"] * 1000) for e in bulk]
    check(durations == [1000 + i % 1000 for i in range(BULK)], "bulk GPU durations")
    host = [e for e in events if e["ph"] == "X" and e["name"] == "cuLaunchKernel"]
    check(len(host) == 25 + 2 * len(HOSTILE) + BULK, f"{len(host)} host launch slices")
    check(all(round(e["dur"] * 1000) == 100 for e in host[25:]), "host launch durations")
    check(all("args" not in e for e in host[:25] + host[25 + 2 * len(HOSTILE):]),
          "a launch with a GPU slice repeats the kernel's name")

    # Flows: each GPU slice ends the one flow that starts at its launch, ids
    # counting from 1 in launch order; captured launches start none.
    outs = [e for e in events if e.get("flow_out")]
    ins = [e for e in events if e.get("flow_in")]
    check(len(ins) == len(gpu) and all(e.get("flow_in") is True for e in gpu),
          f"{len(ins)} flow ends for {len(gpu)} GPU slices")
    check([e["bind_id"] for e in outs] == [flow_base + i for i in range(1, len(gpu) + 1)],
          "flow ids: not 1, 2, ... in launch order")
    check([e["bind_id"] for e in ins] == [e["bind_id"] for e in outs],
          "flow ends not in the order of their starts")
    check(all(o["tid"] < GPU_TID_BASE and o["cat"] == i["cat"] for o, i in zip(outs, ins)),
          "a flow starts elsewhere than at a host call of its GPU slice's category")
    check(not any("bind_id" in e for e in host[26:25 + 2 * len(HOSTILE):2]),
          "a captured launch starts a flow")

    # Hostile names: kernels on the GPU, in the host slices' args, marks, thread names.
    want = [n.decode("utf-8", errors="replace") for n in HOSTILE]
    hostile = [e for e in gpu if e["name"] in want]
    check([e["name"] for e in hostile] == want, "kernel names did not round-trip")
    check(all(round(e["dur"] * 1000) == 5000 for e in hostile), "hostile kernel durations")
    captured = host[26:25 + 2 * len(want):2]
    check([e.get("args", {}).get("kernel") for e in captured] == want, "captured launch args")
    marks = [e["name"] for e in events if e["ph"] == "i"]
    check(marks[-len(want):] == want, "mark names")
    sample_marks = [m for c in range(12)
                    for m in ["chunk done"] + (["step size halved"] if c % 4 == 1 else [])]
    check(marks[:-len(want)] == sample_marks, f"the sample's marks: {marks[:-len(want)]}")
    threads = [e["args"]["name"] for e in meta if e["name"] == "thread_name" and
               e["tid"] < GPU_TID_BASE]
    check(threads == want, "thread names")


def report(what="report trace"):
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"{what}: structure, durations and names OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
