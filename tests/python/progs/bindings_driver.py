"""cuda-bindings, the driver API from Python as a library would use it:
NVRTC compiles (PTX, a cubin, and one that fails), every way to load the
result (cuModuleLoadData of PTX, cuLibraryLoadData of the cubin, a driver
link of the PTX passed with its length without the NUL as Numba's ctypes
binding did, an nvJitLink link loaded with cuModuleLoadDataEx), launches
of each, copies of every direction, memsets, a stream, pinned memory, an
NVTX domain, and the CUDA runtime wheel's answers. Exits 1 if the data
that came back is wrong, 2 if a call failed.
"""
import ctypes
import sys

import numpy as np
import nvtx
from cuda.bindings import driver as cu
from cuda.bindings import nvjitlink, nvrtc
from cuda.bindings import runtime as rt

import recorder

SOURCE = b"""
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
extern "C" __global__ void fill(float *y, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}
"""
BROKEN = b'extern "C" __global__ void broken(float *y) { y[0] = undeclared; }'
N = 1 << 16
BYTES = N * 4


def ok(result):
    """The value(s) of a cuda-bindings call, which returns (status, ...)."""
    status, rest = result[0], result[1:]
    if int(status) != 0:
        print(f"call failed: {status!r}")
        sys.exit(2)
    return rest[0] if len(rest) == 1 else rest


def compile_nvrtc(name, source, options, cubin=False):
    prog = ok(nvrtc.nvrtcCreateProgram(source, name.encode(), 0, [], []))
    status = nvrtc.nvrtcCompileProgram(prog, len(options), options)[0]
    good = status == nvrtc.nvrtcResult.NVRTC_SUCCESS
    recorder.compiled("nvrtcCompileProgram", name, good, len(source))
    code = None
    if good:
        size = ok((nvrtc.nvrtcGetCUBINSize if cubin else nvrtc.nvrtcGetPTXSize)(prog))
        code = b" " * size
        ok((nvrtc.nvrtcGetCUBIN if cubin else nvrtc.nvrtcGetPTX)(prog, code))
    ok(nvrtc.nvrtcDestroyProgram(prog))
    return code


def link_nvjitlink(ptx, name):
    handle = nvjitlink.create(1, ["-arch=sm_90"])
    nvjitlink.add_data(handle, nvjitlink.InputType.PTX, ptx, len(ptx), name)
    nvjitlink.complete(handle)
    recorder.compiled("nvJitLinkComplete", name, True, len(ptx))
    cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
    nvjitlink.get_linked_cubin(handle, cubin)
    nvjitlink.destroy(handle)
    return bytes(cubin)


def link_driver(ptx):
    """The PTX without its NUL, its length not counting one: the bytes
    object still ends in a NUL in memory, which is what the driver reads."""
    text = ptx.rstrip(b"\0")
    state = ok(cu.cuLinkCreate(0, [], []))
    ok(cu.cuLinkAddData(state, cu.CUjitInputType.CU_JIT_INPUT_PTX, text, len(text),
                        b"saxpy.ptx", 0, [], []))
    image, size = ok(cu.cuLinkComplete(state))
    recorder.linked("ptx")
    cubin = ctypes.string_at(image, size)
    ok(cu.cuLinkDestroy(state))
    return cubin


def params(*values):
    """kernelParams: the address of each argument's value."""
    holders = [np.array([v], dtype=t) for v, t in values]
    return holders, np.array([h.ctypes.data for h in holders], dtype=np.uint64)


def launch(function, name, stream, *values):
    holders, pointers = params(*values)
    ok(cu.cuLaunchKernel(function, (N + 255) // 256, 1, 1, 256, 1, 1, 0, stream,
                         pointers.ctypes.data, 0))
    recorder.launch(name)
    del holders


def main():
    version = ok(rt.cudaRuntimeGetVersion())
    count_status = rt.cudaGetDeviceCount()[0]
    # The runtime wheel needs the driver's private tables for device work,
    # which the emulator does not have: the answer is printed as it is.
    print(f"cudart {version}: cudaGetDeviceCount {count_status.name}")

    ok(cu.cuInit(0))
    ctx = ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))
    ok(cu.cuCtxSetCurrent(ctx))

    ptx = compile_nvrtc("saxpy.cu", SOURCE, [b"--gpu-architecture=compute_90"])
    cubin = compile_nvrtc("saxpy.cu", SOURCE, [b"--gpu-architecture=sm_90"], cubin=True)
    broken = compile_nvrtc("broken.cu", BROKEN, [b"--gpu-architecture=compute_90"])
    print(f"broken.cu compiled: {broken is not None}")

    from_ptx = ok(cu.cuModuleLoadData(ptx))
    library = ok(cu.cuLibraryLoadData(cubin, [], [], 0, [], [], 0))
    from_link = ok(cu.cuModuleLoadData(link_driver(ptx)))
    from_nvjitlink = ok(cu.cuModuleLoadDataEx(link_nvjitlink(ptx, "saxpy.ptx"), 0, [], []))

    stream = ok(cu.cuStreamCreate(0))
    x, y = ok(cu.cuMemAlloc(BYTES)), ok(cu.cuMemAlloc(BYTES))
    recorder.alloc(n=2)
    pinned = ok(cu.cuMemAllocHost(BYTES))
    recorder.alloc("pinned")
    host = np.full(N, 2, dtype=np.float32)

    with nvtx.annotate("upload", domain="bindings"):
        recorder.range_begin("bindings", "upload")
        ok(cu.cuMemcpyHtoD(x, host.ctypes.data, BYTES))
        recorder.copy("HtoD", "pageable", False, BYTES)
        ctypes.memmove(pinned, host.ctypes.data, BYTES)
        ok(cu.cuMemcpyHtoDAsync(y, pinned, BYTES, stream))
        recorder.copy("HtoD", "pinned", True, BYTES)
        ok(cu.cuMemsetD32Async(y, 0, N, stream))
        recorder.memset(True, BYTES)
        recorder.range_end("bindings", "upload")

    with nvtx.annotate("launches", domain="bindings"):
        recorder.range_begin("bindings", "launches")
        saxpy = ok(cu.cuModuleGetFunction(from_ptx, b"saxpy"))
        fill = cu.CUfunction(int(ok(cu.cuLibraryGetKernel(library, b"fill"))))
        for module in (from_link, from_nvjitlink):
            launch(ok(cu.cuModuleGetFunction(module, b"saxpy")), "saxpy", stream,
                   (1.0, np.float32), (int(x), np.uint64), (int(y), np.uint64), (N, np.int32))
        launch(saxpy, "saxpy", stream, (1.0, np.float32), (int(x), np.uint64),
               (int(y), np.uint64), (N, np.int32))
        launch(fill, "fill", stream, (int(y), np.uint64), (3.0, np.float32), (N, np.int32))
        recorder.range_end("bindings", "launches")

    ok(cu.cuMemcpyDtoDAsync(y, x, BYTES, stream))
    recorder.copy("DtoD", "none", True, BYTES)
    ok(cu.cuMemcpyDtoHAsync(pinned, y, BYTES, stream))
    recorder.copy("DtoH", "pinned", True, BYTES)
    ok(cu.cuStreamSynchronize(stream))
    back = np.empty(N, dtype=np.float32)
    ok(cu.cuMemsetD8(x, 1, BYTES))
    recorder.memset(False, BYTES)
    ok(cu.cuMemcpyDtoH(back.ctypes.data, x, BYTES))
    recorder.copy("DtoH", "pageable", False, BYTES)
    came_back = np.ctypeslib.as_array(ctypes.cast(pinned, ctypes.POINTER(ctypes.c_float)),
                                      shape=(N,))
    good = np.all(came_back == 2) and np.all(back.view(np.uint8) == 1)

    ok(cu.cuMemFree(x))
    ok(cu.cuMemFree(y))
    recorder.free(n=2)
    ok(cu.cuMemFreeHost(pinned))
    recorder.free("pinned")
    ok(cu.cuStreamDestroy(stream))
    for module in (from_ptx, from_link, from_nvjitlink):
        ok(cu.cuModuleUnload(module))
    ok(cu.cuLibraryUnload(library))
    ok(cu.cuDevicePrimaryCtxRelease(ok(cu.cuDeviceGet(0))))
    print(f"result {'ok' if good else 'wrong'}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
