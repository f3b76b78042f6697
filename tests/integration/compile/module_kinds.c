/* Real nvcc output loaded through every module API: each load is a module
 * row of the kind the file was built as, with the file's size (expect.h).
 * The device is compute capability 9.0, so a fat binary whose only code
 * for it is PTX (PTX alone, or SASS for 7.5 beside it) is JIT-compiled at
 * load: `ptx`. One with sm_90 SASS is `fatbin`.
 *
 *   cuModuleLoad            PTX, cubin, fat binary files
 *   cuModuleLoadData        PTX, cubin, each fat binary, nvcc's wrapper
 *   cuModuleLoadDataEx      PTX with a JIT option
 *   cuModuleLoadFatBinary   a fat binary, a wrapper around the PTX-only one
 *   cuLibraryLoadData       cubin, the fat binary with SASS for 7.5
 *   cuLibraryLoadFromFile   fat binary and PTX files
 *   cuLinkComplete          a link of PTX (JIT: `ptx`), one of a cubin file
 *   cudaLibraryLoadData     one row, the runtime's (not the driver's under it)
 *
 * Usage: module_kinds PTX CUBIN FATBIN_SASS FATBIN_PTX FATBIN_SASS75 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_util.h"
#include "test_support.h"
#include "expect.h"

typedef struct image {
    const char *path;
    char *data; /* NUL-terminated */
    size_t size;
} image;

/* nvcc's registration wrapper (fatbinary_section.h's __fatBinC_Wrapper_t). */
typedef struct wrapper {
    int magic, version;
    const unsigned long long *data;
    void *filename_or_fatbins;
} wrapper;

static image read_image(const char *path)
{
    image im = {path, NULL, 0};
    im.data = read_whole_file(path, &im.size);
    return im;
}

static void module_loaded(CUmodule m, const char *api, const char *kind, size_t bytes)
{
    expect_module(api, kind, bytes);
    app_check(cuModuleUnload(m), "cuModuleUnload");
}

static void library_loaded(CUlibrary l, const char *api, const char *kind, size_t bytes)
{
    expect_module(api, kind, bytes);
    app_check(cuLibraryUnload(l), "cuLibraryUnload");
}

static void modules(const image *ptx, const image *cubin, const image *sass, const image *ptxfat,
                    const image *sass75)
{
    CUmodule m;
    app_check(cuModuleLoad(&m, ptx->path), "cuModuleLoad ptx");
    module_loaded(m, "cuModuleLoad", "ptx", ptx->size);
    app_check(cuModuleLoad(&m, cubin->path), "cuModuleLoad cubin");
    module_loaded(m, "cuModuleLoad", "cubin", cubin->size);
    app_check(cuModuleLoad(&m, sass->path), "cuModuleLoad fatbin");
    module_loaded(m, "cuModuleLoad", "fatbin", sass->size);

    const struct {
        const image *im;
        const char *kind;
    } data[] = {{ptx, "ptx"}, {cubin, "cubin"}, {sass, "fatbin"}, {ptxfat, "ptx"}, {sass75, "ptx"}};
    for (size_t i = 0; i < sizeof data / sizeof data[0]; i++) {
        app_check(cuModuleLoadData(&m, data[i].im->data), data[i].im->path);
        module_loaded(m, "cuModuleLoadData", data[i].kind, data[i].im->size);
    }
    wrapper w = {0x466243B1, 1, (const unsigned long long *)sass->data, NULL};
    app_check(cuModuleLoadData(&m, &w), "cuModuleLoadData wrapper");
    module_loaded(m, "cuModuleLoadData", "fatbin", sass->size);

    CUjit_option option = CU_JIT_OPTIMIZATION_LEVEL;
    void *level = (void *)(uintptr_t)3;
    app_check(cuModuleLoadDataEx(&m, ptx->data, 1, &option, &level), "cuModuleLoadDataEx");
    module_loaded(m, "cuModuleLoadDataEx", "ptx", ptx->size);

    app_check(cuModuleLoadFatBinary(&m, sass->data), "cuModuleLoadFatBinary");
    module_loaded(m, "cuModuleLoadFatBinary", "fatbin", sass->size);
    wrapper pw = {0x466243B1, 1, (const unsigned long long *)ptxfat->data, NULL};
    app_check(cuModuleLoadFatBinary(&m, &pw), "cuModuleLoadFatBinary wrapper");
    module_loaded(m, "cuModuleLoadFatBinary", "ptx", ptxfat->size);
}

static void libraries(const image *ptx, const image *cubin, const image *sass, const image *sass75)
{
    CUlibrary l;
    app_check(cuLibraryLoadData(&l, cubin->data, NULL, NULL, 0, NULL, NULL, 0), "cuLibraryLoadData");
    library_loaded(l, "cuLibraryLoadData", "cubin", cubin->size);
    app_check(cuLibraryLoadData(&l, sass75->data, NULL, NULL, 0, NULL, NULL, 0),
             "cuLibraryLoadData");
    library_loaded(l, "cuLibraryLoadData", "ptx", sass75->size);
    app_check(cuLibraryLoadFromFile(&l, sass->path, NULL, NULL, 0, NULL, NULL, 0),
             "cuLibraryLoadFromFile");
    library_loaded(l, "cuLibraryLoadFromFile", "fatbin", sass->size);
    app_check(cuLibraryLoadFromFile(&l, ptx->path, NULL, NULL, 0, NULL, NULL, 0),
             "cuLibraryLoadFromFile");
    library_loaded(l, "cuLibraryLoadFromFile", "ptx", ptx->size);

    cudaLibrary_t rl;
    cudaError_t r = cudaLibraryLoadData(&rl, sass->data, NULL, NULL, 0, NULL, NULL, 0);
    if (r != cudaSuccess) app_fail("cudaLibraryLoadData", cudaGetErrorName(r), (int)r);
    expect_module("cudaLibraryLoadData", "fatbin", sass->size);
    r = cudaLibraryUnload(rl);
    if (r != cudaSuccess) app_fail("cudaLibraryUnload", cudaGetErrorName(r), (int)r);
    expect_api("cuLibraryLoadData", 2); /* the runtime's load is its own row only */
}

static void links(const image *ptx, const image *cubin)
{
    CUlinkState link;
    void *out;
    size_t out_size;
    CUmodule m;
    app_check(cuLinkCreate(0, NULL, NULL, &link), "cuLinkCreate");
    app_check(
        cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx->data, ptx->size + 1, "kinds.ptx", 0, NULL, NULL),
        "cuLinkAddData");
    app_check(cuLinkComplete(link, &out, &out_size), "cuLinkComplete");
    expect_module("cuLinkComplete", "ptx", ptx->size + 1);
    app_check(cuModuleLoadData(&m, out), "cuModuleLoadData linked");
    module_loaded(m, "cuModuleLoadData", "cubin", out_size);
    app_check(cuLinkDestroy(link), "cuLinkDestroy");

    app_check(cuLinkCreate(0, NULL, NULL, &link), "cuLinkCreate");
    app_check(cuLinkAddFile(link, CU_JIT_INPUT_CUBIN, cubin->path, 0, NULL, NULL), "cuLinkAddFile");
    app_check(cuLinkComplete(link, &out, &out_size), "cuLinkComplete");
    expect_module("cuLinkComplete", "cubin", cubin->size);
    app_check(cuLinkDestroy(link), "cuLinkDestroy");
}

int main(int argc, char **argv)
{
    app_program = "module_kinds";
    if (argc != 6) {
        fprintf(stderr, "usage: module_kinds PTX CUBIN FATBIN_SASS FATBIN_PTX FATBIN_SASS75\n");
        return APP_EXIT_USAGE;
    }
    image ptx = read_image(argv[1]), cubin = read_image(argv[2]), sass = read_image(argv[3]);
    image ptxfat = read_image(argv[4]), sass75 = read_image(argv[5]);
    context_on_device0();
    modules(&ptx, &cubin, &sass, &ptxfat, &sass75);
    libraries(&ptx, &cubin, &sass, &sass75);
    links(&ptx, &cubin);
    if (expect_write() != 0) app_wrong("cannot write GT_EXPECT");
    return 0;
}
