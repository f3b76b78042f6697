"""Call sites of a Numba program: one kernel launched from two lines of
this file and from a helper module of the program's own, allocations from
three lines, and allocations made in C code called through ctypes (which
releases the GIL): on this thread, under a line of this file, and on a
native thread of the C code's own, which runs no Python. Each line that
makes a call ends in a comment "SITE name", which check_callsites_py.py
finds.

callsites_numba.py NATIVE_LIB
"""
import ctypes
import sys

import numpy as np
from numba import cuda

import callsites_helper
from numba_defs import BLOCK, grid, scale

N = 1 << 12
GRID = grid(N)


def main():
    native = ctypes.CDLL(sys.argv[1])
    for fn in (native.gt_cs_alloc_here, native.gt_cs_alloc_in_thread):
        fn.argtypes = [ctypes.c_size_t]
    host = np.ones(N, np.float32)
    a = cuda.to_device(host)  # SITE to_device
    b = cuda.device_array(N, np.float32)  # SITE device_array
    c = cuda.device_array(4 * N, np.float32)  # SITE device_array_large
    for _ in range(3):
        scale[GRID, BLOCK](a, 2.0)  # SITE launch_a
    for _ in range(5):
        scale[GRID, BLOCK](b, 2.0)  # SITE launch_b
    callsites_helper.scale_times(c, 7)  # SITE helper_call
    if native.gt_cs_alloc_here(1 << 20) != 0:  # SITE alloc_here
        sys.exit("gt_cs_alloc_here failed")
    if native.gt_cs_alloc_in_thread(1 << 21) != 0:
        sys.exit("gt_cs_alloc_in_thread failed")
    cuda.synchronize()
    print(a.copy_to_host().size)  # SITE copy_back
    del a, b


if __name__ == "__main__":
    main()
