// Runtime test of __managed__ variables, built with nvcc -cudart shared: nvcc's host
// code reaches a managed variable through a slot that __cudaInitModule fills with the
// allocation the driver gives for it (cuLibraryGetManaged).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

// cmocka.h declares C functions without C++ linkage guards.
extern "C" {
#include <cmocka.h>
}

#define assert_cuda(call) assert_int_equal((call), cudaSuccess)

__managed__ int managed_counter;

static void test_managed_variable(void **)
{
    // Host code dereferences the variable's slot, which stays NULL (a crash) when the
    // driver cannot give the runtime the managed allocation.
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    assert_cuda(cudaGetDriverEntryPointByVersion("cuLibraryGetManaged", &fn, 12000,
                                                 cudaEnableDefault, &found));
    if (fn == nullptr) fail_msg("the driver has no cuLibraryGetManaged");
    managed_counter = 41;
    int *device = nullptr;
    assert_cuda(cudaGetSymbolAddress((void **)&device, managed_counter));
    assert_ptr_equal(device, &managed_counter);
    int value = 0;
    assert_cuda(cudaMemcpy(&value, &managed_counter, sizeof(int), cudaMemcpyDefault));
    assert_int_equal(value, 41);
}

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_managed_variable),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
