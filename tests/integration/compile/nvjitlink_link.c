/* nvJitLink for real (it runs on the CPU), linked as programs link it
 * (the CUDA 13 header's inline functions call the versioned exports).
 *
 *   PTX from a file, linked to a cubin for sm_90, which the driver loads
 *   PTX from memory, the same
 *   PTX that calls a function nobody defines: nvJitLinkComplete fails,
 *   recorded with ok=false and its status by name
 *
 * Usage: nvjitlink_link PTX_FILE */
#include <cuda.h>
#include <nvJitLink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"
#include "test_support.h"
#include "expect.h"

static const char *link_options[] = {"-arch=sm_90"};

static void check_link(nvJitLinkResult r, const char *what)
{
    if (r != NVJITLINK_SUCCESS) app_fail(what, "nvJitLinkResult", (int)r);
}

/* Completes the link, and loads its cubin as a module. */
static void complete_and_load(nvJitLinkHandle link, const char *name, size_t input_bytes)
{
    check_link(nvJitLinkComplete(link), "nvJitLinkComplete");
    expect_compile("nvJitLinkComplete", name, true, input_bytes, 0);
    expect_compile_program("nvJitLinkComplete", name, true);
    size_t size;
    check_link(nvJitLinkGetLinkedCubinSize(link, &size), "nvJitLinkGetLinkedCubinSize");
    void *cubin = malloc(size);
    if (!cubin) app_wrong("out of memory");
    check_link(nvJitLinkGetLinkedCubin(link, cubin), "nvJitLinkGetLinkedCubin");
    CUmodule module;
    app_check(cuModuleLoadData(&module, cubin), "cuModuleLoadData");
    expect_module("cuModuleLoadData", "cubin", size);
    app_check(cuModuleUnload(module), "cuModuleUnload");
    free(cubin);
    check_link(nvJitLinkDestroy(&link), "nvJitLinkDestroy");
}

static void failing_link(void)
{
    static const char ptx[] =
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        ".extern .func missing_fn();\n"
        ".visible .entry calls_missing()\n{\n    call missing_fn;\n    ret;\n}\n";
    nvJitLinkHandle link;
    check_link(nvJitLinkCreate(&link, 1, link_options), "nvJitLinkCreate");
    check_link(nvJitLinkAddData(link, NVJITLINK_INPUT_PTX, ptx, sizeof ptx, "calls_missing.ptx"),
               "nvJitLinkAddData");
    nvJitLinkResult r = nvJitLinkComplete(link);
    /* The status's name as nvJitLink.h spells it. */
    const char *name = r == NVJITLINK_ERROR_INTERNAL   ? "NVJITLINK_ERROR_INTERNAL"
                       : r == NVJITLINK_ERROR_FINALIZE ? "NVJITLINK_ERROR_FINALIZE"
                                                       : NULL;
    if (!name) app_fail("nvJitLinkComplete of an undefined reference", "nvJitLinkResult", (int)r);
    expect_compile("nvJitLinkComplete", "calls_missing.ptx", false, sizeof ptx, 0);
    expect_compile_program("nvJitLinkComplete", "calls_missing.ptx", false);
    expect_api_error("nvJitLinkComplete", name);
    check_link(nvJitLinkDestroy(&link), "nvJitLinkDestroy");
}

int main(int argc, char **argv)
{
    app_program = "nvjitlink_link";
    if (argc != 2) {
        fprintf(stderr, "usage: nvjitlink_link PTX_FILE\n");
        return APP_EXIT_USAGE;
    }
    context_on_device0();

    size_t ptx_size;
    char *ptx = read_whole_file(argv[1], &ptx_size);
    nvJitLinkHandle link;
    check_link(nvJitLinkCreate(&link, 1, link_options), "nvJitLinkCreate");
    check_link(nvJitLinkAddFile(link, NVJITLINK_INPUT_PTX, argv[1]), "nvJitLinkAddFile");
    complete_and_load(link, argv[1], ptx_size);

    check_link(nvJitLinkCreate(&link, 1, link_options), "nvJitLinkCreate");
    check_link(nvJitLinkAddData(link, NVJITLINK_INPUT_PTX, ptx, ptx_size + 1, "in_memory.ptx"),
               "nvJitLinkAddData");
    complete_and_load(link, "in_memory.ptx", ptx_size + 1);

    failing_link();
    expect_api("nvJitLinkCreate", 3);
    expect_api("nvJitLinkDestroy", 3);
    free(ptx);
    if (expect_write() != 0) app_wrong("cannot write GT_EXPECT");
    return 0;
}
