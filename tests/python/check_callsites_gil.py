#!/usr/bin/env python3
"""Runs progs/callsites_gil.py under the gputrace command on the emulated
driver, with each Python interpreter given, and holds its allocations'
sites to the program's lines (marked "SITE name").

check_callsites_gil.py VERSION --debian DIR --cli GPUTRACE --emu-lib DIR
                       --native LIB

Python frames are read only by a thread that holds the GIL; a thread that
released it gets the site it had when it released it, where the release
went through a call gputrace routes (an extension module's
PyEval_SaveThread). Checked on every interpreter of VERSION the machine
has (pythons.py), with --callsites auto and all:
  released  ctypes.CDLL releases the GIL: the program's line
  held      ctypes.PyDLL keeps it: the program's line
  unseen    the C code releases the GIL through a pointer to the
            interpreter's own PyEval_SaveThread: no Python site (the frames
            are not read); with `all`, the C code's own line
  inner     a Python callback run inside a released region allocates:
            the callback's line
  outer     the C code allocates after the callback returned: the line
            that called it (the released region's site again)
  thread    a threading.Thread's allocation: its line in the worker
  forked    a forked child's allocation, in the child's report: its line
Python executables with the interpreter built in (Debian's) and with a
shared libpython (pyenv's) are both covered where the machine has them.

Exit status 0 when every check holds, 77 (skipped) when the machine has no
interpreter of VERSION, 1 otherwise.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from check_callsites_py import emu_env, marks  # noqa: E402
from pythons import check_each  # noqa: E402
from verdict import check  # noqa: E402

PROGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs")
PROGRAM = os.path.join(PROGS, "callsites_gil.py")
NATIVE_SOURCE = os.path.join(PROGS, "callsites_native.c")
PY = "callsites_gil.py"
BYTES = {"inner": 1 << 16, "released": 1 << 20, "held": 1 << 21, "unseen": 1 << 22,
         "outer": 1 << 23, "thread": 1 << 24, "forked": 1 << 25}
FUNCTION = {"inner": "inner", "thread": "worker"}


def run(a, interp, mode):
    label = f"{interp.describe()} ({mode})"
    prog, native = marks(PROGRAM), marks(NATIVE_SOURCE)
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "r.%p")
        argv, env = interp.command(emu_env(a.emu_lib), [a.emu_lib])
        r = subprocess.run([a.cli, "-v", "none", "-o", base, "-f", "json", "--callsites", mode,
                            "--"] + argv + [PROGRAM, a.native], env=env, capture_output=True,
                           text=True, timeout=120)
        if not check(r.returncode == 0 and r.stdout == "ok\n",
                     f"{label}: the program exited {r.returncode}: {r.stdout}{r.stderr}"):
            return
        reports = []
        for path in glob.glob(os.path.join(tmp, "r.*.json")):
            with open(path) as f:
                reports.append(json.load(f))
    check(len(reports) == 2, f"{label}: {len(reports)} reports, want the parent's and the child's")
    by_bytes = {}
    for data in reports:
        for row in data.get("callsites", []):
            if row["kind"] == "alloc":
                by_bytes.setdefault(row["bytes"], []).append(row)
    for name, nbytes in BYTES.items():
        got = by_bytes.get(nbytes, [])
        sites = [(os.path.basename(r["site"]["file"]), r["site"]["line"], r["site"]["language"])
                 for r in got]
        if name == "unseen":
            want = ([("callsites_native.c", native["alloc_on_this_thread"], "native")]
                    if mode == "all" else [])
        else:
            want = [(PY, prog[name], "python")]
        if not check(sites == want, f"{label}: {name}'s allocation at {sites}, want {want}"):
            continue
        if want and want[0][2] == "python":
            fn = got[0]["site"]["function"]
            check(fn == FUNCTION.get(name, "main"), f"{label}: {name} in {fn}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("version")
    ap.add_argument("--debian", required=True, help="scripts/debian-pythons.py's folder")
    ap.add_argument("--cli", required=True)
    ap.add_argument("--emu-lib", required=True)
    ap.add_argument("--native", required=True)
    a = ap.parse_args()
    return check_each(a.version, a.debian,
                      lambda interp: [run(a, interp, mode) for mode in ("auto", "all")])


if __name__ == "__main__":
    sys.exit(main())
