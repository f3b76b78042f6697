/* CUDA_INJECTION64_PATH: the first successful cuInit loads the library
 * named there and calls its InitializeInjection once, which may call the
 * driver; a path that does not load gives one warning and cuInit still
 * succeeds. Registered twice (CMakeLists.txt): with the probe library
 * (GTEMU_INJECTION_PROBE names it too) and with a path that does not exist
 * (GTEMU_EXPECT_WARNING is the line expected on stderr). */
#include "emu_test.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_injection(void **state)
{
    (void)state;
    const char *probe = getenv("GTEMU_INJECTION_PROBE");
    const char *warning = getenv("GTEMU_EXPECT_WARNING");
    FILE *err = tmpfile();
    int saved = dup(2);
    assert_true(err && saved >= 0);
    fflush(stderr);
    dup2(fileno(err), 2);
    CUresult first = cuInit(0), second = cuInit(0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[512];
    rewind(err);
    text[fread(text, 1, sizeof text - 1, err)] = '\0';
    fclose(err);
    expect_cu(CUDA_SUCCESS, first);
    expect_cu(CUDA_SUCCESS, second);
    if (warning) {
        char expected[512];
        snprintf(expected, sizeof expected, "%s\n", warning);
        assert_string_equal(text, expected);
        return;
    }
    assert_string_equal(text, "");
    void *lib = dlopen(probe, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(lib); /* the driver loaded it */
    const int *calls = dlsym(lib, "injection_calls");
    const CUresult *cuinit = dlsym(lib, "injection_cuinit");
    assert_true(calls && cuinit);
    assert_int_equal(*calls, 1);
    expect_cu(CUDA_SUCCESS, *cuinit);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_injection)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
