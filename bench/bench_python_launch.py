#!/usr/bin/env python3
"""What Python call sites cost a Numba launch loop (figures, not tests:
see scripts/bench.sh), on the emulated driver with a zero-duration kernel.

bench_python_launch.py VENV GPUTRACE EMU_LIB [launches] [runs]

Runs the loop under the gputrace command (GPU timing off) with call sites
on (`--callsites auto`: Python frames) and off, the runs interleaved so
that a change in machine load touches both alike, and prints as rows of
a Markdown table (figure | value | target) the median time per launch of
each and what call sites add, in ns and as a share of the launch. The
loop times itself after a warm-up, in the launching thread's CPU time: the
interpreter's start, the report's writing and the other work of a loaded
machine are not in the figures (naming the sites is the drain thread's). Prints nothing (exit 77) when
VENV has no Python.
"""
import os
import statistics
import subprocess
import sys

LOOP = r"""
import sys, time
import warnings
import numpy as np
from numba import cuda
warnings.simplefilter("ignore")

@cuda.jit
def noop(a):
    pass

n = int(sys.argv[1])
a = cuda.device_array(1, np.float32)
for _ in range(2000):
    noop[1, 1](a)  # past the call sites' exact calls: what follows is sampled
cuda.synchronize()
t0 = time.thread_time_ns()
for _ in range(n):
    noop[1, 1](a)
cuda.synchronize()
print((time.thread_time_ns() - t0) / n)
"""


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: bench_python_launch.py VENV GPUTRACE EMU_LIB [launches] [runs]")
    venv, cli, emu_lib = sys.argv[1:4]
    launches = int(sys.argv[4]) if len(sys.argv) > 4 else 20000
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 7
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        return 77
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUTRACE_", "CUDA_PYTHON_"))}
    env.pop("LD_PRELOAD", None)
    env.update(LD_LIBRARY_PATH=emu_lib, GPUTRACE_EMU_KERNEL_NS="*=0")
    ns = {"auto": [], "off": []}
    for _ in range(runs):
        for mode in ns:
            out = subprocess.run([cli, "-v", "none", "--gpu-timing", "off", "--callsites", mode,
                                  "--", python, "-c", LOOP, str(launches)],
                                 env=env, capture_output=True, text=True, timeout=600, check=True)
            ns[mode].append(float(out.stdout.split()[-1]))
    on, off = statistics.median(ns["auto"]), statistics.median(ns["off"])
    print(f"| Numba launch loop, Python call sites off: per launch | {off:.0f} ns | |")
    print(f"| Numba launch loop: added by Python call sites | {on - off:+.0f} ns "
          f"({100 * (on - off) / off:+.1f}%) | <= +5% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
