/* NVRTC for real (it runs on the CPU), linked as programs link it.
 *
 *   timing (default)  a kernel of STATEMENTS unrolled statements, long
 *                     enough to compile (about half a second) that the
 *                     report's wall time can be held to 30% of this
 *                     program's own clock around nvrtcCompileProgram; its
 *                     PTX loaded (a `ptx` module row) and launched. Then a
 *                     program with a header: its input is source + header.
 *   error             a source with a syntax error: the status and the log
 *                     are printed, exit 0; the report has the compile with
 *                     ok=false and the status by name
 *
 * Usage: nvrtc_compile [timing|error] */
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app_util.h"
#include "test_support.h"
#include "expect.h"

#define STATEMENTS 400

static void check_rtc(nvrtcResult r, const char *what)
{
    if (r != NVRTC_SUCCESS) app_fail(what, nvrtcGetErrorString(r), (int)r);
}

static unsigned long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static char *heavy_source(void)
{
    size_t cap = 256 + (size_t)STATEMENTS * 64, len = 0;
    char *s = malloc(cap);
    if (!s) app_wrong("out of memory");
    len += (size_t)snprintf(s + len, cap - len,
                            "extern \"C\" __global__ void heavy(float *x)\n{\n"
                            "    float a = x[threadIdx.x];\n");
    for (int i = 0; i < STATEMENTS; i++)
        len += (size_t)snprintf(s + len, cap - len,
                                "    a = a * 1.0001f + x[(threadIdx.x + %d) & 1023];\n", i);
    snprintf(s + len, cap - len, "    x[threadIdx.x] = a;\n}\n");
    return s;
}

/* Compiles, loads and launches the heavy kernel. */
static void timing(void)
{
    char *src = heavy_source();
    const char *options[] = {"--gpu-architecture=compute_75", "-lineinfo"};
    nvrtcProgram prog;
    check_rtc(nvrtcCreateProgram(&prog, src, "heavy.cu", 0, NULL, NULL), "nvrtcCreateProgram");
    unsigned long long t0 = now_ns();
    nvrtcResult r = nvrtcCompileProgram(prog, 2, options);
    unsigned long long wall = now_ns() - t0;
    check_rtc(r, "nvrtcCompileProgram");
    expect_compile("nvrtcCompileProgram", "heavy.cu", true, strlen(src), wall);
    expect_compile_program("nvrtcCompileProgram", "heavy.cu", true);
    size_t ptx_size;
    check_rtc(nvrtcGetPTXSize(prog, &ptx_size), "nvrtcGetPTXSize");
    char *ptx = malloc(ptx_size);
    if (!ptx) app_wrong("out of memory");
    check_rtc(nvrtcGetPTX(prog, ptx), "nvrtcGetPTX");
    check_rtc(nvrtcDestroyProgram(&prog), "nvrtcDestroyProgram");

    CUmodule module;
    CUfunction heavy;
    CUdeviceptr x;
    context_on_device0();
    app_check(cuModuleLoadData(&module, ptx), "cuModuleLoadData");
    expect_module("cuModuleLoadData", "ptx", strlen(ptx));
    app_check(cuModuleGetFunction(&heavy, module, "heavy"), "cuModuleGetFunction");
    app_check(cuMemAlloc(&x, 1024 * sizeof(float)), "cuMemAlloc");
    void *args[] = {&x};
    app_check(cuLaunchKernel(heavy, 1, 1, 1, 1024, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    expect_api("cuLaunchKernel", 1);
    expect_api("nvrtcGetPTXSize", 1);
    expect_api("nvrtcCreateProgram", 2);
    expect_api("nvrtcDestroyProgram", 2);
    free(ptx);
    free(src);

    static const char with_header[] = "#include \"scale.h\"\n"
                                      "extern \"C\" __global__ void twice(float *x)\n"
                                      "{ x[threadIdx.x] = scale(x[threadIdx.x]); }\n";
    static const char header[] = "__device__ float scale(float v) { return 2.0f * v; }\n";
    const char *headers[] = {header}, *names[] = {"scale.h"};
    check_rtc(nvrtcCreateProgram(&prog, with_header, "twice.cu", 1, headers, names),
              "nvrtcCreateProgram");
    check_rtc(nvrtcCompileProgram(prog, 1, options), "nvrtcCompileProgram");
    expect_compile("nvrtcCompileProgram", "twice.cu", true, strlen(with_header) + strlen(header),
                   0);
    expect_compile_program("nvrtcCompileProgram", "twice.cu", true);
    check_rtc(nvrtcDestroyProgram(&prog), "nvrtcDestroyProgram");
}

/* A failing compile: what the program sees is printed, for comparison
 * with a run without the tracer. */
static void error(void)
{
    static const char src[] = "extern \"C\" __global__ void broken(float *x)\n"
                              "{\n    x[threadIdx.x] = undeclared_name +;\n}\n";
    nvrtcProgram prog;
    check_rtc(nvrtcCreateProgram(&prog, src, "broken.cu", 0, NULL, NULL), "nvrtcCreateProgram");
    nvrtcResult r = nvrtcCompileProgram(prog, 0, NULL);
    printf("nvrtcCompileProgram: %d %s\n", (int)r, nvrtcGetErrorString(r));
    size_t log_size = 0;
    check_rtc(nvrtcGetProgramLogSize(prog, &log_size), "nvrtcGetProgramLogSize");
    char *log = malloc(log_size + 1);
    if (!log) app_wrong("out of memory");
    check_rtc(nvrtcGetProgramLog(prog, log), "nvrtcGetProgramLog");
    printf("log (%zu bytes):\n%s\n", log_size, log);
    free(log);
    check_rtc(nvrtcDestroyProgram(&prog), "nvrtcDestroyProgram");
    if (r == NVRTC_SUCCESS) app_wrong("the broken source compiled");
    expect_compile("nvrtcCompileProgram", "broken.cu", false, strlen(src), 0);
    expect_compile_program("nvrtcCompileProgram", "broken.cu", false);
    expect_api_error("nvrtcCompileProgram", "NVRTC_ERROR_COMPILATION");
}

int main(int argc, char **argv)
{
    app_program = "nvrtc_compile";
    const char *mode = argc > 1 ? argv[1] : "timing";
    if (!strcmp(mode, "timing")) {
        timing();
    } else if (!strcmp(mode, "error")) {
        error();
    } else {
        fprintf(stderr, "usage: nvrtc_compile [timing|error]\n");
        return APP_EXIT_USAGE;
    }
    if (expect_write() != 0) app_wrong("cannot write GT_EXPECT");
    return 0;
}
