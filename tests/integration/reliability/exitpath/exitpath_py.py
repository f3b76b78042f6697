#!/usr/bin/env python3
"""How a traced Python program ends: the driver API through ctypes (as
Python CUDA packages reach it), then a way out that skips exit().

exitpath_py.py execv            40 launches, then os.execv of /bin/sh -c 'exit 4'
exitpath_py.py _exit            40 launches, then os._exit(6)
exitpath_py.py release-at-exit  a 3 MiB and a 1 MiB allocation never freed; an
                                atexit handler releases the primary context,
                                as Python CUDA packages tear down at exit

Prints "launches N". Kernel durations come from GPUTRACE_EMU_KERNEL_NS (tick).
"""
import atexit
import ctypes
import os
import sys

LAUNCHES = 40
MIB = 1024 * 1024
PTX = b""".version 8.0
.target sm_90
.address_size 64
.visible .entry tick()
{
\tret;
}
"""

cuda = ctypes.CDLL("libcuda.so.1")


def check(result, what):
    if result != 0:
        sys.exit(f"exitpath_py: {what} failed: CUresult {result}")


def start():
    check(cuda.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return dev


def launch_ticks(n):
    module, tick = ctypes.c_void_p(), ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), PTX), "cuModuleLoadData")
    check(cuda.cuModuleGetFunction(ctypes.byref(tick), module, b"tick"), "cuModuleGetFunction")
    one = ctypes.c_uint(1)
    for _ in range(n):
        check(cuda.cuLaunchKernel(tick, one, one, one, ctypes.c_uint(32), one, one, ctypes.c_uint(0),
                                  None, None, None), "cuLaunchKernel")
    check(cuda.cuCtxSynchronize(), "cuCtxSynchronize")
    print(f"launches {n}", flush=True)


def main():
    mode = sys.argv[1]
    dev = start()
    if mode == "release-at-exit":
        for size in (3 * MIB, 1 * MIB):
            ptr = ctypes.c_uint64()
            check(cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(size)), "cuMemAlloc")
        atexit.register(lambda: check(cuda.cuDevicePrimaryCtxRelease_v2(dev),
                                      "cuDevicePrimaryCtxRelease"))
        launch_ticks(LAUNCHES)
    elif mode == "execv":
        launch_ticks(LAUNCHES)
        os.execv("/bin/sh", ["sh", "-c", "exit 4"])
    elif mode == "_exit":
        launch_ticks(LAUNCHES)
        os._exit(6)
    else:
        sys.exit(f"exitpath_py: unknown mode {mode}")


if __name__ == "__main__":
    main()
