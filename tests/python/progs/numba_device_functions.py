"""Numba compiling a kernel that calls device functions, which call one
another, and a second kernel that shares one of them: NVVM gets one module
per function (the kernel's first), and the compile rows name the kernel
with its device functions. Exits 1 if the result is wrong.

numba_device_functions.py
"""
import sys

import numpy as np
from numba import cuda

import recorder
from numba_defs import BLOCK, grid

N = 1 << 12


@cuda.jit(device=True)
def square(v):
    return v * v


@cuda.jit(device=True)
def shifted_square(v, s):
    return square(v) + s


@cuda.jit
def transform(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = shifted_square(a[i], 1.0)


@cuda.jit
def squares(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = square(a[i])


def main():
    recorder.watch_numba()
    host = np.ones(N, dtype=np.float32)
    d = cuda.to_device(host)
    recorder.alloc()
    recorder.copy("HtoD", "pageable", False, host.nbytes)
    transform[grid(N), BLOCK](d)
    recorder.launch("__main__::transform")
    squares[grid(N), BLOCK](d)
    recorder.launch("__main__::squares")
    out = d.copy_to_host()
    recorder.copy("DtoH", "pageable", False, out.nbytes)
    del d
    recorder.free()
    cuda.current_context().memory_manager.deallocations.clear()
    # The emulator runs no kernel code: the data comes back as it went.
    ok = np.all(out == 1)
    print(f"device functions {'ok' if ok else 'wrong'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
