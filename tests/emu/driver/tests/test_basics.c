/* Initialisation, devices, contexts and error strings of the emulated
 * driver. Run with GPUTRACE_EMU_DEVICES=2 and GPUTRACE_EMU_MEMORY_MB=1024. */
#include "emu_test.h"

#include <string.h>

/* Must run first: nothing has called cuInit yet. */
static void test_before_init(void **state)
{
    (void)state;
    int n = -1, version = 0;
    CUdevice dev;
    CUcontext ctx;
    expect_cu(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&n));
    expect_cu(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGet(&dev, 0));
    expect_cu(CUDA_ERROR_NOT_INITIALIZED, cuCtxGetCurrent(&ctx));
    CUdeviceptr p;
    expect_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemAlloc(&p, 16));
    ok_cu(cuDriverGetVersion(&version));
    assert_int_equal(version, 13000);
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuDriverGetVersion(NULL));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuInit(1));
    ok_cu(cuInit(0));
    ok_cu(cuInit(0));
}

static void test_devices(void **state)
{
    (void)state;
    int n = 0;
    ok_cu(cuDeviceGetCount(&n));
    assert_int_equal(n, 2);
    CUdevice d0, d1, bad;
    ok_cu(cuDeviceGet(&d0, 0));
    ok_cu(cuDeviceGet(&d1, 1));
    expect_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&bad, 2));
    expect_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&bad, -1));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGet(NULL, 0));

    char name[128];
    ok_cu(cuDeviceGetName(name, sizeof name, d0));
    assert_string_equal(name, "gputrace emulated GPU");
    expect_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetName(name, sizeof name, 7));

    CUuuid u0, u1;
    ok_cu(cuDeviceGetUuid(&u0, d0));
    ok_cu(cuDeviceGetUuid(&u1, d1));
    assert_memory_not_equal(u0.bytes, u1.bytes, sizeof u0.bytes);

    size_t total = 0;
    ok_cu(cuDeviceTotalMem(&total, d0));
    assert_int_equal(total, (size_t)1024 << 20);

    int major = 0, minor = -1, v = 0;
    ok_cu(cuDeviceComputeCapability(&major, &minor, d0));
    assert_int_equal(major, 9);
    assert_int_equal(minor, 0);
    ok_cu(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d1));
    assert_int_equal(v, 9);
    ok_cu(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, d0));
    assert_int_equal(v, 1024);
    ok_cu(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, d0));
    assert_int_equal(v, 32);
    ok_cu(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, d0));
    assert_int_equal(v, 1);
    expect_cu(CUDA_ERROR_INVALID_VALUE,
              cuDeviceGetAttribute(&v, (CUdevice_attribute)CU_DEVICE_ATTRIBUTE_MAX, d0));

    char bus[32];
    CUdevice found;
    ok_cu(cuDeviceGetPCIBusId(bus, sizeof bus, d1));
    ok_cu(cuDeviceGetByPCIBusId(&found, bus));
    assert_int_equal(found, d1);
    int peer = 0;
    ok_cu(cuDeviceCanAccessPeer(&peer, d0, d1));
    assert_int_equal(peer, 1);
}

static void test_context_stack(void **state)
{
    (void)state;
    CUcontext a, b, cur, popped;
    ok_cu(cuCtxCreate(&a, NULL, 0, 0));
    ok_cu(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, a);
    ok_cu(cuCtxCreate(&b, NULL, 0, 1));
    ok_cu(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, b);
    CUdevice dev;
    ok_cu(cuCtxGetDevice(&dev));
    assert_int_equal(dev, 1);
    ok_cu(cuCtxGetDevice_v2(&dev, a));
    assert_int_equal(dev, 0);

    unsigned long long ida, idb;
    ok_cu(cuCtxGetId(a, &ida));
    ok_cu(cuCtxGetId(b, &idb));
    assert_true(ida != idb);

    ok_cu(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, b);
    ok_cu(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, a);
    ok_cu(cuCtxPushCurrent(b));
    ok_cu(cuCtxSetCurrent(a)); /* replaces the top */
    ok_cu(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, a);
    ok_cu(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, a); /* the bottom entry */

    ok_cu(cuCtxDestroy(b));
    expect_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy(b));
    expect_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxPushCurrent(b));
    ok_cu(cuCtxDestroy(a)); /* current: popped as well */
    ok_cu(cuCtxGetCurrent(&cur));
    assert_null(cur);
    expect_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxPopCurrent(&popped));
    expect_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize());
    CUstream s;
    expect_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamCreate(&s, 0));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuCtxCreate(&a, NULL, 0x100, 0));
    expect_cu(CUDA_ERROR_INVALID_DEVICE, cuCtxCreate(&a, NULL, 0, 5));
}

static void test_primary_context(void **state)
{
    (void)state;
    unsigned flags = 1;
    int active = 1;
    ok_cu(cuDevicePrimaryCtxGetState(0, &flags, &active));
    assert_int_equal(active, 0);
    expect_cu(CUDA_ERROR_INVALID_CONTEXT, cuDevicePrimaryCtxRelease(0));

    CUcontext p1, p2;
    ok_cu(cuDevicePrimaryCtxSetFlags(0, CU_CTX_SCHED_BLOCKING_SYNC));
    ok_cu(cuDevicePrimaryCtxRetain(&p1, 0));
    ok_cu(cuDevicePrimaryCtxRetain(&p2, 0));
    assert_ptr_equal(p1, p2);
    ok_cu(cuDevicePrimaryCtxGetState(0, &flags, &active));
    assert_int_equal(active, 1);
    assert_int_equal(flags, CU_CTX_SCHED_BLOCKING_SYNC);
    expect_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy(p1)); /* primary contexts are released */

    ok_cu(cuCtxSetCurrent(p1));
    CUdeviceptr mem;
    ok_cu(cuMemAlloc(&mem, 4096));
    ok_cu(cuDevicePrimaryCtxReset(0));
    /* The reset context is still usable; its memory is gone. */
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(mem));
    ok_cu(cuMemAlloc(&mem, 4096));
    ok_cu(cuMemFree(mem));

    ok_cu(cuDevicePrimaryCtxRelease(0));
    ok_cu(cuDevicePrimaryCtxGetState(0, &flags, &active));
    assert_int_equal(active, 1);
    ok_cu(cuDevicePrimaryCtxRelease(0));
    ok_cu(cuDevicePrimaryCtxGetState(0, &flags, &active));
    assert_int_equal(active, 0);
    CUcontext cur;
    ok_cu(cuCtxGetCurrent(&cur));
    assert_null(cur); /* the destroyed context is no longer current */
}

static void test_limits_and_flags(void **state)
{
    (void)state;
    CUcontext ctx;
    ok_cu(cuCtxCreate(&ctx, NULL, CU_CTX_SCHED_SPIN, 0));
    unsigned flags = 0;
    ok_cu(cuCtxGetFlags(&flags));
    assert_int_equal(flags, CU_CTX_SCHED_SPIN);
    size_t v = 0;
    ok_cu(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 1 << 24));
    ok_cu(cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    assert_int_equal(v, 1 << 24);
    expect_cu(CUDA_ERROR_UNSUPPORTED_LIMIT, cuCtxSetLimit((CUlimit)99, 1));
    int least = 1, greatest = 1;
    ok_cu(cuCtxGetStreamPriorityRange(&least, &greatest));
    assert_true(greatest < least);
    ok_cu(cuCtxSynchronize());
    ok_cu(cuCtxDestroy(ctx));
}

static void test_error_strings(void **state)
{
    (void)state;
    const char *s = NULL;
    ok_cu(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s));
    assert_string_equal(s, "CUDA_ERROR_INVALID_VALUE");
    ok_cu(cuGetErrorName(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, &s));
    assert_string_equal(s, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT");
    ok_cu(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s));
    assert_string_equal(s, "invalid argument");
    ok_cu(cuGetErrorString(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, &s));
    assert_string_equal(s, "stream capture unjoined");
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuGetErrorName((CUresult)12345, &s));
    assert_null(s);
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuGetErrorString((CUresult)12345, &s));
    const void *table = (const void *)1;
    CUuuid id = {{0}};
    expect_cu(CUDA_ERROR_NOT_SUPPORTED, cuGetExportTable(&table, &id));
    assert_null(table);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_before_init),      cmocka_unit_test(test_devices),
        cmocka_unit_test(test_context_stack),    cmocka_unit_test(test_primary_context),
        cmocka_unit_test(test_limits_and_flags), cmocka_unit_test(test_error_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
