/* Compiles kernels at run time with NVRTC, loads the PTX with cuModuleLoadData and
 * launches them.
 *
 * Usage: nvrtc_launch [iterations=10] [elements=65536]
 *  - nvrtcCompileProgram of a templated (rtc::scale<float>, found through its lowered
 *    name) and an extern "C" kernel (fill)
 *  - `iterations` launches of each on the legacy default stream
 *  - a D32 sync memset checked by a DtoH pageable sync copy, one cuCtxSynchronize */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>
#include <nvrtc.h>

#include "app_util.h"
#include "manifest.h"

#define BLOCK 128

static const char source[] = "namespace rtc {\n"
                             "template <typename T> __global__ void scale(T *x, T factor, int n)\n"
                             "{\n"
                             "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "    if (i < n) x[i] *= factor;\n"
                             "}\n"
                             "}\n"
                             "extern \"C\" __global__ void fill(float *x, float value, int n)\n"
                             "{\n"
                             "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "    if (i < n) x[i] = value;\n"
                             "}\n";

static void check(CUresult res, const char *what)
{
    if (res == CUDA_SUCCESS) return;
    const char *name = "unknown CUresult";
    cuGetErrorName(res, &name);
    app_fail(what, name, (int)res);
}

static void check_rtc(nvrtcResult res, const char *what)
{
    if (res != NVRTC_SUCCESS) app_fail(what, nvrtcGetErrorString(res), (int)res);
}

/* Returns the PTX of `source`; *lowered receives the mangled name of rtc::scale<float>,
 * valid until the program is destroyed (the caller destroys *prog). */
static char *compile(nvrtcProgram *prog, const char **lowered)
{
    const char *options[] = {"--gpu-architecture=compute_75"};
    check_rtc(nvrtcCreateProgram(prog, source, "nvrtc_kernels.cu", 0, NULL, NULL),
              "nvrtcCreateProgram");
    check_rtc(nvrtcAddNameExpression(*prog, "rtc::scale<float>"), "nvrtcAddNameExpression");
    nvrtcResult res = nvrtcCompileProgram(*prog, 1, options);
    if (res != NVRTC_SUCCESS) {
        size_t log_size = 0;
        if (nvrtcGetProgramLogSize(*prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
            char *log = malloc(log_size);
            if (log != NULL && nvrtcGetProgramLog(*prog, log) == NVRTC_SUCCESS)
                fprintf(stderr, "%s", log);
            free(log);
        }
        check_rtc(res, "nvrtcCompileProgram");
    }
    size_t ptx_size = 0;
    check_rtc(nvrtcGetPTXSize(*prog, &ptx_size), "nvrtcGetPTXSize");
    char *ptx = malloc(ptx_size);
    if (ptx == NULL) app_wrong("out of host memory");
    check_rtc(nvrtcGetPTX(*prog, ptx), "nvrtcGetPTX");
    check_rtc(nvrtcGetLoweredName(*prog, "rtc::scale<float>", lowered), "nvrtcGetLoweredName");
    return ptx;
}

int main(int argc, char **argv)
{
    app_program = "nvrtc_launch";
    int iterations = (int)app_arg(argc, argv, 1, "iterations", 10, 0);
    size_t elements = (size_t)app_arg(argc, argv, 2, "elements", 65536, 1);
    size_t bytes = elements * sizeof(float);

    nvrtcProgram prog;
    const char *lowered = NULL;
    char *ptx = compile(&prog, &lowered);

    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CUfunction scale, fill;
    CUdeviceptr x;
    check(cuInit(0), "cuInit");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");
    check(cuModuleLoadData(&module, ptx), "cuModuleLoadData");
    check(cuModuleGetFunction(&scale, module, lowered), "cuModuleGetFunction rtc::scale<float>");
    check(cuModuleGetFunction(&fill, module, "fill"), "cuModuleGetFunction fill");
    check(cuMemAlloc(&x, bytes), "cuMemAlloc");

    int n = (int)elements;
    float value = 1.0f, factor = 2.0f;
    void *fill_args[] = {&x, &value, &n};
    void *scale_args[] = {&x, &factor, &n};
    unsigned grid = (unsigned)((n + BLOCK - 1) / BLOCK);
    for (int i = 0; i < iterations; i++) {
        check(cuLaunchKernel(fill, grid, 1, 1, BLOCK, 1, 1, 0, NULL, fill_args, NULL),
              "cuLaunchKernel fill");
        check(cuLaunchKernel(scale, grid, 1, 1, BLOCK, 1, 1, 0, NULL, scale_args, NULL),
              "cuLaunchKernel rtc::scale<float>");
    }
    app_manifest_kernel("fill", (unsigned long long)iterations, false);
    app_manifest_kernel("rtc::scale<float>", (unsigned long long)iterations, false);

    uint32_t *host = malloc(bytes);
    if (host == NULL) app_wrong("out of host memory");
    check(cuMemsetD32(x, 0x3f800000u, elements), "cuMemsetD32");
    app_manifest_memset(bytes, false, false);
    check(cuMemcpyDtoH(host, x, bytes), "cuMemcpyDtoH");
    app_manifest_copy(APP_DTOH, APP_PAGEABLE, false, bytes, false);
    for (size_t i = 0; i < elements; i++)
        if (host[i] != 0x3f800000u) app_wrong("memset after the launches");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    app_manifest_sync("cuCtxSynchronize", 1);

    free(host);
    check(cuMemFree(x), "cuMemFree");
    check(cuModuleUnload(module), "cuModuleUnload");
    check(cuCtxDestroy(ctx), "cuCtxDestroy");
    check_rtc(nvrtcDestroyProgram(&prog), "nvrtcDestroyProgram");
    free(ptx);
    return app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
}
