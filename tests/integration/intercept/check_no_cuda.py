#!/usr/bin/env python3
"""A program with no CUDA of its own (no_cuda_prog.c) under libgputrace.so,
preloaded and through the gputrace command, with the emulated libcuda.so.1
loadable: its dlsym lookups find what they find bare; the weak references
the loader bound to the library's exports answer as CUDA does without a
driver (runtime cudaErrorInsufficientDriver 35, cuInit CUDA_ERROR_NO_DEVICE
100, other driver calls CUDA_ERROR_NOT_INITIALIZED 3); the library loads no
driver for it and prints nothing (the command, one line saying that
nothing was recorded).

check_no_cuda.py --lib LIB --cli CLI --prog PROG
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

TIMEOUT = 60
CALLS = ["cudaMalloc 35", "cuInit 100", "cuMemAlloc_v2 3"]


def run(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    return p.returncode, p.stdout.splitlines(), p.stderr


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--lib", "--cli", "--prog"):
        ap.add_argument(opt, required=True)
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUTRACE_") and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH")}
    bare = run([a.prog], env)
    check(bare[0] == 0 and bare[2] == "", f"bare: {bare}")
    check(bare[1][-1] == "libcuda.so.1 loaded: no", f"bare loads the driver: {bare[1]}")
    lookups = [line for line in bare[1] if line.startswith("dlsym ")]
    check(lookups and all(" none, dlerror set" in line for line in lookups),
          f"bare lookups found CUDA: {lookups}")
    want = lookups + CALLS + ["libcuda.so.1 loaded: no"]
    for how, cmd, extra in (("preloaded", [a.prog], {"LD_PRELOAD": a.lib}),
                            ("command", [a.cli, a.prog], {})):
        got = run(cmd, dict(env, **extra))
        check(got[0] == 0, f"{how}: status {got[0]}")
        check(got[1] == want, f"{how}: output\n  {got[1]}\nexpected\n  {want}")
        # Under the command, its one line for a run in which nothing reached CUDA.
        said = "" if how == "preloaded" else (
            rf"gputrace: {re.escape(os.path.basename(a.prog))} \(pid \d+\) made no CUDA calls; "
            r"nothing recorded\n")
        check(re.fullmatch(said, got[2]), f"{how}: stderr {got[2]!r}")
    return report()


if __name__ == "__main__":
    sys.exit(main())
