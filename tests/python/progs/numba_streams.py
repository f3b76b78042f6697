"""Numba with two streams: pinned host buffers copied asynchronously both
ways, kernels on each stream, and the program timing its own copies with
cuda.event pairs (printed, as a user would see them). Every allocation is
freed before the end. Exits 1 if the data that came back is wrong.

numba_streams.py [iterations]
"""
import sys
import time

import numpy as np
import nvtx
from numba import cuda

import recorder
from numba_defs import BLOCK, SCALE, grid, scale

N = 1 << 20  # float32 elements: 4 MiB


def main():
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    recorder.watch_numba()
    streams = [cuda.stream(), cuda.stream()]
    hosts = [cuda.pinned_array(N, dtype=np.float32) for _ in streams]
    recorder.alloc("pinned", n=len(hosts))
    devs = [cuda.device_array(N, dtype=np.float32) for _ in streams]
    recorder.alloc(n=len(devs))
    start, stop = cuda.event(), cuda.event()
    for i, h in enumerate(hosts):
        h[:] = i + 1

    for it in range(iterations):
        for s, h, d in zip(streams, hosts, devs):
            # The host works a while between the stream's last kernel and
            # the next start event: on an idle stream the emulator places
            # that event with whichever piece of work it was recorded
            # nearer to (tests/emu/README.md), and a loaded machine must
            # not make the copy the farther one.
            time.sleep(0.01)
            with nvtx.annotate("upload", domain="streams"):
                recorder.range_begin("streams", "upload")
                start.record(s)
                d.copy_to_device(h, stream=s)
                stop.record(s)
                recorder.copy("HtoD", "pinned", True, h.nbytes)
                recorder.range_end("streams", "upload")
            stop.synchronize()
            ms = cuda.event_elapsed_time(start, stop)
            recorder.timing(ms, "pinned", h.nbytes)
            print(f"iteration {it}: upload {ms:.4f} ms")
            scale[grid(N), BLOCK, s](d, 1.0)
            recorder.launch(SCALE)
    for s, h, d in zip(streams, hosts, devs):
        d.copy_to_host(h, stream=s)
        recorder.copy("DtoH", "pinned", True, h.nbytes)
    for s in streams:
        s.synchronize()
    ok = all(np.all(h == i + 1) for i, h in enumerate(hosts))

    del hosts, devs, h, d
    recorder.free("pinned", n=2)
    recorder.free(n=2)
    cuda.current_context().memory_manager.deallocations.clear()
    print(f"result {'ok' if ok else 'wrong'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
