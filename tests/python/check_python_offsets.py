#!/usr/bin/env python3
"""The call-site reader's CPython layouts against one version's headers:
python_offsets.c, compiled with the include directories of every
interpreter of the version this machine has or got from Debian's archive
(pythons.py; the -dev packages' headers for Debian's), prints each offset
of shim/callsite/python_layouts.h beside the one the headers give.

check_python_offsets.py VERSION --debian DIR --cc CC --layouts DIR

Exit status 0 when every offset agrees for every set of headers, 77
(skipped, with the reason) when no interpreter of the version with its
headers is here, 1 otherwise.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from pythons import interpreters

SKIP = 77
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_offsets.c")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("version")
    ap.add_argument("--debian", required=True, help="scripts/debian-pythons.py's folder")
    ap.add_argument("--cc", required=True)
    ap.add_argument("--layouts", required=True, help="the folder of python_layouts.h")
    a = ap.parse_args()
    found, why = interpreters(a.version, a.debian)
    headers = {}
    for interp in found:
        include = interp.headers()
        if include:
            headers.setdefault(os.path.realpath(include[0]), (interp, include))
    if not headers:
        print(f"SKIP: {why or f'no headers of CPython {a.version} here'}")
        return SKIP
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        program = os.path.join(tmp, "python_offsets")
        for interp, include in headers.values():
            argv = [a.cc, "-std=gnu11", "-Wall", "-Wextra", "-I", include[0]]
            for d in include[1:]:
                argv += ["-idirafter", d]
            argv += ["-I", a.layouts, SOURCE, "-o", program]
            r = subprocess.run(argv, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL: {interp.describe()}: {' '.join(argv)}:\n{r.stderr}")
                failed = True
                continue
            r = subprocess.run([program], capture_output=True, text=True)
            print(f"{interp.describe()}, headers in {include[0]}:\n{r.stdout}")
            if r.returncode != 0:
                print(f"FAIL: {interp.describe()}: the table differs from the headers "
                      f"(exit {r.returncode})")
                failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
