#!/usr/bin/env python3
"""numba-cuda workload: an @cuda.jit kernel (compiled through NVVM at its first launch)
launched in a loop, with host<->device copies of its arrays.
Usage: py_numba.py WORK_JSON (see workload_common.write_work)"""
import sys

from workload_common import expect_close, require, versions, write_work

ELEMENTS = 16 << 20
LAUNCHES = 200
THREADS = 256


def main(work_path):
    np = require("numpy")
    cuda = require("numba.cuda")
    if not cuda.is_available():
        print("numba.cuda sees no GPU")
        return 1

    @cuda.jit
    def gt_numba_axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    # Values whose sums stay exact in float32, so that the result can be checked.
    x = (np.arange(ELEMENTS) % 1024).astype(np.float32)
    y = np.ones(ELEMENTS, dtype=np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    blocks = (ELEMENTS + THREADS - 1) // THREADS
    for _ in range(LAUNCHES):
        gt_numba_axpy[blocks, THREADS](np.float32(0.5), dx, dy)
    cuda.synchronize()
    result = dy.copy_to_host()
    expect_close("axpy", result, 1.0 + LAUNCHES * 0.5 * x, 1e-6)

    write_work(work_path, versions("numba", "numba-cuda"), "gt_numba_axpy", LAUNCHES,
               x.nbytes + y.nbytes, y.nbytes, "nvvmCompileProgram")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
