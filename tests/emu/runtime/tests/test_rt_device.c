/* Runtime tests: initialisation and contexts, device management, error codes and the
 * last-error state. Runs with GPUTRACE_EMU_DEVICES=2. The tests run in order: the
 * first one observes the runtime before anything initialised it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include <cuda.h>
#include <cuda_profiler_api.h>

#include "rt_test.h"

#define assert_cu(call) assert_int_equal((call), CUDA_SUCCESS)

static void test_context_is_created_on_first_use(void **state)
{
    (void)state;
    int version = 0;
    /* Initialises the runtime and the driver, but needs no context. */
    assert_cuda(cudaDriverGetVersion(&version));
    assert_int_equal(version, 13000);
    CUcontext current = (CUcontext)1;
    assert_cu(cuCtxGetCurrent(&current));
    assert_null(current);

    void *p = NULL;
    assert_cuda(cudaMalloc(&p, 64));
    assert_cu(cuCtxGetCurrent(&current));
    assert_non_null(current);
    CUdevice dev;
    CUcontext primary;
    assert_cu(cuDeviceGet(&dev, 0));
    assert_cu(cuDevicePrimaryCtxRetain(&primary, dev));
    assert_ptr_equal(current, primary);
    unsigned flags;
    int active = 0;
    assert_cu(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    assert_int_equal(active, 1);
    assert_cu(cuDevicePrimaryCtxRelease(dev));
    assert_cuda(cudaFree(p));
}

static void *use_driver_context(void *arg)
{
    CUcontext *out = arg;
    CUdevice dev;
    CUcontext ctx, owner = NULL;
    void *p = NULL;
    if (cuDeviceGet(&dev, 1) != CUDA_SUCCESS || cuCtxCreate(&ctx, NULL, 0, dev) != CUDA_SUCCESS)
        return NULL;
    int device = -1;
    if (cudaMalloc(&p, 64) == cudaSuccess &&
        cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)(uintptr_t)p) ==
            CUDA_SUCCESS &&
        cudaGetDevice(&device) == cudaSuccess && device == 1)
        *out = owner == ctx ? ctx : NULL;
    cudaFree(p);
    cuCtxDestroy(ctx);
    return NULL;
}

static void test_context_current_before_first_call_is_used(void **state)
{
    (void)state;
    CUcontext used = NULL;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, use_driver_context, &used), 0);
    pthread_join(t, NULL);
    assert_non_null(used);
}

static void test_versions(void **state)
{
    (void)state;
    int version = 0;
    assert_cuda(cudaRuntimeGetVersion(&version));
    assert_int_equal(version, 13000);
    assert_int_equal(cudaRuntimeGetVersion(NULL), cudaErrorInvalidValue);
    assert_int_equal(cudaDriverGetVersion(NULL), cudaErrorInvalidValue);
    cudaGetLastError();
}

static void test_device_selection(void **state)
{
    (void)state;
    int count = 0, device = -1;
    assert_cuda(cudaGetDeviceCount(&count));
    assert_int_equal(count, 2);
    assert_cuda(cudaGetDevice(&device));
    assert_int_equal(device, 0);

    assert_cuda(cudaSetDevice(1));
    assert_cuda(cudaGetDevice(&device));
    assert_int_equal(device, 1);
    void *p = NULL;
    int ordinal = -1;
    assert_cuda(cudaMalloc(&p, 256));
    assert_cu(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                    (CUdeviceptr)(uintptr_t)p));
    assert_int_equal(ordinal, 1);
    assert_cuda(cudaFree(p));

    assert_int_equal(cudaSetDevice(2), cudaErrorInvalidDevice);
    assert_int_equal(cudaSetDevice(-1), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
    assert_cuda(cudaGetDevice(&device));
    assert_int_equal(device, 1);
    assert_cuda(cudaSetDevice(0));
    assert_int_equal(cudaGetDeviceCount(NULL), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
}

static void test_properties_agree_with_attributes(void **state)
{
    (void)state;
    struct cudaDeviceProp prop;
    assert_cuda(cudaGetDeviceProperties(&prop, 0));
    assert_true(strlen(prop.name) > 0);
    assert_true(prop.totalGlobalMem > 0);
    const struct {
        int value;
        enum cudaDeviceAttr attr;
    } fields[] = {
        {prop.maxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock},
        {prop.maxThreadsDim[2], cudaDevAttrMaxBlockDimZ},
        {prop.maxGridSize[0], cudaDevAttrMaxGridDimX},
        {prop.multiProcessorCount, cudaDevAttrMultiProcessorCount},
        {prop.major, cudaDevAttrComputeCapabilityMajor},
        {prop.minor, cudaDevAttrComputeCapabilityMinor},
        {prop.warpSize, cudaDevAttrWarpSize},
        {(int)prop.sharedMemPerBlock, cudaDevAttrMaxSharedMemoryPerBlock},
        {prop.unifiedAddressing, cudaDevAttrUnifiedAddressing},
    };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        int value = -1;
        assert_cuda(cudaDeviceGetAttribute(&value, fields[i].attr, 0));
        assert_int_equal(value, fields[i].value);
    }
    assert_int_equal(prop.maxThreadsPerBlock, 1024);
    assert_int_equal(cudaGetDeviceProperties(NULL, 0), cudaErrorInvalidValue);
    assert_int_equal(cudaGetDeviceProperties(&prop, 7), cudaErrorInvalidDevice);
    int value;
    assert_int_equal(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, 7),
                     cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
}

static void test_error_names_and_strings(void **state)
{
    (void)state;
    assert_string_equal(cudaGetErrorName(cudaSuccess), "cudaSuccess");
    assert_string_equal(cudaGetErrorString(cudaSuccess), "no error");
    assert_string_equal(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
    assert_string_equal(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
    assert_string_equal(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
    assert_string_equal(cudaGetErrorName(cudaErrorStreamCaptureMerge),
                        "cudaErrorStreamCaptureMerge");
    assert_string_equal(cudaGetErrorString(cudaErrorStreamCaptureMerge), "stream capture merge");
    assert_string_equal(cudaGetErrorString(cudaErrorECCUncorrectable), "ecc uncorrectable");
    assert_string_equal(cudaGetErrorName((cudaError_t)12345), "unrecognized error code");
    assert_string_equal(cudaGetErrorString((cudaError_t)12345), "unrecognized error code");
    /* Every code that has a name has a description. */
    for (int code = 0; code < 1000; code++) {
        const char *name = cudaGetErrorName((cudaError_t)code);
        if (strcmp(name, "unrecognized error code") == 0) continue;
        assert_int_equal(strncmp(name, "cuda", 4), 0);
        assert_true(strlen(cudaGetErrorString((cudaError_t)code)) > 0);
    }
}

static void test_last_error_persists_until_read(void **state)
{
    (void)state;
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cudaFree((void *)0x1000), cudaErrorInvalidValue);
    void *p = NULL;
    assert_cuda(cudaMalloc(&p, 16)); /* a success does not clear it */
    assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaSetDevice(9), cudaErrorInvalidDevice); /* the latest error wins */
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
    assert_cuda(cudaFree(p));
}

static void *fail_in_thread(void *arg)
{
    cudaError_t *seen = arg;
    seen[0] = cudaFree((void *)0x2000);
    seen[1] = cudaPeekAtLastError();
    return NULL;
}

static void test_last_error_is_per_thread(void **state)
{
    (void)state;
    cudaError_t seen[2] = {cudaSuccess, cudaSuccess};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fail_in_thread, seen), 0);
    pthread_join(t, NULL);
    assert_int_equal(seen[0], cudaErrorInvalidValue);
    assert_int_equal(seen[1], cudaErrorInvalidValue);
    assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
}

static void test_not_ready_is_not_recorded(void **state)
{
    (void)state;
    struct rt_test_library lib;
    rt_test_load(&lib);
    cudaStream_t s;
    cudaEvent_t e;
    assert_cuda(cudaStreamCreate(&s));
    assert_cuda(cudaEventCreate(&e));
    assert_cuda(rt_test_launch(lib.busy_kernel, s));
    assert_cuda(cudaEventRecord(e, s));
    assert_int_equal(cudaStreamQuery(s), cudaErrorNotReady);
    assert_int_equal(cudaEventQuery(e), cudaErrorNotReady);
    assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
    assert_cuda(cudaStreamSynchronize(s));
    assert_cuda(cudaStreamQuery(s));
    assert_cuda(cudaEventQuery(e));
    assert_cuda(cudaEventDestroy(e));
    assert_cuda(cudaStreamDestroy(s));
    rt_test_unload(&lib);
}

/* The exported variant the driver's cuGetProcAddress should hand out. */
static void *exported(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

static void test_driver_entry_points(void **state)
{
    (void)state;
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    /* Deprecated, and still called by many programs. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    assert_cuda(cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &status));
#pragma GCC diagnostic pop
    assert_int_equal(status, cudaDriverEntryPointSuccess);
    assert_ptr_equal(fn, exported("cuMemAlloc_v2"));
    assert_cuda(
        cudaGetDriverEntryPointByVersion("cuCtxCreate", &fn, 3020, cudaEnableDefault, &status));
    assert_ptr_equal(fn, exported("cuCtxCreate_v2"));
    assert_cuda(cudaGetDriverEntryPointByVersion("cuMemcpyHtoD", &fn, 13000,
                                                 cudaEnablePerThreadDefaultStream, &status));
    assert_ptr_equal(fn, exported("cuMemcpyHtoD_v2_ptds"));
    assert_cuda(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &fn, 13000, cudaEnableDefault,
                                                 &status));
    assert_int_equal(status, cudaDriverEntryPointSymbolNotFound);
    assert_null(fn);
    assert_int_equal(cudaGetDriverEntryPointByVersion(NULL, &fn, 13000, cudaEnableDefault, &status),
                     cudaErrorInvalidValue);
    cudaGetLastError();
}

static void test_pointer_attributes(void **state)
{
    (void)state;
    void *device, *pinned, *managed;
    int pageable;
    struct cudaPointerAttributes a;
    assert_cuda(cudaMalloc(&device, 64));
    assert_cuda(cudaMallocHost(&pinned, 64));
    assert_cuda(cudaMallocManaged(&managed, 64, cudaMemAttachGlobal));
    assert_cuda(cudaPointerGetAttributes(&a, device));
    assert_int_equal(a.type, cudaMemoryTypeDevice);
    assert_int_equal(a.device, 0);
    assert_ptr_equal(a.devicePointer, device);
    assert_cuda(cudaPointerGetAttributes(&a, pinned));
    assert_int_equal(a.type, cudaMemoryTypeHost);
    assert_ptr_equal(a.hostPointer, pinned);
    assert_cuda(cudaPointerGetAttributes(&a, managed));
    assert_int_equal(a.type, cudaMemoryTypeManaged);
    assert_cuda(cudaPointerGetAttributes(&a, &pageable));
    assert_int_equal(a.type, cudaMemoryTypeUnregistered);
    assert_int_equal(a.device, cudaInvalidDeviceId);
    assert_null(a.devicePointer);
    assert_int_equal(cudaPointerGetAttributes(NULL, device), cudaErrorInvalidValue);
    cudaGetLastError();
    assert_cuda(cudaFree(device));
    assert_cuda(cudaFreeHost(pinned));
    assert_cuda(cudaFree(managed));
}

static void test_peer_copy(void **state)
{
    (void)state;
    enum { BYTES = 1024 };
    unsigned char in[BYTES], out[BYTES];
    for (int i = 0; i < BYTES; i++)
        in[i] = (unsigned char)(i * 13);
    int can_access = -1;
    assert_cuda(cudaDeviceCanAccessPeer(&can_access, 0, 1));
    assert_true(can_access == 0 || can_access == 1);
    assert_int_equal(cudaDeviceCanAccessPeer(&can_access, 0, 5), cudaErrorInvalidDevice);
    cudaGetLastError();
    void *on0, *on1;
    assert_cuda(cudaMalloc(&on0, BYTES));
    assert_cuda(cudaSetDevice(1));
    assert_cuda(cudaMalloc(&on1, BYTES));
    assert_cuda(cudaSetDevice(0));
    assert_cuda(cudaMemcpy(on0, in, BYTES, cudaMemcpyHostToDevice));
    assert_cuda(cudaMemcpyPeer(on1, 1, on0, 0, BYTES));
    assert_cuda(cudaMemset(on0, 0, BYTES));
    assert_cuda(cudaMemcpyPeerAsync(on0, 0, on1, 1, BYTES, 0));
    assert_cuda(cudaMemcpy(out, on0, BYTES, cudaMemcpyDeviceToHost));
    assert_memory_equal(in, out, BYTES);
    assert_cuda(cudaFree(on0));
    assert_cuda(cudaFree(on1));
}

static void test_device_reset_destroys_the_context_state(void **state)
{
    (void)state;
    struct rt_test_library lib;
    rt_test_load(&lib);
    void *p = NULL;
    cudaStream_t s;
    assert_cuda(cudaMalloc(&p, 1024));
    assert_cuda(cudaStreamCreate(&s));
    assert_cuda(cudaDeviceReset());
    assert_int_equal(cudaFree(p), cudaErrorInvalidValue);
    assert_int_equal(cudaStreamQuery(s), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    /* The next call starts over on a fresh primary context; libraries stay loaded. */
    assert_cuda(cudaMalloc(&p, 1024));
    assert_cuda(rt_test_launch(lib.short_kernel, 0));
    assert_cuda(cudaDeviceSynchronize());
    CUdevice dev;
    unsigned flags;
    int active = 0;
    assert_cu(cuDeviceGet(&dev, 0));
    assert_cu(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    assert_int_equal(active, 1);
    assert_cuda(cudaFree(p));
    rt_test_unload(&lib);
}

/* The profiler control API reaches the driver's (which accepts it in a
 * context) and needs no context made beforehand. */
static void test_profiler_start_stop(void **state)
{
    (void)state;
    assert_cuda(cudaProfilerStart());
    assert_cuda(cudaProfilerStop());
    assert_cuda(cudaProfilerStop());
    assert_int_equal(cudaGetLastError(), cudaSuccess);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_is_created_on_first_use),
        cmocka_unit_test(test_context_current_before_first_call_is_used),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_device_selection),
        cmocka_unit_test(test_properties_agree_with_attributes),
        cmocka_unit_test(test_error_names_and_strings),
        cmocka_unit_test(test_last_error_persists_until_read),
        cmocka_unit_test(test_last_error_is_per_thread),
        cmocka_unit_test(test_not_ready_is_not_recorded),
        cmocka_unit_test(test_driver_entry_points),
        cmocka_unit_test(test_pointer_attributes),
        cmocka_unit_test(test_peer_copy),
        cmocka_unit_test(test_device_reset_destroys_the_context_state),
        cmocka_unit_test(test_profiler_start_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
