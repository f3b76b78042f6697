/* The compiler libraries as Python packages reach them (CuPy and PyTorch
 * NVRTC, Numba NVVM): opened with dlopen(RTLD_LOCAL), every function
 * taken with dlsym. Nothing is linked.
 *
 *   NVRTC  one kernel compiled
 *   NVVM   a module of NVVM IR text (scale.ll) with libdevice added lazily,
 *          verified and compiled; a module that is not NVVM IR fails to
 *          verify: ok=false, its status by the library's own name for it
 *
 * Usage: compile_dlopen LIBNVRTC LIBNVVM LIBDEVICE_BC */
#include <dlfcn.h>
#include <nvrtc.h>
#include <nvvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"
#include "expect.h"
#include "test_support.h"

static void *lib;

static void *fn(const char *name)
{
    void *f = dlsym(lib, name);
    if (!f) app_fail("dlsym", name, 0);
    return f;
}

#define CALL(name, args) ((__typeof__(&name))fn(#name)) args

static void nvrtc(const char *path)
{
    static const char src[] =
        "extern \"C\" __global__ void dl(float *x) { x[threadIdx.x] += 1.0f; }\n";
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) app_fail("dlopen", dlerror(), 0);
    nvrtcProgram prog;
    const char *options[] = {"--gpu-architecture=compute_75"};
    nvrtcResult r = CALL(nvrtcCreateProgram, (&prog, src, "dl.cu", 0, NULL, NULL));
    if (r == NVRTC_SUCCESS) r = CALL(nvrtcCompileProgram, (prog, 1, options));
    if (r != NVRTC_SUCCESS) app_fail("NVRTC", "nvrtcResult", (int)r);
    expect_compile("nvrtcCompileProgram", "dl.cu", true, strlen(src), 0);
    expect_compile_program("nvrtcCompileProgram", "dl.cu", true);
    CALL(nvrtcDestroyProgram, (&prog));
    expect_api("nvrtcCreateProgram", 1);
}

/* NVVM IR (typed pointers, as libNVVM's LLVM 7 reads them): a kernel. */
static const char scale_ir[] =
    "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-"
    "i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64\"\n"
    "target triple = \"nvptx64-nvidia-cuda\"\n\n"
    "define void @scale(float* %x) {\nentry:\n"
    "  %v = load float, float* %x\n  %r = fmul float %v, 2.0\n"
    "  store float %r, float* %x\n  ret void\n}\n\n"
    "!nvvm.annotations = !{!0}\n!0 = !{void (float*)* @scale, !\"kernel\", i32 1}\n"
    "!nvvmir.version = !{!1}\n!1 = !{i32 2, i32 0}\n";

static void nvvm(const char *path, const char *libdevice_path)
{
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) app_fail("dlopen", dlerror(), 0);
    size_t libdevice_size;
    char *libdevice = read_whole_file(libdevice_path, &libdevice_size);
    const char *options[] = {"-arch=compute_75"};
    nvvmProgram prog;
    nvvmResult r = CALL(nvvmCreateProgram, (&prog));
    if (r == NVVM_SUCCESS)
        r = CALL(nvvmAddModuleToProgram, (prog, scale_ir, strlen(scale_ir), "scale.ll"));
    if (r == NVVM_SUCCESS)
        r = CALL(nvvmLazyAddModuleToProgram, (prog, libdevice, libdevice_size, "libdevice.10.bc"));
    if (r == NVVM_SUCCESS) r = CALL(nvvmVerifyProgram, (prog, 1, options));
    if (r == NVVM_SUCCESS) r = CALL(nvvmCompileProgram, (prog, 1, options));
    if (r != NVVM_SUCCESS) app_fail("NVVM", "nvvmResult", (int)r);
    size_t ptx_size = 0;
    CALL(nvvmGetCompiledResultSize, (prog, &ptx_size));
    if (ptx_size < 2) app_wrong("NVVM compiled nothing");
    unsigned long long inputs = strlen(scale_ir) + libdevice_size;
    expect_compile("nvvmVerifyProgram", "scale.ll", true, inputs, 0);
    expect_compile_program("nvvmVerifyProgram", "scale.ll", true);
    expect_compile("nvvmCompileProgram", "scale.ll", true, inputs, 0);
    CALL(nvvmDestroyProgram, (&prog));
    free(libdevice);

    static const char not_ir[] = "this is not NVVM IR\n";
    r = CALL(nvvmCreateProgram, (&prog));
    if (r == NVVM_SUCCESS)
        r = CALL(nvvmAddModuleToProgram, (prog, not_ir, strlen(not_ir), "bad.ll"));
    if (r != NVVM_SUCCESS) app_fail("NVVM", "nvvmResult", (int)r);
    r = CALL(nvvmVerifyProgram, (prog, 1, options));
    if (r == NVVM_SUCCESS) app_wrong("a module that is not NVVM IR verified");
    expect_compile("nvvmVerifyProgram", "bad.ll", false, strlen(not_ir), 0);
    expect_compile_program("nvvmVerifyProgram", "bad.ll", false);
    expect_api_error("nvvmVerifyProgram", CALL(nvvmGetErrorString, (r)));
    CALL(nvvmDestroyProgram, (&prog));
}

int main(int argc, char **argv)
{
    app_program = "compile_dlopen";
    if (argc != 4) {
        fprintf(stderr, "usage: compile_dlopen LIBNVRTC LIBNVVM LIBDEVICE_BC\n");
        return APP_EXIT_USAGE;
    }
    nvrtc(argv[1]);
    nvvm(argv[2], argv[3]);
    if (expect_write() != 0) app_wrong("cannot write GT_EXPECT");
    return 0;
}
