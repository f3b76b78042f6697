#!/usr/bin/env python3
"""Runs progs/callsites_numba.py under the gputrace command on the emulated
driver and holds the report's call sites (SPEC §12 `callsites`, the
summary's `call sites` section) against the program's lines: each call
it makes is on a line marked "SITE name".

check_callsites_py.py --venv VENV --cli GPUTRACE --emu-lib DIR --native LIB CASE

  auto   (--callsites auto) each launch, copy and allocation at the line of
         the program that made it, with the library function it called
         (numba_cuda.to_device, not the decorator's wrapper around it): the kernel's launches split between the
         two lines of the program and the line of its helper module (the
         program's own code); the allocation C code made through ctypes
         under a line of the program (the GIL released) at that line; the
         one made on the C code's own thread, which runs no Python, at no
         site; no site in the libraries (numba, numpy, the standard
         library)
  skip   GPUTRACE_CALLSITES_SKIP=callsites_helper: the helper's launches at
         the program's line that called it, via callsites_helper.scale_times
  all    (--callsites all) as auto, and the native thread's allocation at
         its line of the C code
  clients  bindings_driver.py (cuda-bindings) and core_program.py
         (cuda.core): every launch, copy, memset and allocation has a site,
         and each site is the line of the program that makes that call

Exit status 0 when every check holds, 77 (skipped) when VENV is missing,
1 otherwise.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from verdict import check, report  # noqa: E402

SKIP = 77
PROGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs")
PROGRAM = os.path.join(PROGS, "callsites_numba.py")
HELPER = os.path.join(PROGS, "callsites_helper.py")
NATIVE_SOURCE = os.path.join(PROGS, "callsites_native.c")
N = 1 << 12
KERNEL_NS = 3000


def marks(path):
    """name -> line of the call it marks."""
    found = {}
    with open(path) as f:
        for number, text in enumerate(f, 1):
            m = re.search(r"(?:#|/\*) SITE (\w+)", text)
            if m:
                found[m.group(1)] = number
    return found


def emu_env(emu_lib):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUTRACE_", "GT_", "NVTX_", "CUDA_PYTHON_"))}
    env.pop("LD_PRELOAD", None)
    env["LD_LIBRARY_PATH"] = emu_lib
    env["GPUTRACE_EMU_KERNEL_NS"] = f"*={KERNEL_NS}"
    env["GPUTRACE_EMU_EVENT_LATENCY_NS"] = "0"
    env["PYTHONPATH"] = PROGS
    return env


def rows(data, kind):
    return [r for r in data.get("callsites", []) if r["kind"] == kind]


def at(row):
    """(file base name, line) of a row's site."""
    return os.path.basename(row["site"]["file"]), row["site"]["line"]


# What each row's line must call, by (program, kind, name's first word).
CLIENTS = {
    "bindings_driver.py": lambda r: {
        "kernel": "cuLaunchKernel(",
        "memset": "cuMemset",
        "alloc": "cuMemAllocHost(" if r["name"] == "pinned" else "cuMemAlloc(",
        "memcpy": f"cuMemcpy{r.get('direction', '')}{'Async' if r.get('async') else ''}(",
    }[r["kind"]],
    "core_program.py": lambda r: {
        "kernel": "launch(",
        "alloc": "allocate(",
        "memcpy": "copy_from(" if r.get("direction") == "HtoD" else "copy_to(",
    }.get(r["kind"], "(no such call)"),
}


def check_client(a, python, env, program):
    path = os.path.join(PROGS, program)
    with open(path) as f:
        source = f.read().split("\n")
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "r")
        r = subprocess.run([a.cli, "-v", "none", "-o", base, "-f", "json", "--", python, path],
                           env=dict(env, GT_PY_MANIFEST=os.path.join(tmp, "manifest.json")),
                           capture_output=True, text=True, timeout=240)
        if not check(r.returncode == 0, f"{program} exited {r.returncode}: {r.stderr}"):
            return
        with open(base + ".json") as f:
            data = json.load(f)
    rows = data.get("callsites", [])
    for table, kind in (("kernels", "kernel"), ("memcpy", "memcpy"), ("memset", "memset")):
        made = sum(row["calls"] for row in data[table])
        sited = sum(row["calls"] for row in rows if row["kind"] == kind)
        check(made == sited, f"{program}: {made} {kind} calls, {sited} with a site")
    made = sum(d["allocs"] for d in data["memory"]["devices"])
    sited = sum(row["calls"] for row in rows if row["kind"] == "alloc")
    check(made == sited, f"{program}: {made} allocations, {sited} with a site")
    for row in rows:
        site = row["site"]
        line = source[site["line"] - 1] if 0 < site["line"] <= len(source) else ""
        want = CLIENTS[program](row)
        check(site["language"] == "python" and os.path.basename(site["file"]) == program and
              want in line, f"{program}: {row['kind']} {row['name']} at {site['file']}:"
              f"{site['line']} ({line.strip()!r}), want a line calling {want}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--emu-lib", required=True)
    ap.add_argument("--native", required=True)
    ap.add_argument("case", choices=["auto", "skip", "all", "clients"])
    a = ap.parse_args()
    python = os.path.join(a.venv, "bin", "python")
    if not os.path.exists(python):
        print(f"SKIP: no Python environment at {a.venv} (python.venv: PyPI cannot be reached)")
        return SKIP
    env = emu_env(a.emu_lib)
    if a.case == "clients":
        for program in CLIENTS:
            check_client(a, python, env, program)
        return report()
    if a.case == "skip":
        env["GPUTRACE_CALLSITES_SKIP"] = "callsites_helper"
    mode = "all" if a.case == "all" else "auto"
    prog, helper, native = marks(PROGRAM), marks(HELPER), marks(NATIVE_SOURCE)
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "r")
        r = subprocess.run([a.cli, "-v", "none", "-o", base, "-f", "json,text", "--callsites", mode,
                            "--", python, PROGRAM, a.native], env=env, capture_output=True,
                           text=True, timeout=240)
        check(r.returncode == 0 and r.stdout == f"{N}\n",
              f"the program exited {r.returncode}: {r.stdout}{r.stderr}")
        try:
            with open(base + ".json") as f:
                data = json.load(f)
            with open(base + ".txt") as f:
                text = f.read()
        except OSError as e:
            check(False, f"no report: {e}")
            return report()
    check(data["config"]["callsites"] == mode, f"config {data['config']}")
    py = "callsites_numba.py"

    # Kernels: calls and GPU time per line.
    want = {(py, prog["launch_a"]): 3, (py, prog["launch_b"]): 5}
    if a.case == "skip":
        want[(py, prog["helper_call"])] = 7
    else:
        want[("callsites_helper.py", helper["helper_launch"])] = 7
    got = {at(row): row for row in rows(data, "kernel")}
    check(sorted(got) == sorted(want), f"kernel sites {sorted(got)}, want {sorted(want)}")
    for key, calls in want.items():
        row = got.get(key)
        if not row:
            continue
        check("scale" in row["name"], f"{key}: kernel {row['name']}")
        check(row["calls"] == calls and row["gpu_ns_total"] == calls * KERNEL_NS and
              not row["estimate"], f"{key}: {row['calls']} calls, {row['gpu_ns_total']} ns")
        site = row["site"]
        check(site["language"] == "python", f"{key}: language {site['language']}")
        fn = "scale_times" if key[0] == "callsites_helper.py" else "main"
        check(site["function"] == fn, f"{key}: function {site['function']}")
        via = "callsites_helper.scale_times" if key == (py, prog.get("helper_call")) else ""
        check(site.get("via", "") == via or (via == "" and site.get("via", "").startswith("numba")),
              f"{key}: via {site.get('via')!r}")

    # Copies: the HtoD of to_device, the DtoH of copy_to_host.
    got = {(row["name"].split()[0], at(row)) for row in rows(data, "memcpy")}
    want_copies = {("HtoD", (py, prog["to_device"])), ("DtoH", (py, prog["copy_back"]))}
    check(got == want_copies, f"copy sites {sorted(got)}, want {sorted(want_copies)}")

    # Allocations: bytes per line; the native thread's only with `all`.
    want = {(py, prog["to_device"]): 4 * N, (py, prog["device_array"]): 4 * N,
            (py, prog["device_array_large"]): 16 * N, (py, prog["alloc_here"]): 1 << 20}
    if a.case == "all":
        want[("callsites_native.c", native["alloc_on_this_thread"])] = 1 << 21
    got = {at(row): row for row in rows(data, "alloc")}
    check(sorted(got) == sorted(want), f"allocation sites {sorted(got)}, want {sorted(want)}")
    for key, nbytes in want.items():
        row = got.get(key)
        if row:
            check(row["calls"] == 1 and row["bytes"] == nbytes,
                  f"{key}: {row['calls']} allocations of {row['bytes']} bytes, want 1 of {nbytes}")
    # What the line called: the library function, not a decorator's wrapper.
    for name, via in (("to_device", "numba_cuda.to_device"),
                      ("device_array", "numba_cuda.device_array"),
                      ("device_array_large", "numba_cuda.device_array")):
        row = got.get((py, prog[name]))
        check(row is None or row["site"]["via"] == via,
              f"{name}: via {row and row['site']['via']!r}, want {via}")
    row = got.get(("callsites_native.c", native["alloc_on_this_thread"]))
    if row:
        check(row["site"]["language"] == "native" and
              os.path.basename(row["site"]["module"]).startswith("libgt_cs_native.so") and
              row["held_bytes"] == 1 << 21, f"the native thread's site {row}")
    row = got.get((py, prog["alloc_here"]))
    if row:
        check(row["site"]["function"] == "main" and row["held_bytes"] == 1 << 20,
              f"the ctypes allocation's site {row}")

    check("\ncall sites:" in text, "no `call sites` section in the summary")
    for name in ("launch_a", "launch_b", "to_device", "alloc_here"):
        check(f"{py}:{prog[name]} in main" in text, f"the summary does not name {name}")
    return report()


if __name__ == "__main__":
    sys.exit(main())
