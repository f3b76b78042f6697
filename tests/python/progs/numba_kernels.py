"""Numba on the default stream (the legacy one, or each thread's own with
CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1): two kernels, synchronous
copies of pageable memory, a second thread with work of its own, NVTX
ranges of every form (push/pop, start/end, domains, the decorator and the
context manager, with payloads: an int, a float, a structured NumPy value
of named fields), and every allocation freed before the end. Prints the
result it checks, and exits 1 if it is wrong.

numba_kernels.py [iterations]
"""
import sys
import threading

import numpy as np
import nvtx
from numba import cuda

import recorder
from numba_defs import AXPY, BLOCK, SCALE, axpy, grid, scale

N = 1 << 16  # float32 elements: 256 KiB
GRID = grid(N)


def to_device(host):
    """An allocation and a synchronous copy from pageable memory."""
    d = cuda.to_device(host)
    recorder.alloc()
    recorder.copy("HtoD", "pageable", False, host.nbytes)
    return d


def to_host(d):
    host = d.copy_to_host()
    recorder.copy("DtoH", "pageable", False, host.nbytes)
    return host


@nvtx.annotate("decorated step", domain="solver")
def step(y, x):
    recorder.range_begin("solver", "decorated step")
    axpy[GRID, BLOCK](y, 0.5, x)
    recorder.launch(AXPY)
    scale[GRID, BLOCK](y, 1.0)
    recorder.launch(SCALE)
    recorder.range_end("solver", "decorated step")


def worker(out):
    """A thread of its own: on the per-thread default stream when that mode
    is on, else on the legacy stream."""
    d = to_device(np.full(N, 3, dtype=np.float32))
    scale[GRID, BLOCK](d, 2.0)
    recorder.launch(SCALE)
    out.append(to_host(d))
    del d
    recorder.free()


# The numbers a range carries with the nvtx package's payload=: a plain
# int and float, and a structured value whose fields the tool reads by
# name (an extended payload with a schema).
WORK = np.dtype([("flops", np.uint64), ("bytes_read", np.uint64)])


def payloads(y, x):
    with nvtx.annotate("payload int", domain="solver", payload=2 * N):
        recorder.range_begin("solver", "payload int")
        recorder.payload("solver", "payload int", 2 * N)
        axpy[GRID, BLOCK](y, 0.5, x)
        recorder.launch(AXPY)
        recorder.range_end("solver", "payload int")
    nvtx.push_range("payload float", payload=0.75)
    recorder.range_begin("", "payload float")
    recorder.payload("", "payload float", 0.75)
    scale[GRID, BLOCK](y, 1.0)
    recorder.launch(SCALE)
    nvtx.pop_range()
    recorder.range_end("", "payload float")
    for _ in range(2):
        work = np.array((2 * N, 8 * N), dtype=WORK)
        with nvtx.annotate("axpy fields", domain="solver", payload=work):
            recorder.range_begin("solver", "axpy fields")
            recorder.fields("solver", "axpy fields", {"flops": 2 * N, "bytes_read": 8 * N})
            axpy[GRID, BLOCK](y, 0.5, x)
            recorder.launch(AXPY)
            recorder.range_end("solver", "axpy fields")


def main():
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    recorder.watch_numba()
    x = to_device(np.ones(N, dtype=np.float32))
    y = to_device(np.zeros(N, dtype=np.float32))

    nvtx.push_range("iterations")
    recorder.range_begin("", "iterations")
    for _ in range(iterations):
        step(y, x)
    nvtx.pop_range()
    recorder.range_end("", "iterations")

    payloads(y, x)

    outer = nvtx.start_range("copy back", domain="io")
    recorder.range_begin("io", "copy back")
    with nvtx.annotate("inner", domain="io"):
        recorder.range_begin("io", "inner")
        result = to_host(y)
        recorder.range_end("io", "inner")
    nvtx.end_range(outer)
    recorder.range_end("io", "copy back")

    out = []
    t = threading.Thread(target=worker, args=(out,))
    t.start()
    t.join()
    cuda.synchronize()

    del x, y
    recorder.free(n=2)
    # Numba frees when its queue of pending frees is flushed.
    cuda.current_context().memory_manager.deallocations.clear()

    # The emulator runs no kernel code: only the copies move data.
    ok = np.all(result == 0) and np.all(out[0] == 3)
    print(f"iterations {iterations}, result {'ok' if ok else 'wrong'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
