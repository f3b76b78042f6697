#!/usr/bin/env python3
"""CuPy workload: a RawKernel compiled by NVRTC (CuPy's on-disk kernel cache kept out,
so that every run compiles), launched in a loop, with array copies both ways.
Usage: py_cupy.py WORK_JSON (see workload_common.write_work)"""
import os
import sys

from workload_common import expect_close, require, write_work

ELEMENTS = 16 << 20
LAUNCHES = 200
THREADS = 256
SOURCE = r"""
extern "C" __global__ void gt_cupy_saxpy(float a, const float *x, float *y, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def main(work_path):
    os.environ["CUPY_CACHE_IN_MEMORY"] = "1"
    np = require("numpy")
    cp = require("cupy")
    kernel = cp.RawKernel(SOURCE, "gt_cupy_saxpy")
    # Values whose sums stay exact in float32, so that the result can be checked.
    x = (np.arange(ELEMENTS) % 1024).astype(np.float32)
    y = np.ones(ELEMENTS, dtype=np.float32)
    dx, dy = cp.asarray(x), cp.asarray(y)
    blocks = (ELEMENTS + THREADS - 1) // THREADS
    for _ in range(LAUNCHES):
        kernel((blocks,), (THREADS,), (np.float32(0.5), dx, dy, np.uint32(ELEMENTS)))
    cp.cuda.Device().synchronize()
    result = cp.asnumpy(dy)
    expect_close("saxpy", result, 1.0 + LAUNCHES * 0.5 * x, 1e-6)

    write_work(work_path, f"cupy {cp.__version__}", "gt_cupy_saxpy", LAUNCHES,
               x.nbytes + y.nbytes, y.nbytes, "nvrtcCompileProgram")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
