#!/usr/bin/env python3
"""Runs the Fortran program (callsite_fortran.f90, gfortran -O2 without
frame pointers, calling the CUDA driver API through ISO_C_BINDING) under
libgputrace.so on the emulated driver and holds its call sites to the
lines marked "SITE name": the memsets at the line of the module procedure
that made them (3 + 2 calls, named solver::clear_field), the copy at
solver::upload's line, each allocation at its own line of the main
program (MAIN__, gfortran's name for it) with its bytes.

check_callsites_fortran.py --lib LIB --prog PROG --source SOURCE

Exit status 0 when every check holds, 1 otherwise.
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
from verdict import check, report  # noqa: E402

N = 4096


def marks(source):
    found = {}
    with open(source) as f:
        for number, text in enumerate(f, 1):
            m = re.search(r"! SITE (\w+)", text)
            if m:
                found[m.group(1)] = number
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    lines = marks(a.source)
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
        env.update(LD_PRELOAD=a.lib, GPUTRACE_OUTPUT=os.path.join(tmp, "r"),
                   GPUTRACE_FORMAT="json,text", GPUTRACE_VERBOSITY="none")
        p = subprocess.run([a.prog], env=env, capture_output=True, text=True, timeout=100)
        check(p.returncode == 0 and p.stdout == "ok\n",
              f"the program failed ({p.returncode}): {p.stdout}{p.stderr}")
        with open(os.path.join(tmp, "r.json")) as f:
            data = json.load(f)
        with open(os.path.join(tmp, "r.txt")) as f:
            text = f.read()
    source = os.path.basename(a.source)
    got = sorted((r["kind"], r["calls"], r.get("bytes", 0), os.path.basename(r["site"]["file"]),
                  r["site"]["line"], r["site"]["function"], r["site"]["language"])
                 for r in data.get("callsites", []))
    want = sorted([
        ("memset", 5, 5 * N, source, lines["clear_field"], "solver::clear_field", "native"),
        ("memcpy", 1, 4 * N, source, lines["upload"], "solver::upload", "native"),
        ("alloc", 1, 4 * N, source, lines["alloc_field"], "MAIN__", "native"),
        ("alloc", 1, N, source, lines["alloc_halo"], "MAIN__", "native"),
    ])
    check(got == want, "call sites:\n  " + "\n  ".join(map(str, got)) +
          "\nwant:\n  " + "\n  ".join(map(str, want)))
    check(f"{source}:{lines['clear_field']} in solver::clear_field" in text,
          "the summary does not name solver::clear_field's line")
    return report()


if __name__ == "__main__":
    sys.exit(main())
