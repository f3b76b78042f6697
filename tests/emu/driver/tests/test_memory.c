/* Memory of the emulated driver: allocation, copies that move data,
 * memsets, page-locked and managed memory, pointer attributes, VMM and
 * stream-ordered allocation. Run with GPUTRACE_EMU_DEVICES=2 and
 * GPUTRACE_EMU_MEMORY_MB=256. */
#include "emu_test.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MB (1u << 20)

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31 + seed);
}

static void test_alloc_free(void **state)
{
    (void)state;
    size_t free0, total;
    ok_cu(cuMemGetInfo(&free0, &total));
    assert_int_equal(total, (size_t)256 * MB);
    CUdeviceptr a, b;
    ok_cu(cuMemAlloc(&a, 10 * MB));
    ok_cu(cuMemAlloc(&b, 1000));
    assert_true(a != b);
    size_t free1;
    ok_cu(cuMemGetInfo(&free1, &total));
    assert_true(free1 <= free0 - 10 * MB);

    CUdeviceptr base;
    size_t size;
    ok_cu(cuMemGetAddressRange(&base, &size, a + 12345));
    assert_int_equal(base, a);
    assert_int_equal(size, 10 * MB);

    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(&a, 0));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(NULL, 16));
    expect_cu(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&base, 300 * MB));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(a + 16)); /* not the start */
    int host;
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree((CUdeviceptr)(uintptr_t)&host));
    ok_cu(cuMemFree(a));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(a)); /* twice */
    ok_cu(cuMemFree(b));
    ok_cu(cuMemGetInfo(&free1, &total));
    assert_int_equal(free1, free0);

    CUdeviceptr pitched;
    size_t pitch;
    ok_cu(cuMemAllocPitch(&pitched, &pitch, 100, 10, 4));
    assert_true(pitch >= 100);
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemAllocPitch(&pitched, &pitch, 100, 10, 3));
    ok_cu(cuMemFree(pitched));
}

static void test_copies_move_data(void **state)
{
    (void)state;
    size_t n = 3 * MB + 7;
    unsigned char *src = malloc(n), *dst = malloc(n);
    fill(src, n, 1);
    CUdeviceptr d1, d2;
    ok_cu(cuMemAlloc(&d1, n));
    ok_cu(cuMemAlloc(&d2, n));
    ok_cu(cuMemcpyHtoD(d1, src, n));
    ok_cu(cuMemcpyDtoD(d2, d1, n));
    memset(dst, 0, n);
    ok_cu(cuMemcpyDtoH(dst, d2, n));
    assert_memory_equal(dst, src, n);

    /* Unified cuMemcpy infers the direction, host to host included. */
    fill(src, n, 2);
    ok_cu(cuMemcpy(d1, (CUdeviceptr)(uintptr_t)src, n));
    ok_cu(cuMemcpy((CUdeviceptr)(uintptr_t)dst, d1, n));
    assert_memory_equal(dst, src, n);
    unsigned char small[64];
    ok_cu(cuMemcpy((CUdeviceptr)(uintptr_t)small, (CUdeviceptr)(uintptr_t)src, sizeof small));
    assert_memory_equal(small, src, sizeof small);

    /* Asynchronous copies on a stream, in order. */
    CUstream s;
    ok_cu(cuStreamCreate(&s, 0));
    fill(src, n, 3);
    ok_cu(cuMemcpyHtoDAsync(d1, src, n, s));
    ok_cu(cuMemcpyDtoDAsync(d2, d1, n, s));
    ok_cu(cuMemcpyDtoHAsync(dst, d2, n, s));
    ok_cu(cuStreamSynchronize(s));
    assert_memory_equal(dst, src, n);

    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(d1, src, n + 1)); /* past the end */
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, 16));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(dst, 0, 16));
    ok_cu(cuStreamDestroy(s));
    ok_cu(cuMemFree(d1));
    ok_cu(cuMemFree(d2));
    free(src);
    free(dst);
}

static void test_copy_2d(void **state)
{
    (void)state;
    enum { W = 100, H = 20, HOST_PITCH = 128 };
    unsigned char host[HOST_PITCH * H], back[HOST_PITCH * H];
    fill(host, sizeof host, 5);
    memset(back, 0, sizeof back);
    CUdeviceptr dev;
    size_t pitch;
    ok_cu(cuMemAllocPitch(&dev, &pitch, W, H, 4));
    CUDA_MEMCPY2D up = {.srcMemoryType = CU_MEMORYTYPE_HOST,
                        .srcHost = host,
                        .srcPitch = HOST_PITCH,
                        .dstMemoryType = CU_MEMORYTYPE_DEVICE,
                        .dstDevice = dev,
                        .dstPitch = pitch,
                        .WidthInBytes = W,
                        .Height = H};
    ok_cu(cuMemcpy2D(&up));
    CUDA_MEMCPY2D down = {.srcMemoryType = CU_MEMORYTYPE_DEVICE,
                          .srcDevice = dev,
                          .srcPitch = pitch,
                          .dstMemoryType = CU_MEMORYTYPE_HOST,
                          .dstHost = back,
                          .dstPitch = HOST_PITCH,
                          .WidthInBytes = W,
                          .Height = H};
    ok_cu(cuMemcpy2DAsync(&down, NULL));
    ok_cu(cuCtxSynchronize());
    for (int row = 0; row < H; row++) {
        assert_memory_equal(back + row * HOST_PITCH, host + row * HOST_PITCH, W);
        assert_int_equal(back[row * HOST_PITCH + W], 0); /* outside the width */
    }
    down.dstPitch = W - 1; /* narrower than a row */
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&down));
    down.dstPitch = HOST_PITCH;
    down.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    expect_cu(CUDA_ERROR_NOT_SUPPORTED, cuMemcpy2D(&down));
    ok_cu(cuMemFree(dev));
}

/* A box of 8 x 3 x 2 bytes out of a 16 x 4 x 3 host volume, to a device
 * volume of pitch 32 and height 5. */
static void test_copy_3d(void **state)
{
    (void)state;
    unsigned char host[3][4][16], back[3][4][16];
    fill(&host[0][0][0], sizeof host, 9);
    memset(back, 0, sizeof back);
    CUdeviceptr dev;
    ok_cu(cuMemAlloc(&dev, 32 * 5 * 3));
    ok_cu(cuMemsetD8(dev, 0, 32 * 5 * 3));
    CUDA_MEMCPY3D up = {.srcXInBytes = 2,
                        .srcY = 1,
                        .srcZ = 1,
                        .srcMemoryType = CU_MEMORYTYPE_HOST,
                        .srcHost = host,
                        .srcPitch = 16,
                        .srcHeight = 4,
                        .dstMemoryType = CU_MEMORYTYPE_DEVICE,
                        .dstDevice = dev,
                        .dstPitch = 32,
                        .dstHeight = 5,
                        .WidthInBytes = 8,
                        .Height = 3,
                        .Depth = 2};
    ok_cu(cuMemcpy3D(&up));
    CUDA_MEMCPY3D down = {.srcMemoryType = CU_MEMORYTYPE_DEVICE,
                          .srcDevice = dev,
                          .srcPitch = 32,
                          .srcHeight = 5,
                          .dstXInBytes = 2,
                          .dstY = 1,
                          .dstZ = 1,
                          .dstMemoryType = CU_MEMORYTYPE_HOST,
                          .dstHost = back,
                          .dstPitch = 16,
                          .dstHeight = 4,
                          .WidthInBytes = 8,
                          .Height = 3,
                          .Depth = 2};
    ok_cu(cuMemcpy3DAsync(&down, NULL));
    ok_cu(cuCtxSynchronize());
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 16; x++) {
                bool inside = z >= 1 && y >= 1 && x >= 2 && x < 10;
                assert_int_equal(back[z][y][x], inside ? host[z][y][x] : 0);
            }
    down.dstLOD = 1;
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy3D(&down));
    down.dstLOD = 0;
    down.srcHeight = 2; /* slices overlap the rows copied */
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy3D(&down));
    ok_cu(cuMemFree(dev));
}

static void test_memsets(void **state)
{
    (void)state;
    CUdeviceptr d;
    ok_cu(cuMemAlloc(&d, 4096));
    unsigned char b[4096];
    ok_cu(cuMemsetD8(d, 0xab, 4096));
    ok_cu(cuMemcpyDtoH(b, d, 4096));
    for (int i = 0; i < 4096; i++)
        assert_int_equal(b[i], 0xab);
    ok_cu(cuMemsetD16(d + 2, 0x1234, 3));
    ok_cu(cuMemsetD32Async(d + 64, 0xdeadbeef, 2, NULL));
    ok_cu(cuMemcpyDtoH(b, d, 128));
    uint16_t h;
    uint32_t w;
    memcpy(&h, b + 6, 2);
    assert_int_equal(h, 0x1234);
    assert_int_equal(b[8], 0xab);
    memcpy(&w, b + 68, 4);
    assert_int_equal(w, 0xdeadbeef);
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(d + 2, 0, 1)); /* misaligned */
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(d, 0, 4097));

    /* 2D: 10 bytes of each of 4 rows with pitch 100. */
    ok_cu(cuMemsetD8(d, 0, 4096));
    ok_cu(cuMemsetD2D8(d, 100, 7, 10, 4));
    ok_cu(cuMemcpyDtoH(b, d, 400));
    for (int row = 0; row < 4; row++) {
        assert_int_equal(b[row * 100 + 9], 7);
        assert_int_equal(b[row * 100 + 10], 0);
    }
    ok_cu(cuMemFree(d));
}

static void test_host_memory(void **state)
{
    (void)state;
    void *p, *q;
    unsigned flags = 99;
    ok_cu(cuMemAllocHost(&p, 8192));
    ok_cu(cuMemHostAlloc(&q, 4096, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    memset(p, 1, 8192);
    ok_cu(cuMemHostGetFlags(&flags, q));
    assert_int_equal(flags, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    CUdeviceptr dp;
    ok_cu(cuMemHostGetDevicePointer(&dp, q, 0));
    assert_int_equal(dp, (CUdeviceptr)(uintptr_t)q);
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostAlloc(&q, 64, 0x80));
    int pageable;
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost(&pageable));
    ok_cu(cuMemFreeHost(p));
    ok_cu(cuMemFreeHost(q));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost(p));

    char *buf = malloc(1 << 16);
    ok_cu(cuMemHostRegister(buf, 1 << 16, 0));
    expect_cu(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(buf + 64, 64, 0));
    ok_cu(cuMemHostGetDevicePointer(&dp, buf + 100, 0));
    assert_int_equal(dp, (CUdeviceptr)(uintptr_t)(buf + 100));
    expect_cu(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buf + 1));
    ok_cu(cuMemHostUnregister(buf));
    expect_cu(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buf));
    free(buf);
}

static void test_managed(void **state)
{
    (void)state;
    CUdeviceptr m;
    ok_cu(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
    unsigned char *host = (unsigned char *)(uintptr_t)m;
    host[10] = 42; /* host-accessible */
    ok_cu(cuMemsetD8(m + 100, 9, 10));
    ok_cu(cuCtxSynchronize());
    assert_int_equal(host[105], 9);
    assert_int_equal(host[10], 42);
    CUmemLocation where = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    ok_cu(cuMemPrefetchAsync(m, 4096, where, 0, NULL));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchAsync(m, 8192, where, 0, NULL));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemAllocManaged(&m, 4096, 0));
    ok_cu(cuMemFree(m));
}

static void test_pointer_attributes(void **state)
{
    CUcontext ctx = *state;
    CUdeviceptr d, m;
    void *pinned;
    char *registered = malloc(4096);
    ok_cu(cuMemAlloc(&d, 1000));
    ok_cu(cuMemAllocManaged(&m, 1000, CU_MEM_ATTACH_GLOBAL));
    ok_cu(cuMemAllocHost(&pinned, 1000));
    ok_cu(cuMemHostRegister(registered, 4096, 0));

    unsigned type = 0;
    CUcontext c = NULL;
    int ordinal = -1, managed = -1;
    CUdeviceptr dp = 0;
    void *start = NULL, *hp = NULL;
    size_t size = 0;
    unsigned long long id1 = 0, id2 = 0;
    ok_cu(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 10));
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    ok_cu(cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, d));
    assert_ptr_equal(c, ctx);
    ok_cu(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d));
    assert_int_equal(ordinal, 0);
    ok_cu(cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, d + 10));
    assert_int_equal(dp, d + 10);
    ok_cu(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d + 10));
    assert_ptr_equal(start, (void *)(uintptr_t)d);
    ok_cu(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, d + 10));
    assert_int_equal(size, 1000);
    ok_cu(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d));
    assert_int_equal(managed, 0);
    expect_cu(CUDA_ERROR_INVALID_VALUE,
              cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, d));
    ok_cu(cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, d));
    ok_cu(cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, m));
    assert_true(id1 != id2);

    ok_cu(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m));
    assert_int_equal(managed, 1);
    ok_cu(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m));
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    ok_cu(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                (CUdeviceptr)(uintptr_t)pinned));
    assert_int_equal(type, CU_MEMORYTYPE_HOST);
    ok_cu(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                (CUdeviceptr)(uintptr_t)(registered + 5)));
    assert_ptr_equal(hp, registered + 5);
    ok_cu(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                (CUdeviceptr)(uintptr_t)registered));
    assert_int_equal(type, CU_MEMORYTYPE_HOST);

    /* Unregistered host memory: an error from cuPointerGetAttribute, NULL
     * values from cuPointerGetAttributes. */
    int local = 0;
    CUdeviceptr plain = (CUdeviceptr)(uintptr_t)&local;
    expect_cu(CUDA_ERROR_INVALID_VALUE,
              cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, plain));
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_CONTEXT,
                                   CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_POINTER};
    type = 7;
    c = ctx;
    managed = 7;
    dp = 7;
    void *data[] = {&type, &c, &managed, &dp};
    ok_cu(cuPointerGetAttributes(4, attrs, data, plain));
    assert_int_equal(type, 0);
    assert_null(c);
    assert_int_equal(managed, 0);
    assert_int_equal(dp, 0);
    ok_cu(cuPointerGetAttributes(4, attrs, data, d));
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    assert_ptr_equal(c, ctx);

    ok_cu(cuMemFree(d));
    ok_cu(cuMemFree(m));
    ok_cu(cuMemFreeHost(pinned));
    ok_cu(cuMemHostUnregister(registered));
    free(registered);
}

static void test_peer_copy(void **state)
{
    CUcontext ctx0 = *state, ctx1;
    ok_cu(cuCtxCreate(&ctx1, NULL, 0, 1));
    CUdeviceptr on1;
    ok_cu(cuMemAlloc(&on1, 4096));
    int ordinal = -1;
    ok_cu(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, on1));
    assert_int_equal(ordinal, 1);
    ok_cu(cuCtxPopCurrent(NULL));
    CUdeviceptr on0;
    ok_cu(cuMemAlloc(&on0, 4096));
    ok_cu(cuMemsetD8(on0, 0x5a, 4096));
    ok_cu(cuMemcpyPeer(on1, ctx1, on0, ctx0, 4096));
    unsigned char b[4096];
    ok_cu(cuMemcpyDtoH(b, on1, sizeof b));
    assert_int_equal(b[4095], 0x5a);
    expect_cu(CUDA_ERROR_INVALID_CONTEXT, cuMemcpyPeer(on1, NULL, on0, ctx0, 16));
    ok_cu(cuMemFree(on0));
    ok_cu(cuCtxDestroy(ctx1)); /* frees on1 with it */
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(on1));
}

static void test_vmm(void **state)
{
    (void)state;
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    size_t gran = 0;
    ok_cu(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    assert_true(gran > 0);
    CUmemGenericAllocationHandle h;
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&h, gran + 1, &prop, 0));
    ok_cu(cuMemCreate(&h, gran, &prop, 0));
    CUdeviceptr va;
    ok_cu(cuMemAddressReserve(&va, 2 * gran, 0, 0, 0));
    ok_cu(cuMemMap(va, gran, 0, h, 0));
    ok_cu(cuMemMap(va + gran, gran, 0, h, 0));                  /* the same memory twice */
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(va, 1, 16)); /* no access yet */
    CUmemAccessDesc access = {.location = prop.location,
                              .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    ok_cu(cuMemSetAccess(va, 2 * gran, &access, 1));
    ok_cu(cuMemsetD8(va, 0x33, 16));
    unsigned char b[16];
    ok_cu(cuMemcpyDtoH(b, va + gran, sizeof b)); /* visible through the alias */
    assert_int_equal(b[15], 0x33);
    unsigned type = 0;
    void *start = NULL;
    ok_cu(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va));
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    ok_cu(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, va + gran + 5));
    assert_ptr_equal(start, (void *)(uintptr_t)va);
    ok_cu(cuMemRelease(h)); /* the mappings keep the memory */
    ok_cu(cuMemcpyDtoH(b, va, sizeof b));
    assert_int_equal(b[0], 0x33);
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemAddressFree(va, 2 * gran)); /* still mapped */
    ok_cu(cuMemUnmap(va, gran));
    ok_cu(cuMemUnmap(va + gran, gran));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemUnmap(va, gran));
    ok_cu(cuMemAddressFree(va, 2 * gran));
}

static void test_stream_ordered(void **state)
{
    (void)state;
    CUstream s;
    ok_cu(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUmemoryPool pool, current;
    ok_cu(cuDeviceGetDefaultMemPool(&pool, 0));
    ok_cu(cuDeviceGetMemPool(&current, 0));
    assert_ptr_equal(pool, current);
    CUdeviceptr p;
    ok_cu(cuMemAllocAsync(&p, 1 << 16, s));
    cuuint64_t used = 0;
    ok_cu(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
    assert_int_equal(used, 1 << 16);
    CUmemoryPool of = NULL;
    ok_cu(cuPointerGetAttribute(&of, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p));
    assert_ptr_equal(of, pool);
    ok_cu(cuMemsetD32Async(p, 5, 16, s));
    uint32_t v[16];
    ok_cu(cuMemcpyDtoHAsync(v, p, sizeof v, s));
    ok_cu(cuMemFreeAsync(p, s));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemFreeAsync(p, s)); /* already being freed */
    ok_cu(cuStreamSynchronize(s));
    assert_int_equal(v[15], 5);
    ok_cu(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
    assert_int_equal(used, 0);
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolDestroy(pool)); /* the default pool */

    /* The CUDA 13 forms, by location. */
    CUmemLocation dev0 = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    CUmemoryPool by_location, mine;
    CUmemPoolProps props = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED, .location = dev0};
    ok_cu(cuMemGetDefaultMemPool(&by_location, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
    assert_ptr_equal(by_location, pool);
    ok_cu(cuMemPoolCreate(&mine, &props));
    ok_cu(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_PINNED, mine));
    ok_cu(cuMemGetMemPool(&by_location, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
    assert_ptr_equal(by_location, mine);
    ok_cu(cuMemAllocAsync(&p, 256, s));
    ok_cu(cuPointerGetAttribute(&of, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p));
    assert_ptr_equal(of, mine);
    ok_cu(cuMemFreeAsync(p, s));
    ok_cu(cuStreamSynchronize(s));
    ok_cu(cuMemPoolDestroy(mine));
    ok_cu(cuDeviceGetMemPool(&current, 0));
    assert_ptr_equal(current, pool); /* back to the default */
    CUmemLocation host = {.type = CU_MEM_LOCATION_TYPE_HOST};
    expect_cu(CUDA_ERROR_INVALID_VALUE,
              cuMemGetMemPool(&by_location, &host, CU_MEM_ALLOCATION_TYPE_PINNED));
    ok_cu(cuStreamDestroy(s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_free),     cmocka_unit_test(test_copies_move_data),
        cmocka_unit_test(test_copy_2d),        cmocka_unit_test(test_copy_3d),
        cmocka_unit_test(test_memsets),        cmocka_unit_test(test_host_memory),
        cmocka_unit_test(test_managed),        cmocka_unit_test(test_pointer_attributes),
        cmocka_unit_test(test_peer_copy),      cmocka_unit_test(test_vmm),
        cmocka_unit_test(test_stream_ordered),
    };
    return cmocka_run_group_tests(tests, setup_primary, teardown_primary);
}
