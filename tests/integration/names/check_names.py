#!/usr/bin/env python3
"""kernel_names under libgputrace.so: the names the report gives the kernels
Python GPU libraries launch.

check_names.py --lib LIB --prog PROG

For every kernel the program launched (its stdout: "kernel LIBRARY NAME",
NAME being what the driver was asked for):
  - JSON: one row with the program's calls; "name" is NAME demangled
    (c++filt, the same demangler family as the program's own), whole;
    "display_name" is the readable form (DISPLAY below: the parameter list,
    return type and ABI tags gone, Numba's escapes undone);
  - default text: the row's name is the readable form, or a cut of it
    that still ends with the function's own name (never a parameter list);
  - verbose text: the full name (Numba's with its escapes undone and its
    ABI tags, a counter and a hash, dropped).
The program's output is the same with and without the shim.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

LAUNCHES = 3
TIMEOUT = 60
DISPLAY = {
    "cupy-raw": ["raw_add"],
    "cupy-elementwise": ["squared_diff"],
    "cupy-template": ["mylib::scale<float>", "mylib::scale<double>"],
    "cuda-core": ["mylib::scale<double>"],
    "torch": ["at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
              "at::detail::Array<char*, 3>>"],
    "triton": ["triton_poi_fused_add_0"],
    "numba": ["cudapy::cubie::batchsolving::BatchSolverKernel::build_kernel::<locals>::"
              "integration_kernel"],
}


def same_angles(s):
    """Demanglers differ in writing '> >' or '>>'."""
    return s.replace("> >", ">>")


def demangle(names):
    if not shutil.which("c++filt"):
        check(False, "c++filt (binutils) is needed to know the demangled names")
        return names
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True,
                         text=True, check=True).stdout
    return out.splitlines()


def run(args, extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUTRACE_") and k != "LD_PRELOAD"}
    env.update(extra)
    return subprocess.run([args.prog, str(LAUNCHES)], env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


def kernel_cells(text):
    """The Name cells of the kernel table of a summary."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("kernel: ")), None)
    if start is None or "Name" not in lines[start + 1]:
        return []
    column = lines[start + 1].index("Name")
    cells = []
    for line in lines[start + 2:]:
        if not line.strip() or line.strip().startswith("..."):
            break
        cells.append(line[column:].rstrip())
    return cells


def own_name(display):
    """The function's own name: the last component, without template arguments."""
    depth, last = 0, 0
    for i, ch in enumerate(display):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif depth == 0 and display.startswith("::", i):
            last = i + 2
    return re.sub(r"<.*$", "", display[last:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    args = ap.parse_args()

    bare = run(args, {})
    check(bare.returncode == 0, f"bare run exited {bare.returncode}: {bare.stderr}")
    launched = [line.split(" ", 2)[1:] for line in bare.stdout.splitlines()
                if line.startswith("kernel ")]
    check(sorted(lib for lib, _ in launched) == sorted(
        lib for lib, names in DISPLAY.items() for _ in names), f"launched: {launched}")
    full = dict(zip((name for _, name in launched), demangle([name for _, name in launched])))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rep")
        traced = run(args, {"LD_PRELOAD": args.lib, "GPUTRACE_OUTPUT": out,
                            "GPUTRACE_FORMAT": "json"})
        check(traced.returncode == 0 and traced.stdout == bare.stdout,
              f"traced run: exit {traced.returncode}, output\n{traced.stdout}")
        with open(out + ".json") as f:
            rows = {r["name"]: r for r in json.load(f)["kernels"]}
        verbose = run(args, {"LD_PRELOAD": args.lib, "GPUTRACE_VERBOSITY": "verbose"})

    cells = kernel_cells(traced.stderr)
    displays = {lib: list(names) for lib, names in DISPLAY.items()}
    calls = {}
    for lib, name in launched:
        calls[full[name]] = calls.get(full[name], 0) + LAUNCHES
    for lib, name in launched:
        want_full, want_display = full[name], displays[lib].pop(0)
        row = rows.get(want_full)
        if not check(row is not None, f"{lib}: no kernel row {want_full!r} in {sorted(rows)}"):
            continue
        check(row["calls"] == calls[want_full], f"{lib}: {row['calls']} calls of {want_full!r}")
        check(same_angles(row["display_name"]) == same_angles(want_display),
              f"{lib}: display_name {row['display_name']!r}, expected {want_display!r}")
        own = own_name(want_display)
        shown = [c for c in cells if same_angles(c) == same_angles(want_display)
                 or (c.endswith(own) and "(" not in c.replace("(anonymous namespace)", ""))]
        check(shown, f"{lib}: no default-text row shows {want_display!r} or ends in {own!r}: "
                     f"{cells}")
        want_verbose = want_full
        if lib == "numba":
            want_verbose = re.sub(r"\[abi:[^\]]*\]", "", want_full)
            want_verbose = want_verbose.replace("_3c", "<").replace("_3e", ">")
        check(want_verbose in kernel_cells(verbose.stderr),
              f"{lib}: verbose text lacks the full name {want_verbose!r}")
    return report()


if __name__ == "__main__":
    sys.exit(main())
