/* Runtime tests: allocation, copies and memsets, data checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_test.h"

/* Per-thread-default-stream entry points, declared by the headers only when a program
 * is compiled for that mode. */
cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count);
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream);

#define N 4096

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i * 7);
}

static void expect_bytes(const unsigned char *p, size_t n, unsigned char value)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != value) fail_msg("byte %zu is 0x%02x, expected 0x%02x", i, p[i], value);
}

static void test_device_allocation(void **state)
{
    (void)state;
    void *p = (void *)1;
    assert_cuda(cudaMalloc(&p, 0));
    assert_null(p);
    assert_int_equal(cudaMalloc(NULL, 16), cudaErrorInvalidValue);
    assert_int_equal(cudaMalloc(&p, (size_t)1 << 62), cudaErrorMemoryAllocation);
    assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
    assert_cuda(cudaFree(NULL));
    assert_cuda(cudaMalloc(&p, N));
    assert_non_null(p);
    assert_cuda(cudaFree(p));
    assert_int_equal(cudaFree(p), cudaErrorInvalidValue);
    int on_stack;
    assert_int_equal(cudaFree(&on_stack), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
}

static void test_memory_info_follows_allocations(void **state)
{
    (void)state;
    size_t free_before, total, free_after;
    assert_cuda(cudaMemGetInfo(&free_before, &total));
    assert_true(free_before <= total);
    void *p;
    assert_cuda(cudaMalloc(&p, 64 << 20));
    assert_cuda(cudaMemGetInfo(&free_after, &total));
    assert_true(free_after + (64 << 20) <= free_before);
    assert_cuda(cudaFree(p));
}

static void test_pinned_host_memory(void **state)
{
    (void)state;
    void *pinned = NULL, *mapped = NULL, *device = NULL;
    assert_cuda(cudaMallocHost(&pinned, N));
    memset(pinned, 1, N);
    assert_cuda(cudaHostAlloc(&mapped, N, cudaHostAllocPortable | cudaHostAllocMapped));
    assert_cuda(cudaHostGetDevicePointer(&device, mapped, 0));
    assert_non_null(device);
    assert_int_equal(cudaHostAlloc(&mapped, N, 0x100), cudaErrorInvalidValue);
    void *pageable = malloc(N);
    assert_int_equal(cudaFreeHost(pageable), cudaErrorInvalidValue);
    free(pageable);
    assert_cuda(cudaFreeHost(NULL));
    assert_cuda(cudaFreeHost(pinned));
    assert_int_equal(cudaFreeHost(pinned), cudaErrorInvalidValue);
    cudaGetLastError();
    void *zero = (void *)1;
    assert_cuda(cudaMallocHost(&zero, 0));
    assert_null(zero);
}

static void test_host_registration(void **state)
{
    (void)state;
    unsigned char *host = malloc(N);
    assert_cuda(cudaHostRegister(host, N, cudaHostRegisterDefault));
    assert_int_equal(cudaHostRegister(host, N, cudaHostRegisterDefault),
                     cudaErrorHostMemoryAlreadyRegistered);
    assert_cuda(cudaHostUnregister(host));
    assert_int_equal(cudaHostUnregister(host), cudaErrorHostMemoryNotRegistered);
    assert_int_equal(cudaGetLastError(), cudaErrorHostMemoryNotRegistered);
    free(host);
}

static void test_managed_memory(void **state)
{
    (void)state;
    unsigned char *managed = NULL, *check = malloc(N);
    assert_cuda(cudaMallocManaged((void **)&managed, N, cudaMemAttachGlobal));
    fill(managed, N, 3);
    void *device;
    assert_cuda(cudaMalloc(&device, N));
    assert_cuda(cudaMemcpy(device, managed, N, cudaMemcpyDefault));
    assert_cuda(cudaMemcpy(check, device, N, cudaMemcpyDeviceToHost));
    assert_memory_equal(check, managed, N);
    assert_int_equal(cudaMallocManaged((void **)&managed, 0, cudaMemAttachGlobal),
                     cudaErrorInvalidValue);
    assert_int_equal(cudaMallocManaged(NULL, N, cudaMemAttachGlobal), cudaErrorInvalidValue);
    cudaGetLastError();
    assert_cuda(cudaFree(device));
    free(check);
}

static void test_stream_ordered_allocation(void **state)
{
    (void)state;
    cudaStream_t s;
    unsigned char *p = NULL, *host = malloc(N);
    assert_cuda(cudaStreamCreate(&s));
    assert_cuda(cudaMallocAsync((void **)&p, N, s));
    assert_non_null(p);
    assert_cuda(cudaMemsetAsync(p, 0x6b, N, s));
    assert_cuda(cudaMemcpyAsync(host, p, N, cudaMemcpyDeviceToHost, s));
    assert_cuda(cudaFreeAsync(p, s));
    assert_cuda(cudaStreamSynchronize(s));
    expect_bytes(host, N, 0x6b);
    assert_int_equal(cudaMallocAsync(NULL, N, s), cudaErrorInvalidValue);
    cudaGetLastError();
    assert_cuda(cudaStreamDestroy(s));
    free(host);
}

static void test_copies_of_every_kind(void **state)
{
    (void)state;
    unsigned char *src = malloc(N), *dst = malloc(N), *pinned;
    void *a, *b;
    assert_cuda(cudaMallocHost((void **)&pinned, N));
    assert_cuda(cudaMalloc(&a, N));
    assert_cuda(cudaMalloc(&b, N));
    fill(src, N, 9);
    assert_cuda(cudaMemcpy(a, src, N, cudaMemcpyHostToDevice));
    assert_cuda(cudaMemcpy(b, a, N, cudaMemcpyDeviceToDevice));
    assert_cuda(cudaMemcpy(pinned, b, N, cudaMemcpyDeviceToHost));
    assert_memory_equal(pinned, src, N);
    assert_cuda(cudaMemcpy(dst, pinned, N, cudaMemcpyHostToHost));
    assert_memory_equal(dst, src, N);

    fill(src, N, 10);
    memset(dst, 0, N);
    assert_cuda(cudaMemcpy(a, src, N, cudaMemcpyDefault));
    assert_cuda(cudaMemcpy(dst, a, N, cudaMemcpyDefault));
    assert_memory_equal(dst, src, N);

    cudaStream_t s;
    assert_cuda(cudaStreamCreate(&s));
    fill(pinned, N, 11);
    assert_cuda(cudaMemcpyAsync(a, pinned, N, cudaMemcpyHostToDevice, s));
    assert_cuda(cudaMemcpyAsync(b, a, N, cudaMemcpyDeviceToDevice, s));
    assert_cuda(cudaMemcpyAsync(dst, b, N, cudaMemcpyDeviceToHost, s));
    assert_cuda(cudaStreamSynchronize(s));
    assert_memory_equal(dst, pinned, N);

    fill(src, N, 12);
    assert_cuda(cudaMemcpy_ptds(a, src, N, cudaMemcpyHostToDevice));
    assert_cuda(cudaMemcpyAsync_ptsz(dst, a, N, cudaMemcpyDeviceToHost, 0));
    assert_cuda(cudaStreamSynchronize(cudaStreamPerThread));
    assert_memory_equal(dst, src, N);

    assert_int_equal(cudaMemcpy(a, src, N, (enum cudaMemcpyKind)5),
                     cudaErrorInvalidMemcpyDirection);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
    assert_cuda(cudaStreamDestroy(s));
    assert_cuda(cudaFree(a));
    assert_cuda(cudaFree(b));
    assert_cuda(cudaFreeHost(pinned));
    free(src);
    free(dst);
}

static void test_2d_copies(void **state)
{
    (void)state;
    enum { ROWS = 16, WIDTH = 100, HOST_PITCH = 128 };
    unsigned char *src = malloc(HOST_PITCH * ROWS), *dst = calloc(HOST_PITCH, ROWS);
    fill(src, HOST_PITCH * ROWS, 13);
    void *a, *b;
    size_t pitch = 256;
    assert_cuda(cudaMalloc(&a, pitch * ROWS));
    assert_cuda(cudaMalloc(&b, pitch * ROWS));
    assert_cuda(cudaMemcpy2D(a, pitch, src, HOST_PITCH, WIDTH, ROWS, cudaMemcpyHostToDevice));
    cudaStream_t s;
    assert_cuda(cudaStreamCreate(&s));
    assert_cuda(cudaMemcpy2DAsync(b, pitch, a, pitch, WIDTH, ROWS, cudaMemcpyDeviceToDevice, s));
    assert_cuda(cudaStreamSynchronize(s));
    assert_cuda(cudaMemcpy2D(dst, HOST_PITCH, b, pitch, WIDTH, ROWS, cudaMemcpyDeviceToHost));
    for (int r = 0; r < ROWS; r++) {
        assert_memory_equal(dst + r * HOST_PITCH, src + r * HOST_PITCH, WIDTH);
        expect_bytes(dst + r * HOST_PITCH + WIDTH, HOST_PITCH - WIDTH, 0);
    }
    assert_int_equal(cudaMemcpy2D(a, 64, src, HOST_PITCH, WIDTH, ROWS, cudaMemcpyHostToDevice),
                     cudaErrorInvalidPitchValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidPitchValue);
    assert_cuda(cudaStreamDestroy(s));
    assert_cuda(cudaFree(a));
    assert_cuda(cudaFree(b));
    free(src);
    free(dst);
}

static void test_memsets(void **state)
{
    (void)state;
    enum { ROWS = 8, PITCH = 512, WIDTH = 300 };
    unsigned char *host = malloc(PITCH * ROWS);
    void *p;
    cudaStream_t s;
    assert_cuda(cudaStreamCreate(&s));
    assert_cuda(cudaMalloc(&p, PITCH * ROWS));
    assert_cuda(cudaMemset(p, 0x1ff, PITCH * ROWS)); /* only the low byte counts */
    assert_cuda(cudaMemcpy(host, p, PITCH * ROWS, cudaMemcpyDeviceToHost));
    expect_bytes(host, PITCH * ROWS, 0xff);
    assert_cuda(cudaMemsetAsync(p, 0x22, PITCH * ROWS, s));
    assert_cuda(cudaStreamSynchronize(s));
    assert_cuda(cudaMemset2D(p, PITCH, 0x33, WIDTH, ROWS));
    assert_cuda(cudaMemcpy(host, p, PITCH * ROWS, cudaMemcpyDeviceToHost));
    for (int r = 0; r < ROWS; r++) {
        expect_bytes(host + r * PITCH, WIDTH, 0x33);
        expect_bytes(host + r * PITCH + WIDTH, PITCH - WIDTH, 0x22);
    }
    assert_cuda(cudaMemset2DAsync(p, PITCH, 0x44, PITCH, ROWS, s));
    assert_cuda(cudaStreamSynchronize(s));
    assert_cuda(cudaMemset_ptds(p, 0x55, PITCH));
    assert_cuda(cudaMemcpy(host, p, PITCH * ROWS, cudaMemcpyDeviceToHost));
    expect_bytes(host, PITCH, 0x55);
    expect_bytes(host + PITCH, PITCH * (ROWS - 1), 0x44);
    assert_int_equal(cudaMemset2D(p, 16, 0, WIDTH, ROWS), cudaErrorInvalidPitchValue);
    int on_stack;
    assert_int_equal(cudaMemset(&on_stack, 0, sizeof(on_stack)), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_cuda(cudaFree(p));
    assert_cuda(cudaStreamDestroy(s));
    free(host);
}

static void test_library_globals_and_files(void **state)
{
    (void)state;
    struct rt_test_library lib;
    rt_test_load(&lib);
    int *counter = NULL;
    size_t size = 0;
    assert_cuda(cudaLibraryGetGlobal((void **)&counter, &size, lib.library, "rt_counter"));
    assert_int_equal(size, 4 * sizeof(int));
    int in[4] = {1, 2, 3, 4}, out[4] = {0};
    assert_cuda(cudaMemcpy(counter, in, sizeof(in), cudaMemcpyHostToDevice));
    assert_cuda(cudaMemcpy(out, counter, sizeof(out), cudaMemcpyDeviceToHost));
    assert_memory_equal(in, out, sizeof(in));
    assert_int_equal(cudaLibraryGetGlobal((void **)&counter, &size, lib.library, "no_such"),
                     cudaErrorSymbolNotFound);
    cudaGetLastError();
    rt_test_unload(&lib);

    char path[] = "/tmp/rt_test_library_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_int_equal(fwrite(rt_test_image.data, 1, rt_test_image.size, f), rt_test_image.size);
    assert_int_equal(fclose(f), 0);
    cudaLibrary_t from_file;
    cudaKernel_t kernel;
    assert_cuda(cudaLibraryLoadFromFile(&from_file, path, NULL, NULL, 0, NULL, NULL, 0));
    unlink(path);
    assert_cuda(cudaLibraryGetKernel(&kernel, from_file, "rt_long"));
    assert_int_equal(cudaLibraryGetKernel(&kernel, from_file, "no_such"), cudaErrorSymbolNotFound);
    cudaGetLastError();
    assert_cuda(cudaLibraryUnload(from_file));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_allocation),
        cmocka_unit_test(test_memory_info_follows_allocations),
        cmocka_unit_test(test_pinned_host_memory),
        cmocka_unit_test(test_host_registration),
        cmocka_unit_test(test_managed_memory),
        cmocka_unit_test(test_stream_ordered_allocation),
        cmocka_unit_test(test_copies_of_every_kind),
        cmocka_unit_test(test_2d_copies),
        cmocka_unit_test(test_memsets),
        cmocka_unit_test(test_library_globals_and_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
