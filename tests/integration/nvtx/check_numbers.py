#!/usr/bin/env python3
"""The numbers NVTX carries (nvtx_numbers_prog.c) under libgputrace.so: payload
totals and rates per GPU second from the emulator's configured kernel time,
extended payload fields with their units, counters in the report and as
counter tracks of both timelines, heaps and regions, memory per range; the
summary's rates, and the same summary from the JSON read back; `merge`
sums the payloads (rates stay), `diff` calls a drop of throughput slower.

check_numbers.py --lib LIB --prog PROG --cli GPUTRACE
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

KERNEL_NS = 2_000_000  # numbers_kernel, as configured below
TIMEOUT = 120
MIB = 1 << 20

# name: (calls, type, payload total)
PLAIN = {
    "p_u64": (3, "uint64", 6e12),
    "p_i64": (3, "int64", -30),
    "p_f64": (3, "double", 1.5),
    "p_u32": (3, "uint32", 1.2e10),
    "p_i32": (3, "int32", -21),
    "p_f32": (3, "float", 4.5),
    "p_start": (1, "uint64", 42),
    "p_domain": (1, "int64", 9),
}
# name: (calls, {field: (total, unit)})
FIELDS = {
    "solve": (2, {"flops": (9112668, "FLOP"), "bytes_read": (2048000, "B"),
                  "bytes_written": (469088, "B")}),
    "solve_at_pop": (1, {"flops": (1000, "FLOP"), "bytes_read": (2000, "B"),
                         "bytes_written": (3000, "B")}),
}
# (domain, name): (count, min, max, last, unit, type)
COUNTERS = {
    ("lib", "queue_depth"): (4, -2, 9, 5, "", "int64"),
    ("lib", "step_time"): (3, 0.5, 2.25, 2.25, "ms", "double"),
    ("lib", "cache.hits"): (2, 10, 30, 30, "", "int32"),
    ("lib", "cache.misses"): (2, 1, 4, 4, "", "int32"),
}
SAMPLES = {"queue_depth": [3, 9, -2, 5], "step_time": [1.5, 0.5, 2.25], "cache.hits": [10, 30],
           "cache.misses": [1, 4]}
HEAPS = {
    "pool": dict(bytes=MIB, regions=2, region_bytes=65536 + 200000, regions_peak=3,
                 region_bytes_peak=65536 + 200000, regions_added=3, live=True),
    "scratch": dict(bytes=4096, regions=0, region_bytes=0, regions_peak=2,
                    region_bytes_peak=3072, regions_added=2, live=False),
}
HELD = MIB + 4096  # the two heaps' driver allocations, held from before the ranges
MEMORY = {
    "alloc_phase": (393216, 131072, HELD + 393216),
    "outer_phase": (393216, 393216, HELD + 393216),
    "p_u64": (0, 0, HELD),
}


def close(got, want, what, rel=1e-9):
    ok = abs(got - want) <= rel * max(abs(want), 1)
    check(ok, f"{what}: {got}, expected {want}")


def check_rows(rep):
    rows = {r["name"]: r for r in rep["nvtx"]}
    for name, (calls, kind, total) in PLAIN.items():
        r = rows.get(name)
        check(r is not None, f"no nvtx row {name}")
        if not r:
            continue
        gpu = calls * KERNEL_NS
        check(r["calls"] == calls and r["gpu_ns_total"] == gpu,
              f"{name}: {r['calls']} calls, {r['gpu_ns_total']} ns")
        p = r.get("payload")
        check(p is not None and p["type"] == kind, f"{name}: payload {p}")
        if p:
            close(p["total"], total, f"{name} total")
            close(p["per_gpu_s"], total * 1e9 / gpu, f"{name} per_gpu_s")
            close(p["per_wall_s"], total * 1e9 / r["wall_ns"]["total"], f"{name} per_wall_s")
    for name, (calls, fields) in FIELDS.items():
        r = rows.get(name)
        check(r is not None and r["domain"] == "solver", f"no solver row {name}")
        if not r:
            continue
        gpu = calls * KERNEL_NS
        check(r["gpu_ns_total"] == gpu and "payload" not in r, f"{name}: {r}")
        got = {f["name"]: f for f in r.get("payload_fields", [])}
        check(list(got) == list(fields), f"{name}: fields {list(got)}")
        for field, (total, unit) in fields.items():
            f = got.get(field)
            if not f:
                continue
            close(f["total"], total, f"{name}.{field} total")
            close(f["per_gpu_s"], total * 1e9 / gpu, f"{name}.{field} per_gpu_s")
            check(f["unit"] == unit, f"{name}.{field} unit {f['unit']!r}")
    for name, (allocated, freed, peak) in MEMORY.items():
        m = rows.get(name, {}).get("memory")
        check(m == {"allocated_bytes": allocated, "freed_bytes": freed, "peak_bytes": peak},
              f"{name}: memory {m}")
    marks = {m["name"]: m for m in rep["nvtx_marks"]}
    mp = marks.get("p_mark", {}).get("payload")
    check(mp == {"type": "double", "total": 5, "count": 2}, f"p_mark payload {mp}")


def check_counters(rep):
    got = {(c["domain"], c["name"]): c for c in rep.get("nvtx_counters", [])}
    check(set(got) == set(COUNTERS), f"counters {sorted(got)}")
    for key, (count, lo, hi, last, unit, kind) in COUNTERS.items():
        c = got.get(key)
        if c:
            check((c["count"], c["min"], c["max"], c["last"], c["unit"], c["type"]) ==
                  (count, lo, hi, last, unit, kind), f"counter {key}: {c}")


def check_heaps(rep):
    heaps = {h["name"]: h for h in rep["memory"].get("heaps", [])}
    check(set(heaps) == set(HEAPS), f"heaps {sorted(heaps)}")
    for name, want in HEAPS.items():
        h = heaps.get(name, {})
        got = {k: h.get(k) for k in want}
        check(got == want and h.get("domain") == "lib", f"heap {name}: {h}")


def check_chrome(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    got = {}
    for e in events:
        if e.get("ph") == "C" and e.get("cat") == "nvtx":
            got.setdefault(e["name"], []).append(e["args"]["value"])
    check(got == SAMPLES, f"Chrome counter samples {got}")


# A few protobuf fields of Perfetto's Trace, read without Perfetto.
def fields(buf):
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 1:
            v, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wire == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield num, v


def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def packets(buf):
    for num, v in fields(buf):
        if num != 1:
            continue
        inner = dict(fields(v))
        if 50 in inner:  # compressed_packets
            yield from packets(zlib.decompress(inner[50]))
        else:
            yield v


def check_perfetto(path):
    with open(path, "rb") as f:
        data = f.read()
    names, seq_track, values = {}, {}, {}
    for p in packets(data):
        seq = None
        for num, v in fields(p):
            if num == 10:
                seq = v
            elif num == 60:  # track_descriptor
                d = dict(fields(v))
                if 8 in d and 2 in d:  # a counter with a name
                    names[d[1]] = d[2].decode()
            elif num == 59:  # trace_packet_defaults
                ted = dict(fields(v)).get(11)
                if ted is not None:
                    seq_track[seq] = dict(fields(ted)).get(11)
        for num, v in fields(p):
            if num != 11:
                continue
            ev = dict(fields(v))
            if 44 in ev:
                track = ev.get(11, seq_track.get(seq))
                values.setdefault(track, []).append(struct.unpack("<d", ev[44])[0])
    got = {names.get(t, t): v for t, v in values.items()}
    check(got == SAMPLES, f"Perfetto counter samples {got}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--cli", required=True)
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "run")
        env.update(LD_PRELOAD=a.lib, NVTX_INJECTION64_PATH=a.lib, GPUTRACE_VERBOSITY="verbose",
                   GPUTRACE_OUTPUT=base, GPUTRACE_FORMAT="json,chrome,perfetto,text",
                   GPUTRACE_EMU_KERNEL_NS=f"numbers_kernel={KERNEL_NS}")
        p = subprocess.run([a.prog], env=env, capture_output=True, text=True, timeout=TIMEOUT)
        check(p.returncode == 0, f"the program exited {p.returncode}: {p.stderr[-2000:]}")
        with open(base + ".json") as f:
            rep = json.load(f)
        check_rows(rep)
        check_counters(rep)
        check_heaps(rep)
        check_chrome(base + ".trace.json")
        check_perfetto(base + ".pftrace")
        # The summary's rates, SI units beside the GPU time.
        for text in ("flops 2.28 GFLOP/s, bytes_read 512 MB/s, bytes_written 117 MB/s",
                     "payload 1.00 P/s", "payload -3.50 k/s", "nvtx counters: 4",
                     "memory per range:", "memory heaps (NVTX): 2"):
            check(text in p.stderr, f"the summary lacks {text!r}")
        # Read back, the report says the same.
        r = subprocess.run([a.cli, "report", base + ".json", "-v", "verbose"], capture_output=True,
                           text=True, timeout=TIMEOUT)
        with open(base + ".txt") as f:
            written = f.read()
        check(r.returncode == 0, f"gputrace report: {r.stderr}")
        keep = lambda t: [ln for ln in t.splitlines() if "flops" in ln or "queue_depth" in ln or
                          "alloc_phase" in ln or "pool" in ln]
        check(keep(r.stdout) == keep(written) and keep(written),
              f"read back:\n{keep(r.stdout)}\nwritten:\n{keep(written)}")
        check_merge(a.cli, base, tmp)
        check_diff(a.cli, base, rep, tmp)
    return report()


def check_merge(cli, base, tmp):
    """Two runs merged: payloads and fields summed, so the rates stay."""
    out = os.path.join(tmp, "merged")
    p = subprocess.run([cli, "merge", base + ".json", base + ".json", "-o", out],
                       capture_output=True, text=True, timeout=TIMEOUT)
    check(p.returncode == 0, f"gputrace merge: {p.stderr}")
    with open(out + ".json") as f:
        rows = {r["name"]: r for r in json.load(f)["nvtx"]}
    p_u64 = rows.get("p_u64", {}).get("payload", {})
    check(p_u64.get("total") == 2 * PLAIN["p_u64"][2], f"merged p_u64 payload {p_u64}")
    close(p_u64.get("per_gpu_s", 0), PLAIN["p_u64"][2] * 1e9 / (3 * KERNEL_NS), "merged rate")
    flops = {f["name"]: f for f in rows.get("solve", {}).get("payload_fields", [])}.get("flops")
    check(flops is not None and flops["total"] == 2 * 9112668 and flops["count"] == 4,
          f"merged solve flops {flops}")


def check_diff(cli, base, rep, tmp):
    """The same run with the solve ranges' GPU time doubled: half the
    throughput, three rates slower, and diff exits 1."""
    for r in rep["nvtx"]:
        if r["name"] == "solve":
            r["gpu_ns_total"] *= 2
    slow = os.path.join(tmp, "slow.json")
    with open(slow, "w") as f:
        json.dump(rep, f)
    p = subprocess.run([cli, "diff", base + ".json", slow, "-f", "json"], capture_output=True,
                       text=True, timeout=TIMEOUT)
    check(p.returncode == 1, f"gputrace diff exited {p.returncode}: {p.stderr}")
    rows = json.loads(p.stdout)["rows"] if p.stdout else []
    slower = sorted(r["name"] for r in rows if r["category"] == "nvtx_rate" and
                    r["verdict"] == "slower")
    check(slower == ["solver:solve bytes_read", "solver:solve bytes_written", "solver:solve flops"],
          f"slower rates {slower}")
    for r in rows:
        if r["category"] == "nvtx_rate" and r["verdict"] == "slower":
            close(r["rate_after"], r["rate_before"] / 2, f"{r['name']} rate after")


if __name__ == "__main__":
    sys.exit(main())
