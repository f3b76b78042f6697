"""cuda.core: an NVRTC program compiled to PTX and linked by nvJitLink to a
cubin (loaded as a library), a stream, device memory from the device's
memory pool and pinned host memory, copies both ways, launches, and the
program's own event timing of a copy. Everything is closed before the end.
Exits 1 if the data that came back is wrong.

core_program.py [iterations]
"""
import ctypes
import sys
import time

import numpy as np
from cuda.core import (Device, EventOptions, LaunchConfig, LegacyPinnedMemoryResource, Linker,
                       LinkerOptions, Program, ProgramOptions, launch)

import recorder

SOURCE = """
extern "C" __global__ void fill(float *a, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = v;
}
"""
N = 1 << 18  # float32 elements: 1 MiB
BYTES = N * 4


def main():
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    dev = Device()
    dev.set_current()
    program = Program(SOURCE, code_type="c++",
                      options=ProgramOptions(arch="sm_90", name="core.cu"))
    ptx = program.compile("ptx")
    recorder.compiled("nvrtcCompileProgram", "core.cu", True, len(SOURCE))
    cubin = Linker(ptx, options=LinkerOptions(arch="sm_90")).link("cubin")
    recorder.compiled("nvJitLinkComplete", "core.cu", True, len(ptx.code))
    kernel = cubin.get_kernel("fill")

    stream = dev.create_stream()
    device_buf = dev.allocate(BYTES, stream=stream)
    recorder.alloc()
    pinned = LegacyPinnedMemoryResource().allocate(BYTES)
    recorder.alloc("pinned")
    host = (ctypes.c_ubyte * BYTES).from_address(int(pinned.handle))
    ctypes.memset(host, 7, BYTES)
    timing = EventOptions(timing_enabled=True)
    config = LaunchConfig(grid=(N + 255) // 256, block=256)

    for it in range(iterations):
        # Host work between the stream's last operation and the start
        # event, as in numba_streams.py: the event belongs to the copy.
        time.sleep(0.01)
        start = stream.record(options=timing)
        device_buf.copy_from(pinned, stream=stream)
        stop = stream.record(options=timing)
        recorder.copy("HtoD", "pinned", True, BYTES)
        stop.sync()
        ms = stop - start
        recorder.timing(ms, "pinned", BYTES)
        print(f"iteration {it}: upload {ms:.4f} ms")
        launch(stream, config, kernel, device_buf, np.float32(it), np.int32(N))
        recorder.launch("fill")
    ctypes.memset(host, 0, BYTES)
    device_buf.copy_to(pinned, stream=stream)
    recorder.copy("DtoH", "pinned", True, BYTES)
    stream.sync()
    # The emulator runs no kernel code: the bytes are those uploaded.
    good = bytes(host) == b"\x07" * BYTES

    device_buf.close(stream)
    recorder.free()
    pinned.close()
    recorder.free("pinned")
    stream.close()
    print(f"result {'ok' if good else 'wrong'}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
