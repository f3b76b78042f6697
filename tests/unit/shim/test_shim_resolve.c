/* How the shim hands out its wrappers, seen from a program: runs with
 * libgputrace.so preloaded and the emulated libcuda.so.1 on the library
 * path (tests/unit/shim.cmake), and reaches the driver only through
 * dlopen/dlsym and cuGetProcAddress, as the CUDA runtime does.
 *
 *  - cuGetProcAddress(_v2), for every lookup the CUDA 13 runtime makes:
 *    the return code and status are the driver's (its own log says what it
 *    answered), and the function handed out is exactly the variant the
 *    driver picked: the shim's wrapper of that name when the shim wraps
 *    it, else the driver's own function;
 *  - requests for cuGetProcAddress itself return the shim's;
 *  - dlsym(libcuda, name) of every exported variant the shim wraps is the
 *    shim's wrapper of that name; errno and dlerror() are as without it. */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <cuda.h>
#include <cudaTypedefs.h>

static void *libcuda, *shim;
static PFN_cuGetProcAddress_v12000 get_proc;
static char emu_log[] = "/tmp/gt-resolve-XXXXXX";
static FILE *emu_log_file;

/* The exported symbol `fn` is, and whether it lies in the shim. */
static const char *symbol_of(void *fn, int *in_shim)
{
    Dl_info info;
    if (!fn || !dladdr(fn, &info) || !info.dli_sname) return NULL;
    *in_shim = strstr(info.dli_fname, "libgputrace") != NULL;
    return info.dli_sname;
}

/* The emulated driver's answer to the last request: the text after "-> ". */
static void last_answer(char *answer, size_t size)
{
    char line[512] = "";
    answer[0] = '\0';
    while (fgets(line, sizeof line, emu_log_file)) {
        char *arrow = strstr(line, " -> ");
        if (!arrow) continue;
        snprintf(answer, size, "%s", arrow + 4);
        answer[strcspn(answer, "\n")] = '\0';
    }
    clearerr(emu_log_file);
}

static int setup(void **state)
{
    (void)state;
    int fd = mkstemp(emu_log);
    if (fd < 0) return -1;
    close(fd);
    /* Read by the emulated driver once, at its first call. */
    setenv("GPUTRACE_EMU_LOG", emu_log, 1);
    emu_log_file = fopen(emu_log, "r");
    libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    shim = dlopen("libgputrace.so", RTLD_NOW | RTLD_NOLOAD);
    if (!libcuda || !shim || !emu_log_file) return -1;
    get_proc = (PFN_cuGetProcAddress_v12000)dlsym(libcuda, "cuGetProcAddress_v2");
    PFN_cuInit_v2000 init = (PFN_cuInit_v2000)dlsym(libcuda, "cuInit");
    return get_proc && init && init(0) == CUDA_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    fclose(emu_log_file);
    unlink(emu_log);
    return 0;
}

/* One lookup checked against the driver's own answer; 1 when it handed
 * out one of the shim's wrappers. */
static int check_lookup(const char *symbol, int version, cuuint64_t flags)
{
    void *fn = (void *)1;
    CUdriverProcAddressQueryResult status = (CUdriverProcAddressQueryResult)-1;
    CUresult r = get_proc(symbol, &fn, version, flags, &status);
    char answer[256];
    last_answer(answer, sizeof answer);
    if (!strcmp(answer, "INVALID_VALUE")) {
        assert_int_equal(r, CUDA_ERROR_INVALID_VALUE);
        return 0;
    }
    assert_int_equal(r, CUDA_SUCCESS);
    if (!strcmp(answer, "NOT_FOUND") || !strcmp(answer, "VERSION_NOT_SUFFICIENT")) {
        assert_int_equal(status, !strcmp(answer, "NOT_FOUND")
                                     ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
                                     : CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
        assert_null(fn);
        return 0;
    }
    assert_int_equal(status, CU_GET_PROC_ADDRESS_SUCCESS);
    int in_shim = 0;
    const char *name = symbol_of(fn, &in_shim);
    if (!name || strcmp(name, answer) != 0)
        fail_msg("%s %d %llu: handed out %s, the driver picked %s", symbol, version,
                 (unsigned long long)flags, name ? name : "?", answer);
    /* The shim's wrapper exactly when the shim exports that variant. */
    void *wrapper = dlsym(shim, answer);
    if (wrapper && fn != wrapper)
        fail_msg("%s %d %llu: %s is wrapped, but the driver's was handed out", symbol, version,
                 (unsigned long long)flags, answer);
    if (!wrapper) assert_false(in_shim);
    return in_shim;
}

static void test_every_runtime_lookup(void **state)
{
    (void)state;
    FILE *list = fopen(GT_CUDART_LOOKUPS, "r");
    assert_non_null(list);
    char line[256], symbol[128];
    int version, n = 0, hooked = 0;
    unsigned long long flags;
    while (fgets(line, sizeof line, list)) {
        if (line[0] == '#' || sscanf(line, "%127s %d %llu", symbol, &version, &flags) != 3)
            continue;
        hooked += check_lookup(symbol, version, flags);
        n++;
    }
    fclose(list);
    assert_true(n >= 400);
    /* Launches, copies, memsets, syncs at least: the lists cannot both be empty. */
    assert_true(hooked >= 60);
}

static void test_variants_by_version_and_flags(void **state)
{
    (void)state;
    check_lookup("cuMemcpyHtoD", 2000, 0);
    check_lookup("cuMemcpyHtoD", 3020, 0);
    check_lookup("cuMemcpyHtoD", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    check_lookup("cuLaunchKernel", 4000, 0);
    check_lookup("cuLaunchKernel", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    check_lookup("cuCtxSynchronize", 12000, 0);
    check_lookup("cuCtxSynchronize", 13000, 0);
    check_lookup("cuLaunchKernelEx", 11000, 0);
    check_lookup("cuNoSuchFunction", 13000, 0);
    check_lookup(NULL, 13000, 0);
    check_lookup("cuLaunchKernel", 4000, 0x100);
}

static void test_get_proc_address_itself(void **state)
{
    (void)state;
    void *fn = NULL;
    CUdriverProcAddressQueryResult status;
    assert_int_equal(get_proc("cuGetProcAddress", &fn, 12000, 0, &status), CUDA_SUCCESS);
    assert_ptr_equal(fn, dlsym(shim, "cuGetProcAddress_v2"));
    assert_int_equal(get_proc("cuGetProcAddress", &fn, 11030, 0, &status), CUDA_SUCCESS);
    assert_ptr_equal(fn, dlsym(shim, "cuGetProcAddress"));
    /* The 4-argument entry point answers the same. */
    PFN_cuGetProcAddress_v11030 old = (PFN_cuGetProcAddress_v11030)fn;
    void *launch = NULL;
    assert_int_equal(
        old("cuLaunchKernel", &launch, 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
        CUDA_SUCCESS);
    assert_ptr_equal(launch, dlsym(shim, "cuLaunchKernel_ptsz"));
}

static void test_dlsym_of_every_wrapped_variant(void **state)
{
    (void)state;
    const char *names[] = {
        "cuMemcpyHtoD",  "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds",     "cuMemsetD2D32Async_ptsz",
        "cuGraphLaunch", "cuCtxDestroy_v2", "cuMemcpy3DPeerAsync_ptsz", "cuModuleGetFunction"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *fn = dlsym(libcuda, names[i]);
        int in_shim = 0;
        const char *name = symbol_of(fn, &in_shim);
        assert_non_null(name);
        assert_string_equal(name, names[i]);
        assert_true(in_shim);
    }
    int in_shim = 1;
    assert_string_equal(symbol_of(dlsym(libcuda, "cuDeviceGet"), &in_shim), "cuDeviceGet");
    assert_false(in_shim);
}

static void test_errno_and_dlerror_kept(void **state)
{
    (void)state;
    errno = 12345;
    assert_non_null(dlsym(libcuda, "cuLaunchKernel"));
    assert_int_equal(errno, 12345);
    assert_null(dlerror());
    assert_null(dlsym(libcuda, "cuNoSuchFunction"));
    assert_non_null(dlerror());
    /* A wrapped call that fails (no context is current) keeps the
     * program's errno, and its result is the driver's. */
    PFN_cuMemcpyHtoD_v3020 copy = (PFN_cuMemcpyHtoD_v3020)dlsym(libcuda, "cuMemcpyHtoD_v2");
    char byte = 0;
    errno = 777;
    assert_int_equal(copy(0, &byte, 1), CUDA_ERROR_INVALID_CONTEXT);
    assert_int_equal(errno, 777);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_runtime_lookup),
        cmocka_unit_test(test_variants_by_version_and_flags),
        cmocka_unit_test(test_get_proc_address_itself),
        cmocka_unit_test(test_dlsym_of_every_wrapped_variant),
        cmocka_unit_test(test_errno_and_dlerror_kept),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
