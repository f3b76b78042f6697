/* What a Numba program compiles, counted as it is: four NVVM programs,
 * each verified and then compiled, and their PTX linked by nvJitLink into
 * two cubins (two programs each), all through dlopen as Numba and
 * cuda-bindings reach them. The report's compile title must read
 * "4 programs, 4 compiles, 4 verifies, 2 links": a verify is no
 * compilation, and a program verified and compiled is one program.
 *
 * Usage: compile_counts LIBNVVM LIBNVJITLINK */
#define _GNU_SOURCE /* asprintf */
#include <dlfcn.h>
#include <nvJitLink.h>
#include <nvvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"
#include "expect.h"

#define PROGRAMS 4
#define PER_LINK 2

static void *open_lib(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) app_fail("dlopen", dlerror(), 0);
    return lib;
}

static void *fn(void *lib, const char *name)
{
    void *f = dlsym(lib, name);
    if (!f) app_fail("dlsym", name, 0);
    return f;
}

#define CALL(lib, name, args) ((__typeof__(&name))fn(lib, #name)) args

static void check_nvvm(nvvmResult r, const char *what)
{
    if (r != NVVM_SUCCESS) app_fail(what, "nvvmResult", (int)r);
}

static void check_link(nvJitLinkResult r, const char *what)
{
    if (r != NVJITLINK_SUCCESS) app_fail(what, "nvJitLinkResult", (int)r);
}

/* NVVM IR (typed pointers, as libNVVM's LLVM 7 reads them) of kernel k<i>. */
static char *kernel_ir(int i)
{
    char *ir = NULL;
    if (asprintf(&ir,
                 "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-"
                 "i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-"
                 "v128:128:128-n16:32:64\"\n"
                 "target triple = \"nvptx64-nvidia-cuda\"\n\n"
                 "define void @k%d(float* %%x) {\nentry:\n"
                 "  %%v = load float, float* %%x\n  %%r = fmul float %%v, 2.0\n"
                 "  store float %%r, float* %%x\n  ret void\n}\n\n"
                 "!nvvm.annotations = !{!0}\n!0 = !{void (float*)* @k%d, !\"kernel\", i32 1}\n"
                 "!nvvmir.version = !{!1}\n!1 = !{i32 2, i32 0}\n",
                 i, i) < 0)
        app_wrong("out of memory");
    return ir;
}

int main(int argc, char **argv)
{
    app_program = "compile_counts";
    if (argc != 3) {
        fprintf(stderr, "usage: compile_counts LIBNVVM LIBNVJITLINK\n");
        return APP_EXIT_USAGE;
    }
    void *nvvm = open_lib(argv[1]), *jitlink = open_lib(argv[2]);
    const char *options[] = {"-arch=compute_90"};
    char *ptx[PROGRAMS];
    size_t ptx_size[PROGRAMS];
    for (int i = 0; i < PROGRAMS; i++) {
        char *ir = kernel_ir(i), name[16];
        snprintf(name, sizeof name, "k%d.ll", i);
        nvvmProgram prog;
        check_nvvm(CALL(nvvm, nvvmCreateProgram, (&prog)), "nvvmCreateProgram");
        check_nvvm(CALL(nvvm, nvvmAddModuleToProgram, (prog, ir, strlen(ir), name)),
                   "nvvmAddModuleToProgram");
        check_nvvm(CALL(nvvm, nvvmVerifyProgram, (prog, 1, options)), "nvvmVerifyProgram");
        check_nvvm(CALL(nvvm, nvvmCompileProgram, (prog, 1, options)), "nvvmCompileProgram");
        expect_compile("nvvmVerifyProgram", name, true, strlen(ir), 0);
        expect_compile_program("nvvmVerifyProgram", name, true);
        expect_compile("nvvmCompileProgram", name, true, strlen(ir), 0);
        check_nvvm(CALL(nvvm, nvvmGetCompiledResultSize, (prog, &ptx_size[i])),
                   "nvvmGetCompiledResultSize");
        ptx[i] = malloc(ptx_size[i]);
        if (!ptx[i]) app_wrong("out of memory");
        check_nvvm(CALL(nvvm, nvvmGetCompiledResult, (prog, ptx[i])), "nvvmGetCompiledResult");
        check_nvvm(CALL(nvvm, nvvmDestroyProgram, (&prog)), "nvvmDestroyProgram");
        free(ir);
    }

    const char *link_options[] = {"-arch=sm_90"};
    for (int l = 0; l < PROGRAMS / PER_LINK; l++) {
        nvJitLinkHandle link;
        char first[16];
        size_t bytes = 0;
        check_link(CALL(jitlink, __nvJitLinkCreate_13_0, (&link, 1, link_options)),
                   "nvJitLinkCreate");
        for (int j = 0; j < PER_LINK; j++) {
            int i = l * PER_LINK + j;
            char name[16];
            snprintf(name, sizeof name, "k%d.ptx", i);
            if (j == 0) snprintf(first, sizeof first, "%s", name);
            check_link(CALL(jitlink, __nvJitLinkAddData_13_0,
                            (link, NVJITLINK_INPUT_PTX, ptx[i], ptx_size[i], name)),
                       "nvJitLinkAddData");
            bytes += ptx_size[i];
        }
        check_link(CALL(jitlink, __nvJitLinkComplete_13_0, (link)), "nvJitLinkComplete");
        expect_compile("nvJitLinkComplete", first, true, bytes, 0);
        expect_compile_program("nvJitLinkComplete", first, true);
        check_link(CALL(jitlink, __nvJitLinkDestroy_13_0, (&link)), "nvJitLinkDestroy");
    }
    for (int i = 0; i < PROGRAMS; i++)
        free(ptx[i]);
    if (expect_write() != 0) app_wrong("cannot write GT_EXPECT");
    return 0;
}
