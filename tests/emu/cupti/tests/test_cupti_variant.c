/* The emulated CUPTI of another major version
 * (${GTEMU_LIB_DIR}/variants/cupti12/libcupti.so.12), for a loader that must
 * not take a second major version into a process: it exports CUPTI's names
 * under the libcupti.so.12 version node and reports CUPTI 12.9 Update 1's
 * API version; the libcupti.so.13 beside it, CUPTI 13's. */
#include <cupti.h>

#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

typedef CUptiResult (*version_fn)(uint32_t *);

static uint32_t version_of(const char *path, const char *node)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    version_fn get = (version_fn)dlvsym(lib, "cuptiGetVersion", node);
    assert_non_null(get);
    uint32_t version = 0;
    assert_int_equal(get(&version), CUPTI_SUCCESS);
    return version;
}

static void test_major_versions(void **state)
{
    (void)state;
    const char *dir = getenv("GTEMU_LIB_DIR");
    assert_non_null(dir);
    char v12[4096], v13[4096];
    snprintf(v12, sizeof v12, "%s/variants/cupti12/libcupti.so.12", dir);
    snprintf(v13, sizeof v13, "%s/libcupti.so.13", dir);
    assert_int_equal(version_of(v12, "libcupti.so.12"), 28);
    assert_int_equal(version_of(v13, "libcupti.so.13"), CUPTI_API_VERSION);
    void *lib = dlopen(v12, RTLD_NOW | RTLD_LOCAL);
    assert_null(dlvsym(lib, "cuptiGetVersion", "libcupti.so.13"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_major_versions)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
