#!/usr/bin/env python3
"""Python call sites on one CPython version: progs/callsites_ctypes.py,
which needs nothing beyond the standard library, runs under the gputrace
command with --callsites python on the emulated driver, on every
interpreter of the version this machine has or got from Debian's archive
(pythons.py says which and how), and each report's call sites are held
against the program's lines marked "SITE name":

  - every allocation, memset, copy and launch has a Python site, and the
    sites are exactly the marked lines, each with its number of calls and
    bytes: calls through ctypes.CDLL (the GIL released) and ctypes.PyDLL
    (the GIL held), in the helper module's function at the helper's
    lines, and on a threading.Thread of the program's own
  - each site names the function the line is in: its qualified name
    (Copier.run) from 3.11 on, where code objects have one, its name (run)
    before

check_callsites_versions.py VERSION --debian DIR --cli GPUTRACE --emu-lib DIR

Exit status 0 when every check holds on every interpreter, 77 (skipped,
with the reason) when the machine has no interpreter of the version, 1
otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from check_callsites_py import PROGS, at, emu_env, marks  # noqa: E402
from pythons import check_each  # noqa: E402
from verdict import check  # noqa: E402

PROGRAM = os.path.join(PROGS, "callsites_ctypes.py")
HELPER = os.path.join(PROGS, "callsites_ctypes_helper.py")
N = 1 << 12

# mark -> (kind, calls, bytes per call, function); the helper's marks are
# in HELPER, the others in PROGRAM.
WANT = {
    "alloc_released": ("alloc", 1, N, "main"),
    "alloc_held": ("alloc", 1, 2 * N, "main"),
    "memset_released": ("memset", 1, N, "main"),
    "memset_held": ("memset", 2, 2 * N, "main"),
    "copy_released": ("memcpy", 3, N, "main"),
    "copy_held": ("memcpy", 4, N, "main"),
    "launch_released": ("kernel", 5, 0, "main"),
    "launch_held": ("kernel", 6, 0, "main"),
    "copy_back": ("memcpy", 1, N, "main"),
    "thread_copy": ("memcpy", 1, N, "Copier.run"),
    "thread_memset": ("memset", 2, N, "Copier.run"),
    "helper_alloc_held": ("alloc", 1, 3 * N, "fill"),
    "helper_memset_released": ("memset", 7, 3 * N, "fill"),
    "helper_copy_held": ("memcpy", 8, N, "fill"),
}


def expected():
    """(kind, file base name, line) -> (mark, calls, bytes, function)."""
    lines = {}
    for path in (PROGRAM, HELPER):
        for mark, line in marks(path).items():
            kind, calls, nbytes, function = WANT[mark]
            lines[(kind, os.path.basename(path), line)] = (mark, calls, calls * nbytes, function)
    missing = set(WANT) - {v[0] for v in lines.values()}
    if missing:
        sys.exit(f"FAIL: marks missing from the program: {sorted(missing)}")
    return lines


def check_run(interp, a, want):
    who = interp.describe()
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "r")
        argv, env = interp.command(emu_env(a.emu_lib), [a.emu_lib])
        r = subprocess.run([a.cli, "-v", "none", "-o", base, "-f", "json", "--callsites",
                            "python", "--"] + argv + [PROGRAM], env=env, capture_output=True,
                           text=True, timeout=120)
        if not check(r.returncode == 0 and r.stdout == "ok\n",
                     f"{who}: the program exited {r.returncode}: {r.stdout}{r.stderr}"):
            return
        with open(base + ".json") as f:
            data = json.load(f)
    check(data["config"]["callsites"] == "python", f"{who}: config {data['config']}")

    got = {}
    for row in data.get("callsites", []):
        key = (row["kind"],) + at(row)
        calls, nbytes, functions = got.get(key, (0, 0, set()))
        got[key] = (calls + row["calls"], nbytes + row["bytes"],
                    functions | {(row["site"]["language"], row["site"]["function"])})
    for key in sorted(set(got) | set(want)):
        if key not in want:
            check(False, f"{who}: {key[0]} calls sited at {key[1]}:{key[2]}, no marked line")
            continue
        mark, calls, nbytes, function = want[key]
        if not check(key in got, f"{who}: no {key[0]} site at {key[1]}:{key[2]} ({mark})"):
            continue
        check(got[key][:2] == (calls, nbytes),
              f"{who}: {mark}: {got[key][0]} calls of {got[key][1]} bytes at {key[1]}:{key[2]}, "
              f"want {calls} of {nbytes}")
        if interp.about["version"] in ("3.9", "3.10"):
            function = function.split(".")[-1]
        check(got[key][2] == {("python", function)},
              f"{who}: {mark}: sited in {sorted(got[key][2])}, want python {function}")

    # Every call has a site: the tables' calls are the sites' calls.
    for table, kind in (("kernels", "kernel"), ("memcpy", "memcpy"), ("memset", "memset")):
        made = sum(row["calls"] for row in data[table])
        sited = sum(v[0] for k, v in got.items() if k[0] == kind)
        check(made == sited, f"{who}: {made} {kind} calls, {sited} with a site")
    made = sum(d["allocs"] for d in data["memory"]["devices"])
    sited = sum(v[0] for k, v in got.items() if k[0] == "alloc")
    check(made == sited, f"{who}: {made} allocations, {sited} with a site")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("version")
    ap.add_argument("--debian", required=True, help="scripts/debian-pythons.py's folder")
    ap.add_argument("--cli", required=True)
    ap.add_argument("--emu-lib", required=True)
    a = ap.parse_args()
    want = expected()
    return check_each(a.version, a.debian, lambda interp: check_run(interp, a, want))


if __name__ == "__main__":
    sys.exit(main())
