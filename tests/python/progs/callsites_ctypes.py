"""The CUDA driver from Python through ctypes alone, so that every CPython
version the tests can get runs it with nothing installed
(check_callsites_versions.py): allocations, memsets, copies and kernel
launches from lines marked "SITE name", through ctypes.CDLL (which
releases the GIL around each call) and ctypes.PyDLL (which keeps it), in
a function of its helper module, and on a thread of its own. Each marked
line makes a different number of calls, so that one line's calls cannot
pass for another's. Prints "ok" at the end; exits 2 when a driver call
fails, 1 when the data that came back is wrong.
"""
import ctypes
import sys
import threading

import callsites_ctypes_helper as helper
from callsites_ctypes_helper import N, check

PTX = b"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry touch(.param .u64 p)
{
    ret;
}
"""


def declare(lib):
    """The argument types of the calls made, on one ctypes library."""
    ptr, u64, size = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t
    uint = ctypes.c_uint
    types = {
        "cuInit": [uint],
        "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
        "cuDevicePrimaryCtxRetain": [ctypes.POINTER(ptr), ctypes.c_int],
        "cuCtxSetCurrent": [ptr],
        "cuMemAlloc_v2": [ctypes.POINTER(u64), size],
        "cuMemsetD8_v2": [u64, ctypes.c_ubyte, size],
        "cuMemcpyHtoD_v2": [u64, ptr, size],
        "cuMemcpyDtoH_v2": [ptr, u64, size],
        "cuModuleLoadData": [ctypes.POINTER(ptr), ctypes.c_char_p],
        "cuModuleGetFunction": [ctypes.POINTER(ptr), ptr, ctypes.c_char_p],
        "cuLaunchKernel": [ptr, uint, uint, uint, uint, uint, uint, uint, ptr, ptr, ptr],
    }
    for name, argtypes in types.items():
        getattr(lib, name).argtypes = argtypes
        getattr(lib, name).restype = ctypes.c_int
    return lib


class Copier(threading.Thread):
    """A thread of the program's own. Its calls are in a method, whose
    qualified name (Copier.run) is not its name (run)."""

    def __init__(self, drv, ctx, dst, host):
        super().__init__()
        self.drv, self.ctx, self.dst, self.host = drv, ctx, dst, host

    def run(self):
        check(self.drv.cuCtxSetCurrent(self.ctx))
        check(self.drv.cuMemcpyHtoD_v2(self.dst, self.host, N))  # SITE thread_copy
        for _ in range(2):
            check(self.drv.cuMemsetD8_v2(self.dst, 7, N))  # SITE thread_memset


def main():
    drv = declare(ctypes.CDLL("libcuda.so.1"))
    held = declare(ctypes.PyDLL("libcuda.so.1"))
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(drv.cuInit(0))
    check(drv.cuDeviceGet(ctypes.byref(dev), 0))
    check(drv.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
    check(drv.cuCtxSetCurrent(ctx))

    a, b = ctypes.c_uint64(), ctypes.c_uint64()
    check(drv.cuMemAlloc_v2(ctypes.byref(a), N))  # SITE alloc_released
    check(held.cuMemAlloc_v2(ctypes.byref(b), 2 * N))  # SITE alloc_held
    check(drv.cuMemsetD8_v2(a, 1, N))  # SITE memset_released
    for _ in range(2):
        check(held.cuMemsetD8_v2(b, 2, 2 * N))  # SITE memset_held
    host = ctypes.create_string_buffer(bytes(range(256)) * (N // 256), N)
    for _ in range(3):
        check(drv.cuMemcpyHtoD_v2(a, host, N))  # SITE copy_released
    for _ in range(4):
        check(held.cuMemcpyHtoD_v2(b, host, N))  # SITE copy_held

    module, touch = ctypes.c_void_p(), ctypes.c_void_p()
    check(drv.cuModuleLoadData(ctypes.byref(module), PTX))
    check(drv.cuModuleGetFunction(ctypes.byref(touch), module, b"touch"))
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(a), ctypes.c_void_p))
    config = (1, 1, 1, 32, 1, 1, 0, None)  # grid, block, shared memory, stream
    for _ in range(5):
        check(drv.cuLaunchKernel(touch, *config, params, None))  # SITE launch_released
    for _ in range(6):
        check(held.cuLaunchKernel(touch, *config, params, None))  # SITE launch_held

    helper.fill(drv, held, host)

    t = Copier(drv, ctx, a, host)
    t.start()
    t.join()
    back = ctypes.create_string_buffer(N)
    check(drv.cuMemcpyDtoH_v2(back, a, N))  # SITE copy_back
    if back.raw != b"\x07" * N:
        print("the data that came back is wrong")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
