"""The Numba kernels of the test programs. Numba names them after this
module: numba_defs::scale and numba_defs::axpy (check_python.py gives each
a duration of its own)."""
from numba import cuda

SCALE = "numba_defs::scale"
AXPY = "numba_defs::axpy"
BLOCK = 256


def grid(n):
    return (n + BLOCK - 1) // BLOCK


@cuda.jit
def scale(a, f):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= f


@cuda.jit
def axpy(y, a, x):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]
