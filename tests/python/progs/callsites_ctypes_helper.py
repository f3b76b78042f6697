"""A helper module of callsites_ctypes.py's own: its calls are the
program's code, so their site is this file's line."""
import ctypes
import sys

N = 1 << 12


def check(status):
    if status != 0:
        print(f"a driver call failed: CUresult {status}")
        sys.exit(2)


def fill(drv, held, host):
    p = ctypes.c_uint64()
    check(held.cuMemAlloc_v2(ctypes.byref(p), 3 * N))  # SITE helper_alloc_held
    for _ in range(7):
        check(drv.cuMemsetD8_v2(p, 3, 3 * N))  # SITE helper_memset_released
    for _ in range(8):
        check(held.cuMemcpyHtoD_v2(p, host, N))  # SITE helper_copy_held
