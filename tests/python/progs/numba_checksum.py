"""Numba reading results back for GPUTRACE_CHECKSUM: copy_to_host into a
new pageable array (synchronous), into a page-locked array on a stream of
its own (hashed when the stream is synchronized), and a second thread's
copy. Each copy's data is known (the emulator runs no kernel code, so the
device arrays hold what was copied in). Prints the copies it made as
`copies N`, and exits 1 if a copy brought back the wrong data.

numba_checksum.py          GT_PY_CHANGE=1 changes one element of copy 1
"""
import os
import sys
import threading

import numpy as np
from numba import cuda

N = 1 << 14  # float32 elements: 64 KiB


def source(k):
    host = np.arange(N, dtype=np.float32) * 0.25 + k
    if k == 1 and os.environ.get("GT_PY_CHANGE") == "1":
        host[4321] += 1.0
    return host


def main():
    copies = 0
    ok = True
    d = cuda.to_device(source(0))
    ok &= bool(np.all(d.copy_to_host() == source(0)))
    copies += 1

    stream = cuda.stream()
    pinned = cuda.pinned_array(N, dtype=np.float32)
    d1 = cuda.to_device(source(1), stream=stream)
    d1.copy_to_host(pinned, stream=stream)
    stream.synchronize()
    ok &= bool(np.all(pinned == source(1)))
    copies += 1

    out = []

    def worker():
        w = cuda.to_device(source(2))
        out.append(w.copy_to_host())

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    ok &= bool(np.all(out[0] == source(2)))
    copies += 1
    print(f"copies {copies}, {'ok' if ok else 'wrong'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
