#!/usr/bin/env python3
"""The Perfetto trace of the writers' sample, decoded with Perfetto's own
protobuf definitions (tests/perfetto): it breaks none of the format's
rules, and it shows what report_chrome_check.py asks of the Chrome trace
(the same checks, on the trace read in the Chrome trace's terms), plus
what only the emitter's extra records make (test_report_pftrace.c):
start/end ranges (one ended on another thread first, one left open), a
range in a domain on a track of its own beside its thread's, two
threads' GPU work on one stream drawn on two lanes of one name, and a
host call recorded after one that ran inside it.

Usage: report_pftrace_check.py EMITTER DIR BUILD_DIR
Skipped (exit 77, one line) when Perfetto's definitions cannot be had."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "perfetto"))
import perfetto_env  # noqa: E402

if __name__ == "__main__":
    perfetto_env.run_in_venv(sys.argv[3])

import pftrace_import  # noqa: E402
from report_chrome_check import check, check_content, report  # noqa: E402
from report_json_check import HOSTILE  # noqa: E402

SAMPLE_PID = 4242
SAMPLE_END = 1_200_000_000  # ns: where the emitter's extra records start


def ns(us):
    return round(us * 1000)


# What a GPU slice's arguments may say: what neither its name nor its track
# does, as in the Chrome trace.
GPU_ARGS = {"kernel": {"grid", "block", "shared memory"}, "memcpy": {"bytes"}, "memset": {"bytes"}}
STREAM_TRACK = re.compile(r"^GPU \d+ (default stream|per-thread default stream|stream 0x[0-9a-f]+)$")
COPY_NAME = re.compile(r"^(HtoD|DtoH|DtoD|HtoH|PtoP)( (pageable|pinned|managed))? a?sync$")


def check_gpu_args(trace):
    """The stream, a copy's direction and host memory are not repeated in
    the arguments: the track's name says the stream, the copy's name the
    rest."""
    gpu = [s for s in trace.slices if trace.gpu_group(trace.tracks[s["track"]])]
    check(any(s["cat"] == "memcpy" for s in gpu), "the sample's copies have no GPU slices")
    for s in gpu:
        name, track = s.get("name", ""), trace.tracks[s["track"]]["name"]
        check(set(s["args"]) <= GPU_ARGS.get(s["cat"], set()),
              f"GPU slice {name!r} ({s['cat']}) has arguments {sorted(s['args'])}")
        check(STREAM_TRACK.match(track), f"GPU slice {name!r} on track {track!r}")
        check(s["cat"] != "memcpy" or (COPY_NAME.match(name) and "bytes" in s["args"]),
              f"copy slice {name!r}: {s['args']}")


def check_extras(trace, events):
    t = SAMPLE_END + 10000 * len(HOSTILE)
    ranges = {e["name"]: e for e in events if e["ph"] == "b"}
    ends = {e["id"]: e for e in events if e["ph"] == "e"}
    spans = {n: (ns(b["ts"]) - t, ns(ends[b["id"]]["ts"]) - t) for n, b in ranges.items()}
    last = max(ns(e["ts"]) for e in events if e["ph"] == "X")
    check(spans.get("crossing") == (0, 5000), f"the range ended first: {spans.get('crossing')}")
    check(spans.get("ranges") == (200, 300), f"start/end range: {spans.get('ranges')}")
    check(spans.get("open", (0, 0))[1] >= last - t, "the range left open does not last to the end")

    lib = [e for e in events if e["ph"] == "X" and e["name"] == "in lib"]
    check(len(lib) == 1 and lib[0]["tid"] == 300 and lib[0].get("args", {}).get("domain") == "mylib"
          and ns(lib[0]["dur"]) == 500, f"the domain's range {lib}")
    domain = [k for k in trace.tracks.values() if k["name"] == "mylib"]
    check(len(domain) == 1 and not domain[0]["thread"] and
          trace.tracks[domain[0]["parent"]]["tid"] == 300, "the domain's track beside its thread's")

    shared = sorted((e for e in events if e["ph"] == "X" and e["name"] == "shared_stream_kernel"),
                    key=lambda e: e["ts"])
    check(len(shared) == 10 and len({e["tid"] for e in shared}) == 1,
          "two threads' work on one stream is not on one track")
    check(all(ns(e["dur"]) == 900 for e in shared), "shared stream durations")
    check(all(ns(b["ts"]) >= ns(a["ts"] + a["dur"]) for a, b in zip(shared, shared[1:])),
          "shared stream slices overlap")
    lanes = [k for k in trace.tracks.values() if k["name"] == "GPU 0 stream 0x7f000000b000"]
    check(len(lanes) == 2, f"{len(lanes)} lanes for two threads' work arriving out of order")

    calls = {s["name"]: s for s in trace.slices if s.get("name") in ("outer_call", "inner_call")}
    outer, inner = calls.get("outer_call"), calls.get("inner_call")
    check(outer and inner and outer["depth"] == 0 and inner["depth"] == 1 and
          (outer["ts"] - t, outer["end"] - t, inner["ts"] - t, inner["end"] - t) ==
          (29000, 31000, 30000, 30500), "the call recorded after the one inside it")


def main():
    emitter, workdir = sys.argv[1], sys.argv[2]
    path = os.path.join(workdir, "check.pftrace")
    subprocess.run([emitter, "--emit", path] + [n.hex() for n in HOSTILE], check=True)
    size = os.path.getsize(path)
    trace = pftrace_import.load(path)
    os.unlink(path)
    # many times the writer's buffers: bundles of 128 KiB of packets, a
    # file buffer of 256 KiB
    check(trace.bundles >= 16, f"only {trace.bundles} bundles of packets")
    check(size > 3 * (256 << 10), f"the trace is only {size} bytes")
    for p in trace.problems:
        check(False, p)
    if trace.problems:
        return report("report Perfetto trace")
    events = trace.events
    check_content(events, sort_index=False, flow_base=SAMPLE_PID << 32)
    check_extras(trace, events)
    check_gpu_args(trace)
    return report("report Perfetto trace")


if __name__ == "__main__":
    sys.exit(main())
