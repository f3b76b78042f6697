/* cuGetProcAddress picks the variant the real driver would, for every
 * variant cudaTypedefs.h declares. The expected symbol names are derived
 * here from the typedef names alone (pfn_typedefs.h), with the naming rule
 * of the CUDA programming guide: the first version keeps the base name,
 * later ones are <base>_v2, _v3...; a per-thread variant carries the name
 * of the default variant it belongs to. */
#include "emu_test.h"

#include "pfn_typedefs.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define N_TYPEDEFS (sizeof pfn_typedefs / sizeof pfn_typedefs[0])

struct variant {
    const char *base;
    int version;
    bool ptds;
    char name[128];
};

static struct variant variants[N_TYPEDEFS];
static void *driver;

static int count_kind(const char *base, bool ptds, int below_version)
{
    int n = 0;
    for (size_t i = 0; i < N_TYPEDEFS; i++) {
        const struct pfn_typedef *t = &pfn_typedefs[i];
        if (!strcmp(t->base, base) && (t->suffix[0] != '\0') == ptds && t->version < below_version)
            n++;
    }
    return n;
}

static void name_variants(void)
{
    for (size_t i = 0; i < N_TYPEDEFS; i++) {
        const struct pfn_typedef *t = &pfn_typedefs[i];
        struct variant *v = &variants[i];
        v->base = t->base;
        v->version = t->version;
        v->ptds = t->suffix[0] != '\0';
        int rank = count_kind(t->base, v->ptds, t->version);
        if (v->ptds)
            rank += count_kind(t->base, false, 1 << 30) - count_kind(t->base, true, 1 << 30);
        if (rank == 0)
            snprintf(v->name, sizeof v->name, "%s%s", t->base, t->suffix);
        else
            snprintf(v->name, sizeof v->name, "%s_v%d%s", t->base, rank + 1, t->suffix);
    }
}

/* The variant the real driver returns, or NULL if none is old enough. */
static const struct variant *expected(const char *base, int version, bool per_thread)
{
    const struct variant *def = NULL, *ptds = NULL;
    for (size_t i = 0; i < N_TYPEDEFS; i++) {
        const struct variant *v = &variants[i];
        if (strcmp(v->base, base) != 0 || v->version > version) continue;
        const struct variant **best = v->ptds ? &ptds : &def;
        if (!*best || v->version > (*best)->version) *best = v;
    }
    return per_thread && ptds ? ptds : def;
}

static bool known_base(const char *base)
{
    for (size_t i = 0; i < N_TYPEDEFS; i++)
        if (!strcmp(variants[i].base, base)) return true;
    return false;
}

/* Checks one request against the expectation; returns whether the
 * emulator implements the variant. */
static bool check_request(const char *base, int version, cuuint64_t flags)
{
    void *pfn = (void *)1;
    CUdriverProcAddressQueryResult status = (CUdriverProcAddressQueryResult)99;
    ok_cu(cuGetProcAddress(base, &pfn, version, flags, &status));
    const struct variant *v =
        expected(base, version, flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    if (!known_base(base)) {
        assert_int_equal(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
        assert_null(pfn);
        return false;
    }
    if (!v) {
        if (status != CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)
            fail_msg("%s %d %llu: status %d, expected VERSION_NOT_SUFFICIENT", base, version,
                     (unsigned long long)flags, (int)status);
        assert_null(pfn);
        return false;
    }
    void *want = dlsym(driver, v->name);
    if (!want) {
        if (status != CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND || pfn)
            fail_msg("%s %d %llu: %s is not exported, yet status %d", base, version,
                     (unsigned long long)flags, v->name, (int)status);
        return false;
    }
    if (status != CU_GET_PROC_ADDRESS_SUCCESS || pfn != want)
        fail_msg("%s %d %llu: expected %s (%p), got %p status %d", base, version,
                 (unsigned long long)flags, v->name, want, pfn, (int)status);
    return true;
}

static int setup(void **state)
{
    (void)state;
    name_variants();
    driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return driver ? 0 : -1;
}

/* Runs before cuInit: lookups do not need an initialised driver. */
static void test_documented_rules(void **state)
{
    (void)state;
    struct {
        const char *base;
        int version;
        cuuint64_t flags;
        const char *symbol;
    } cases[] = {
        {"cuMemAlloc", 3020, 0, "cuMemAlloc_v2"},
        {"cuMemAlloc", 2000, 0, "cuMemAlloc"},
        {"cuMemAlloc", 13000, 2, "cuMemAlloc_v2"},
        {"cuLaunchKernel", 7000, 2, "cuLaunchKernel_ptsz"},
        {"cuLaunchKernel", 13000, 1, "cuLaunchKernel"},
        {"cuMemcpyHtoD", 7000, 2, "cuMemcpyHtoD_v2_ptds"},
        {"cuMemcpyHtoD", 6050, 2, "cuMemcpyHtoD_v2"},
        {"cuEventElapsedTime", 12080, 0, "cuEventElapsedTime_v2"},
        {"cuEventElapsedTime", 12070, 0, "cuEventElapsedTime"},
        {"cuCtxCreate", 12050, 0, "cuCtxCreate_v4"},
        {"cuStreamGetCaptureInfo", 12030, 2, "cuStreamGetCaptureInfo_v3_ptsz"},
        {"cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2"},
        {"cuGetProcAddress", 11030, 0, "cuGetProcAddress"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        void *pfn = NULL;
        CUdriverProcAddressQueryResult status;
        ok_cu(cuGetProcAddress(cases[i].base, &pfn, cases[i].version, cases[i].flags, &status));
        assert_int_equal(status, CU_GET_PROC_ADDRESS_SUCCESS);
        if (pfn != dlsym(driver, cases[i].symbol))
            fail_msg("%s %d: not %s", cases[i].base, cases[i].version, cases[i].symbol);
    }
    void *pfn = (void *)1;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    ok_cu(cuGetProcAddress("cuNoSuchFunction", &pfn, 12000, 0, &status));
    assert_null(pfn);
    assert_int_equal(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    ok_cu(cuGetProcAddress("cuMemAllocAsync", &pfn, 11010, 0, &status));
    assert_null(pfn);
    assert_int_equal(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress("cuMemAlloc", &pfn, 13010, 0, &status));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress("cuMemAlloc", &pfn, 12000, 4, &status));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress(NULL, &pfn, 12000, 0, &status));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress("cuMemAlloc", NULL, 12000, 0, &status));

    /* The 11.3 entry point (no status) answers the same way. */
    typedef CUresult (*v1_fn)(const char *, void **, int, cuuint64_t);
    v1_fn v1 = (v1_fn)dlsym(driver, "cuGetProcAddress");
    assert_non_null(v1);
    ok_cu(v1("cuMemFree", &pfn, 3020, 0));
    assert_ptr_equal(pfn, dlsym(driver, "cuMemFree_v2"));
    ok_cu(v1("cuNoSuchFunction", &pfn, 12000, 0));
    assert_null(pfn);
    ok_cu(cuInit(0));
}

static void test_every_variant(void **state)
{
    (void)state;
    size_t checked = 0, implemented = 0;
    for (size_t i = 0; i < N_TYPEDEFS; i++) {
        const struct variant *v = &variants[i];
        int versions[] = {v->version - 10, v->version, v->version + 10, 13000};
        for (size_t k = 0; k < 4; k++) {
            for (cuuint64_t flags = 0; flags <= 2; flags++) {
                if (versions[k] > 13000) continue;
                implemented += check_request(v->base, versions[k], flags);
                checked++;
            }
        }
    }
    print_message("%zu requests checked, %zu answered with a function\n", checked, implemented);
    assert_true(checked > 5000);
    assert_true(implemented > 2000);
}

/* Names listed one per line as `nm --format=posix` prints them. */
static char **read_names(const char *path, size_t *n)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    char **names = NULL;
    size_t count = 0, cap = 0;
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char name[256], type;
        if (sscanf(line, "%255s %c", name, &type) != 2 || type != 'T') continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 256;
            names = realloc(names, cap * sizeof *names);
            assert_non_null(names);
        }
        names[count++] = strdup(name);
    }
    if (f) fclose(f);
    *n = count;
    return names;
}

static bool listed(char **names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return true;
    return false;
}

static bool reachable(const char *name)
{
    for (size_t i = 0; i < N_TYPEDEFS; i++)
        if (!strcmp(variants[i].name, name)) return true;
    return false;
}

static void test_exported_names(void **state)
{
    (void)state;
    size_t n_ours, n_stub;
    char **ours = read_names(getenv("GTEMU_EXPORTS"), &n_ours);
    char **stub = read_names(getenv("GTEMU_STUB_EXPORTS"), &n_stub);
    size_t cu = 0;
    for (size_t i = 0; i < n_ours; i++) {
        if (!strncmp(ours[i], "gtemu_", 6)) continue;
        assert_true(!strncmp(ours[i], "cu", 2)); /* only CUDA names and gtemu_* */
        cu++;
        if (n_stub && !listed(stub, n_stub, ours[i]))
            fail_msg("%s is not exported by the real driver", ours[i]);
        if (!reachable(ours[i])) fail_msg("%s cannot be reached through cuGetProcAddress", ours[i]);
    }
    print_message("%zu CUDA entry points exported (the real driver's stub lists %zu)\n", cu,
                  n_stub);
    assert_true(cu > 280);
    for (size_t i = 0; i < n_ours; i++)
        free(ours[i]);
    for (size_t i = 0; i < n_stub; i++)
        free(stub[i]);
    free(ours);
    free(stub);
}

/* Every request the CUDA 13 runtime makes at start-up is answered. */
static void test_runtime_requests(void **state)
{
    (void)state;
    FILE *f = fopen(getenv("GTEMU_CUDART_LIST"), "r");
    assert_non_null(f);
    char line[256];
    size_t requests = 0, found = 0;
    while (fgets(line, sizeof line, f)) {
        char symbol[128];
        int version;
        unsigned long long flags;
        if (line[0] == '#' || sscanf(line, "%127s %d %llu", symbol, &version, &flags) != 3)
            continue;
        found += check_request(symbol, version, flags);
        requests++;
    }
    fclose(f);
    print_message("%zu runtime requests, %zu answered with a function\n", requests, found);
    assert_true(requests > 400);
    assert_true(found > 150);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_documented_rules),
        cmocka_unit_test(test_every_variant),
        cmocka_unit_test(test_exported_names),
        cmocka_unit_test(test_runtime_requests),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
