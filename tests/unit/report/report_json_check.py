#!/usr/bin/env python3
"""Parses the JSON report back and checks it against SPEC §6.

Usage: report_json_check.py EMITTER

EMITTER is unit_report_json; it is run with `--emit CATEGORIES HEXNAME...`
and prints a report whose kernel, NVTX range, NVTX domain and compile
program names are the hostile names below, in that order of time.
"""
import json
import subprocess
import sys

HOSTILE = [
    b'plain_kernel(float*, int)',
    b'quote"inside',
    b'back\\slash\\',
    b'ctl\x01\x02\x1f\x7fend\n\t\r',
    b'lone\x80continuation',
    b'overlong\xc0\xafslash',
    b'overlong3\xe0\x80\xaf',
    b'surrogate\xed\xa0\x80',
    b'above_max\xf4\x90\x80\x80',
    b'truncated_mid\xe2\x82x',
    b'truncated_end\xf0\x9f\x98',
    b'valid_utf8_caf\xc3\xa9_\xe2\x82\xac_\xf0\x9f\x98\x80',
    b'</script><!--',
]

STATS_KEYS = ["total", "avg", "med", "min", "max", "stddev", "first", "rest_avg"]
TOP_KEYS = ["tool", "schema", "version", "process", "config", "totals", "kernels",
            "memcpy", "memset", "memory", "compile", "module", "sync", "nvtx", "api",
            "advice"]
PROCESS = {"pid": int, "ppid": int, "hostname": str, "command": str,
           "start_ns": int, "end_ns": int, "wall_ns": int}
# SPEC's keys, then the extra keys every row of the table has.
ROWS = {
    "kernels": {"name": str, "calls": int, "gpu_ns": "stats", "api_ns_total": int,
                "timed": int, "graph": bool, "display_name": str},
    "memcpy": {"direction": str, "host_memory": str, "async": bool, "calls": int,
               "bytes": int, "gpu_ns": "stats", "gbps": (int, float), "timed": int},
    "memset": {"calls": int, "bytes": int, "gpu_ns": "stats", "timed": int},
    "compile": {"api": str, "name": str, "calls": int, "ok": bool, "wall_ns": "stats"},
    "module": {"api": str, "kind": str, "calls": int, "bytes": int, "wall_ns": "stats"},
    "sync": {"api": str, "calls": int, "wall_ns": "stats"},
    "nvtx": {"domain": str, "name": str, "calls": int, "wall_ns": "stats",
             "gpu_ns_total": int},
    "api": {"name": str, "calls": int, "wall_ns": "stats", "errors": dict},
}
MARK = {"domain": str, "name": str, "count": int, "first_ns": int, "last_ns": int}
DEVICE = {"device": int, "allocs": int, "frees": int, "peak_bytes": int,
          "current_bytes": int, "leaked_allocs": int}
ALL = ["kernel", "memcpy", "memset", "memory", "compile", "module", "sync", "nvtx", "api"]
TABLE_OF = {"kernel": "kernels", "memcpy": "memcpy", "memset": "memset",
            "compile": "compile", "module": "module", "sync": "sync", "nvtx": "nvtx",
            "api": "api"}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_type(value, kind, where):
    if kind == "stats":
        check(isinstance(value, dict) and list(value) == STATS_KEYS,
              f"{where}: STATS keys {list(value) if isinstance(value, dict) else value}")
        for k in STATS_KEYS:
            check(is_int(value.get(k)) and value.get(k) >= 0, f"{where}.{k} not an integer ns")
    elif kind is int:
        check(is_int(value), f"{where}: {value!r} is not an integer")
    elif kind is bool:
        check(isinstance(value, bool), f"{where}: {value!r} is not a boolean")
    else:
        check(isinstance(value, kind), f"{where}: {value!r} is not {kind}")


def check_object(obj, spec, where):
    check(isinstance(obj, dict), f"{where} is not an object")
    if not isinstance(obj, dict):
        return
    keys = [k for k in obj if k in spec]
    check(keys == list(spec), f"{where}: keys {list(obj)}, want {list(spec)} in order")
    for k, kind in spec.items():
        if k in obj:
            check_type(obj[k], kind, f"{where}.{k}")


def emit(emitter, categories):
    args = [emitter, "--emit", categories] + [n.hex() for n in HOSTILE]
    out = subprocess.run(args, check=True, capture_output=True).stdout
    out.decode("utf-8")  # strict: the whole document must be valid UTF-8
    return json.loads(out)


def check_schema(doc, enabled, label):
    check([k for k in doc if k in TOP_KEYS] == TOP_KEYS, f"{label}: top-level keys {list(doc)}")
    check(doc.get("tool") == "gputrace" and doc.get("schema") == 1, f"{label}: tool/schema")
    check(isinstance(doc.get("version"), str) and doc["version"].count(".") == 2,
          f"{label}: version {doc.get('version')!r}")
    check_object(doc.get("process"), PROCESS, f"{label}.process")
    check_object(doc.get("config"), {"verbosity": str, "categories": list, "gpu_timing": str},
                 f"{label}.config")
    config = doc.get("config", {})
    check(config.get("categories") == enabled, f"{label}: config.categories")
    check(config.get("gpu_timing") in ("events", "off"), f"{label}: gpu_timing")
    check(config.get("verbosity") == "verbose", f"{label}: verbosity")
    check_object(doc.get("totals"), {"events": int, "dropped": int, "gpu_busy_ns": int},
                 f"{label}.totals")
    for cat, table in TABLE_OF.items():
        rows = doc.get(table)
        check(isinstance(rows, list), f"{label}.{table} is not an array")
        if not isinstance(rows, list):
            continue
        check(bool(rows) == (cat in enabled), f"{label}.{table}: {len(rows)} rows")
        for i, row in enumerate(rows):
            check_object(row, ROWS[table], f"{label}.{table}[{i}]")
        totals = [r[k] for r in rows for k in r if k in ("gpu_ns", "wall_ns")]
        check([t["total"] for t in totals] == sorted([t["total"] for t in totals], reverse=True),
              f"{label}.{table}: not sorted by total time")
    memory = doc.get("memory")
    check(isinstance(memory, dict) and list(memory) == ["devices"], f"{label}.memory")
    devices = memory.get("devices", []) if isinstance(memory, dict) else []
    check(bool(devices) == ("memory" in enabled), f"{label}.memory.devices")
    for i, d in enumerate(devices):
        check_object(d, DEVICE, f"{label}.memory.devices[{i}]")
    marks = doc.get("nvtx_marks")
    check(isinstance(marks, list), f"{label}.nvtx_marks is not an array")
    marks = marks if isinstance(marks, list) else []
    check(bool(marks) == ("nvtx" in enabled), f"{label}.nvtx_marks: {len(marks)} rows")
    for i, m in enumerate(marks):
        check_object(m, MARK, f"{label}.nvtx_marks[{i}]")
        check(m.get("count") == 2 and m.get("last_ns", 0) - m.get("first_ns", 0) == 1000,
              f"{label}.nvtx_marks[{i}]: {m}")
    advice = doc.get("advice")
    check(isinstance(advice, list), f"{label}.advice is not an array")
    for i, a in enumerate(advice if isinstance(advice, list) else []):
        check_object(a, {"rule": str, "count": int, "message": str}, f"{label}.advice[{i}]")
    # The emitted report leaves one device allocation live: only `leak` fires.
    rules = [a.get("rule") for a in advice] if isinstance(advice, list) else None
    check(rules == (["leak"] if "memory" in enabled else []), f"{label}.advice rules {rules}")


def check_names(doc):
    if failures:
        return  # the schema is wrong: the names cannot be looked up
    want = [n.decode("utf-8", errors="replace") for n in HOSTILE]
    check([r["name"] for r in doc["kernels"]] == want, "kernel names did not round-trip")
    # the readable names: the parameter list gone, every other name as it is
    check([r["display_name"] for r in doc["kernels"]] == ["plain_kernel"] + want[1:],
          f"kernel display names {[r['display_name'] for r in doc['kernels']]}")
    check([r["name"] for r in doc["nvtx"]] == want, "range names did not round-trip")
    check([r["domain"] for r in doc["nvtx"]] == want, "domain names did not round-trip")
    check([m["name"] for m in doc["nvtx_marks"]] == want, "mark names did not round-trip")
    check([m["domain"] for m in doc["nvtx_marks"]] == want, "mark domains did not round-trip")
    check([m["first_ns"] for m in doc["nvtx_marks"]] == [i * 1000000 + 200 for i in range(len(want))],
          "mark times")
    check([r["name"] for r in doc["compile"]] == want, "program names did not round-trip")
    check(doc["process"]["command"] == want[0], "command")
    sync = [r for r in doc["api"] if r["name"] == "cuCtxSynchronize"]
    check(len(sync) == 1 and sync[0]["errors"] == {"CUDA_ERROR_ILLEGAL_ADDRESS": 1},
          "api errors by name")
    memcpy = doc["memcpy"][0]
    check(abs(memcpy["gbps"] - (1 << 20) / 50000) < 0.001, f"gbps {memcpy['gbps']}")


def main():
    emitter = sys.argv[1]
    doc = emit(emitter, "all")
    check_schema(doc, ALL, "all")
    check_names(doc)
    subset = ["kernel", "memory", "api"]
    check_schema(emit(emitter, ",".join(subset)), subset, "subset")
    check_schema(emit(emitter, "none"), [], "none")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("report JSON: schema and names OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
