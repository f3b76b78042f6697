/* Modules, libraries and links with images nvcc made at build time from
 * kernels.cu and extra.cu (GTEMU_KERNELS_DIR): PTX, a cubin, fatbins with
 * each compression mode, a relocatable object. Kernels keep their mangled
 * names; globals have their sizes and initial values; durations match
 * demangled names (GPUTRACE_EMU_KERNEL_NS=busy=3000,ns::tmpl<double>=4000,
 * plain_kernel=5000,*=1000). */
#include "emu_test.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static const char *const entries[] = {"_Z4busyPfi", "_Z11uses_helperPf", "plain_kernel",
                                      "_ZN2ns4tmplIdEEvPT_"};
#define N_ENTRIES 4

static const char *const images[] = {"kernels.ptx",
                                     "kernels.cubin",
                                     "kernels.fatbin",
                                     "kernels_nocompress.fatbin",
                                     "kernels_size.fatbin",
                                     "kernels_speed.fatbin",
                                     "kernels_ptx_lz4.fatbin",
                                     "kernels_ptx_zstd.fatbin"};
#define N_IMAGES (sizeof images / sizeof images[0])

static char *path_of(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", GTEMU_KERNELS_DIR, name);
    return path;
}

static void *read_file(const char *name, size_t *size)
{
    FILE *f = fopen(path_of(name), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = calloc(1, (size_t)n + 1); /* PTX needs its terminator */
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

static void check_module(CUmodule mod, const char *image, unsigned expected_count)
{
    unsigned count = 0;
    ok_cu(cuModuleGetFunctionCount(&count, mod));
    if (count != expected_count) fail_msg("%s: %u functions", image, count);
    for (int i = 0; i < N_ENTRIES; i++) {
        CUfunction f;
        const char *name = NULL;
        if (cuModuleGetFunction(&f, mod, entries[i]) != CUDA_SUCCESS)
            fail_msg("%s: no %s", image, entries[i]);
        ok_cu(cuFuncGetName(&name, f));
        assert_string_equal(name, entries[i]);
        CUmodule owner;
        ok_cu(cuFuncGetModule(&owner, f));
        assert_ptr_equal(owner, mod);
    }
    CUfunction f;
    expect_cu(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, mod, "_Z6helperf")); /* not a kernel */
    CUdeviceptr counter, coef;
    size_t size = 0;
    int value = 0;
    float c[4];
    ok_cu(cuModuleGetGlobal(&counter, &size, mod, "counter"));
    assert_int_equal(size, sizeof(int));
    ok_cu(cuMemcpyDtoH(&value, counter, sizeof value));
    if (value != 5) fail_msg("%s: counter is %d", image, value);
    ok_cu(cuModuleGetGlobal(&coef, &size, mod, "coef"));
    assert_int_equal(size, sizeof c);
    ok_cu(cuMemcpyDtoH(c, coef, sizeof c));
    assert_true(c[0] == 1.0f && c[3] == 4.0f);
    expect_cu(CUDA_ERROR_NOT_FOUND, cuModuleGetGlobal(&coef, &size, mod, "nothing"));
    CUdeviceptr managed;
    int is_managed = 0;
    ok_cu(cuModuleGetGlobal(&managed, &size, mod, "managed_total"));
    ok_cu(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed));
    if (!is_managed || *(int *)(uintptr_t)managed != 9) /* host-accessible */
        fail_msg("%s: managed_total is not managed memory holding 9", image);
    ok_cu(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, counter));
    assert_int_equal(is_managed, 0);
}

static void test_every_image_format(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_IMAGES; i++) {
        CUmodule from_file, from_memory;
        if (cuModuleLoad(&from_file, path_of(images[i])) != CUDA_SUCCESS)
            fail_msg("cuModuleLoad(%s) failed", images[i]);
        check_module(from_file, images[i], N_ENTRIES);
        size_t size;
        void *data = read_file(images[i], &size);
        ok_cu(cuModuleLoadDataEx(&from_memory, data, 0, NULL, NULL));
        check_module(from_memory, images[i], N_ENTRIES);
        free(data);
        ok_cu(cuModuleUnload(from_file));
        ok_cu(cuModuleUnload(from_memory));
        expect_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleUnload(from_memory));
    }
}

/* Loads are counted by API and by the image's own format; failed ones are
 * not. */
static void test_load_counts(void **state)
{
    (void)state;
    gtemu_reset();
    size_t size;
    void *ptx = read_file("kernels.ptx", &size);
    void *cubin = read_file("kernels.cubin", &size);
    void *fatbin = read_file("kernels.fatbin", &size);
    CUmodule mods[4];
    ok_cu(cuModuleLoadData(&mods[0], ptx));
    ok_cu(cuModuleLoadData(&mods[1], cubin));
    ok_cu(cuModuleLoadFatBinary(&mods[2], fatbin));
    ok_cu(cuModuleLoad(&mods[3], path_of("kernels.ptx")));
    expect_cu(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&mods[0], "not an image"));
    CUlibrary libs[2];
    ok_cu(cuLibraryLoadData(&libs[0], cubin, NULL, NULL, 0, NULL, NULL, 0));
    ok_cu(cuLibraryLoadFromFile(&libs[1], path_of("kernels.fatbin"), NULL, NULL, 0, NULL, NULL, 0));
    assert_int_equal(gtemu_loads("cuModuleLoadData", "ptx"), 1);
    assert_int_equal(gtemu_loads("cuModuleLoadData", "cubin"), 1);
    assert_int_equal(gtemu_loads("cuModuleLoadFatBinary", "fatbin"), 1);
    assert_int_equal(gtemu_loads("cuModuleLoad", "ptx"), 1);
    assert_int_equal(gtemu_loads("cuLibraryLoadData", "cubin"), 1);
    assert_int_equal(gtemu_loads("cuLibraryLoadFromFile", "fatbin"), 1);
    assert_int_equal(gtemu_loads("cuModuleLoadDataEx", "ptx"), 0);
    assert_int_equal(gtemu_loads("cuLinkComplete", "cubin"), 0); /* not a loader */
    for (int i = 0; i < 4; i++)
        ok_cu(cuModuleUnload(mods[i]));
    for (int i = 0; i < 2; i++)
        ok_cu(cuLibraryUnload(libs[i]));
    free(ptx);
    free(cubin);
    free(fatbin);
}

static void test_load_errors(void **state)
{
    (void)state;
    CUmodule mod;
    expect_cu(CUDA_ERROR_FILE_NOT_FOUND, cuModuleLoad(&mod, path_of("missing.cubin")));
    expect_cu(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&mod, "not an image"));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuModuleLoadData(&mod, NULL));
    ok_cu(cuModuleLoad(&mod, path_of("kernels.cubin")));
    CUfunction f;
    ok_cu(cuModuleGetFunction(&f, mod, "plain_kernel"));
    ok_cu(cuModuleUnload(mod));
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
}

/* What __cudaRegisterFatBinary receives: a wrapper around the fatbin. */
struct fatbin_wrapper {
    int magic;
    int version;
    const void *data;
    void *unused;
};

static void test_fatbin_wrapper(void **state)
{
    (void)state;
    size_t size;
    void *fatbin = read_file("kernels.fatbin", &size);
    struct fatbin_wrapper w = {0x466243b1, 1, fatbin, NULL};
    CUmodule mod;
    ok_cu(cuModuleLoadFatBinary(&mod, &w));
    check_module(mod, "wrapped kernels.fatbin", N_ENTRIES);
    ok_cu(cuModuleUnload(mod));
    free(fatbin);
}

static double kernel_time_ns(CUfunction f)
{
    CUevent a, b;
    ok_cu(cuEventCreate(&a, 0));
    ok_cu(cuEventCreate(&b, 0));
    ok_cu(cuEventRecord(a, NULL));
    ok_cu(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    ok_cu(cuEventRecord(b, NULL));
    ok_cu(cuEventSynchronize(b));
    double ns = elapsed_ns(a, b);
    ok_cu(cuEventDestroy(a));
    ok_cu(cuEventDestroy(b));
    return ns;
}

/* Libraries hand out context-independent kernels; a CUkernel launches like
 * a CUfunction. Durations follow the demangled names. */
static void test_library_and_durations(void **state)
{
    (void)state;
    assert_non_null(dlsym(RTLD_DEFAULT, "__cxa_demangle")); /* linked with libstdc++ */
    CUlibrary lib;
    ok_cu(cuLibraryLoadFromFile(&lib, path_of("kernels.fatbin"), NULL, NULL, 0, NULL, NULL, 0));
    unsigned count = 0;
    ok_cu(cuLibraryGetKernelCount(&count, lib));
    assert_int_equal(count, N_ENTRIES);
    CUkernel k;
    const char *name;
    ok_cu(cuLibraryGetKernel(&k, lib, "_ZN2ns4tmplIdEEvPT_"));
    ok_cu(cuKernelGetName(&name, k));
    assert_string_equal(name, "_ZN2ns4tmplIdEEvPT_");
    expect_cu(CUDA_ERROR_NOT_FOUND, cuLibraryGetKernel(&k, lib, "tmpl"));
    CUfunction f;
    ok_cu(cuKernelGetFunction(&f, k));
    ok_cu(cuFuncGetName(&name, f));
    assert_string_equal(name, "_ZN2ns4tmplIdEEvPT_");
    CUmodule mod;
    ok_cu(cuLibraryGetModule(&mod, lib));
    CUfunction same;
    ok_cu(cuModuleGetFunction(&same, mod, "_ZN2ns4tmplIdEEvPT_"));
    assert_ptr_equal(same, f);
    CUdeviceptr counter;
    size_t size;
    ok_cu(cuLibraryGetGlobal(&counter, &size, lib, "counter"));
    assert_int_equal(size, 4);
    CUdeviceptr managed, again;
    ok_cu(cuLibraryGetManaged(&managed, &size, lib, "managed_total"));
    ok_cu(cuLibraryGetManaged(&again, NULL, lib, "managed_total"));
    assert_int_equal(managed, again);
    assert_int_equal(*(int *)(uintptr_t)managed, 9);
    expect_cu(CUDA_ERROR_NOT_FOUND, cuLibraryGetManaged(&managed, &size, lib, "nothing"));

    CUkernel plain, busy, other;
    ok_cu(cuLibraryGetKernel(&plain, lib, "plain_kernel"));
    ok_cu(cuLibraryGetKernel(&busy, lib, "_Z4busyPfi"));
    ok_cu(cuLibraryGetKernel(&other, lib, "_Z11uses_helperPf"));
    struct {
        CUkernel kernel;
        double ns;
    } expected[] = {{k, 4000}, {plain, 5000}, {busy, 3000}, {other, 1000}};
    for (int i = 0; i < 4; i++) {
        double ns = kernel_time_ns((CUfunction)expected[i].kernel);
        if (ns < expected[i].ns - 1 || ns > expected[i].ns + 1)
            fail_msg("kernel %d took %.1f ns, expected %.0f", i, ns, expected[i].ns);
    }
    assert_int_equal(gtemu_kernel_ns("_ZN2ns4tmplIdEEvPT_"), 4000);
    /* ABI tags are no part of the name that is matched (Numba tags every
     * kernel with a hash of its compilation). */
    assert_int_equal(gtemu_kernel_ns("_ZN2ns4tmplB2v1IdEEvPT_"), 4000);
    assert_int_equal(gtemu_kernel_ns("_Z4busyB2v1B5cw51xPfi"), 3000);

    ok_cu(cuLibraryUnload(lib));
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuKernelGetName(&name, k));
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuLibraryUnload(lib));
    size_t n;
    void *data = read_file("kernels.ptx", &n);
    ok_cu(cuLibraryLoadData(&lib, data, NULL, NULL, 0, NULL, NULL, 0));
    ok_cu(cuLibraryGetKernel(&k, lib, "plain_kernel"));
    ok_cu(cuLibraryUnload(lib));
    free(data);
}

/* A link of PTX, a relocatable object and a cubin gives an image with the
 * kernels of all of them. */
static void test_link(void **state)
{
    (void)state;
    CUlinkState link;
    ok_cu(cuLinkCreate(0, NULL, NULL, &link));
    void *out;
    size_t out_size;
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuLinkComplete(link, &out, &out_size)); /* no input */
    ok_cu(cuLinkAddFile(link, CU_JIT_INPUT_PTX, path_of("kernels.ptx"), 0, NULL, NULL));
    ok_cu(cuLinkAddFile(link, CU_JIT_INPUT_OBJECT, path_of("extra.o"), 0, NULL, NULL));
    size_t size;
    void *cubin = read_file("kernels.cubin", &size);
    ok_cu(cuLinkAddData(link, CU_JIT_INPUT_CUBIN, cubin, size, "kernels", 0, NULL, NULL));
    expect_cu(CUDA_ERROR_INVALID_IMAGE,
              cuLinkAddData(link, CU_JIT_INPUT_CUBIN, "junk", 5, "junk", 0, NULL, NULL));
    expect_cu(CUDA_ERROR_FILE_NOT_FOUND,
              cuLinkAddFile(link, CU_JIT_INPUT_PTX, path_of("missing.ptx"), 0, NULL, NULL));
    ok_cu(cuLinkComplete(link, &out, &out_size));
    assert_true(out_size > 64);
    CUmodule mod;
    ok_cu(cuModuleLoadData(&mod, out));
    check_module(mod, "linked image", N_ENTRIES + 1);
    CUfunction f;
    ok_cu(cuModuleGetFunction(&f, mod, "extra_kernel"));
    ok_cu(cuLinkDestroy(link));
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuLinkDestroy(link));
    ok_cu(cuModuleUnload(mod));
    free(cubin);
}

/* PTX handed to cuLinkAddData is read up to its NUL, whatever the size
 * says of it: with the NUL, without it (Numba's len(ptx)), or a buffer
 * longer than the text. A size of 0 and text that is no PTX are refused. */
static void test_link_ptx_sizes(void **state)
{
    (void)state;
    size_t len;
    char *ptx = read_file("kernels.ptx", &len);
    assert_int_equal(strlen(ptx), len);
    char *padded = calloc(1, len + 64);
    assert_non_null(padded);
    memcpy(padded, ptx, len);
    struct {
        const char *data;
        size_t size;
    } inputs[] = {{ptx, len + 1}, {ptx, len}, {padded, len + 64}};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        CUlinkState link;
        ok_cu(cuLinkCreate(0, NULL, NULL, &link));
        ok_cu(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)inputs[i].data, inputs[i].size,
                            "kernels", 0, NULL, NULL));
        void *out;
        size_t out_size;
        ok_cu(cuLinkComplete(link, &out, &out_size));
        CUmodule mod;
        ok_cu(cuModuleLoadData(&mod, out));
        check_module(mod, "linked PTX", N_ENTRIES);
        ok_cu(cuModuleUnload(mod));
        ok_cu(cuLinkDestroy(link));
    }
    CUlinkState link;
    ok_cu(cuLinkCreate(0, NULL, NULL, &link));
    expect_cu(CUDA_ERROR_INVALID_VALUE,
              cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx, 0, "kernels", 0, NULL, NULL));
    char not_ptx[] = "// a comment, no directive";
    expect_cu(CUDA_ERROR_INVALID_IMAGE, cuLinkAddData(link, CU_JIT_INPUT_PTX, not_ptx,
                                                      strlen(not_ptx), "junk", 0, NULL, NULL));
    ok_cu(cuLinkDestroy(link));
    free(padded);
    free(ptx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_image_format),
        cmocka_unit_test(test_load_counts),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_fatbin_wrapper),
        cmocka_unit_test(test_library_and_durations),
        cmocka_unit_test(test_link),
        cmocka_unit_test(test_link_ptx_sizes),
    };
    return cmocka_run_group_tests(tests, setup_primary, teardown_primary);
}
