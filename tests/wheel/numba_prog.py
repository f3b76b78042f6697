"""A small numba-cuda program for the wheel test: a kernel compiled through
NVVM and launched on a stream, a pageable and a pinned copy to the device, a
memset through cuda.bindings, a pinned copy back. It writes what it did to
the JSON file named by its argument, for check_report.py.

usage: numba_prog.py FACTS_JSON"""
import json
import sys

import numpy as np
from cuda.bindings import driver
from numba import cuda

ELEMENTS = 1 << 18
THREADS = 128
LAUNCHES = 7


@cuda.jit
def gt_wheel_scale(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = a * x[i]


def main(facts_path):
    host = np.arange(ELEMENTS, dtype=np.float32)
    nbytes = host.nbytes
    stream = cuda.stream()
    dx = cuda.to_device(host)  # synchronous, from pageable memory
    pinned = cuda.pinned_array(ELEMENTS, dtype=np.float32)
    pinned[:] = 1.0
    dy = cuda.to_device(pinned, stream=stream)  # asynchronous, from pinned memory
    for _ in range(LAUNCHES):
        gt_wheel_scale[ELEMENTS // THREADS, THREADS, stream](dx, np.float32(2.0))
    stream.synchronize()
    (err,) = driver.cuMemsetD8(dy.__cuda_array_interface__["data"][0], 0, nbytes)
    if err != driver.CUresult.CUDA_SUCCESS:
        print(f"cuMemsetD8: {err}", file=sys.stderr)
        return 1
    dx.copy_to_host(pinned, stream=stream)
    stream.synchronize()
    # Kernels do not run on the emulator: the copies must still have moved the data.
    if not np.array_equal(pinned, host):
        print("the device's copy of the data came back changed", file=sys.stderr)
        return 1
    facts = {
        "kernel": "gt_wheel_scale",
        "launches": LAUNCHES,
        "copies": [
            {"direction": "HtoD", "host_memory": "pageable", "async": False, "calls": 1, "bytes": nbytes},
            {"direction": "HtoD", "host_memory": "pinned", "async": True, "calls": 1, "bytes": nbytes},
            {"direction": "DtoH", "host_memory": "pinned", "async": True, "calls": 1, "bytes": nbytes},
        ],
        "memset_bytes": nbytes,
        "device_allocs": 2,
        "device_bytes": 2 * nbytes,
    }
    with open(facts_path, "w", encoding="utf-8") as f:
        json.dump(facts, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
