/* Copies from every kind of host memory, each a synchronous HtoD copy into
 * device memory and a DtoH copy back, data checked, written to the
 * manifest (tests/apps/common/manifest.h) with the host memory kind the
 * copy's host side really is:
 *
 *   pageable    malloc
 *   pinned      cuMemAllocHost, cuMemHostAlloc, cudaMallocHost, malloc'ed
 *               memory registered with cuMemHostRegister, a pointer inside a
 *               page-locked allocation, and page-locked memory the driver
 *               allocated behind the tracer's back (the tracer must ask the
 *               driver about a pointer it never saw allocated)
 *   pageable    the registered memory again, after cuMemHostUnregister
 *   managed     cuMemAllocManaged
 *   pageable    memory mapped where page-locked memory was that the end of
 *               its context freed
 *
 * Usage: host_copies [bytes=65536] */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "app_util.h"
#include "test_support.h"
#include "manifest.h"
#include "real_driver.h"

static CUdeviceptr device_buf;
static unsigned char *check_buf;
static size_t bytes;

static void check_rt(cudaError_t r, const char *what)
{
    if (r != cudaSuccess) app_fail(what, cudaGetErrorName(r), (int)r);
}

/* A round trip through device memory from and to `host`, of `kind`. */
static void round_trip(void *host, enum app_host_memory kind, unsigned seed, const char *what)
{
    app_fill_pattern(host, bytes, seed);
    app_check(cuMemcpyHtoD(device_buf, host, bytes), "cuMemcpyHtoD");
    app_manifest_copy(APP_HTOD, kind, false, bytes, false);
    app_check(cuMemcpyDtoH(check_buf, device_buf, bytes), "cuMemcpyDtoH");
    app_manifest_copy(APP_DTOH, APP_PAGEABLE, false, bytes, false);
    app_expect_same(host, check_buf, bytes, what);
    app_check(cuMemcpyDtoH(host, device_buf, bytes), "cuMemcpyDtoH");
    app_manifest_copy(APP_DTOH, kind, false, bytes, false);
}

int main(int argc, char **argv)
{
    app_program = "host_copies";
    bytes = (size_t)app_arg(argc, argv, 1, "bytes", 65536, 1);
    CUcontext ctx = context_on_device0();
    app_check(cuMemAlloc(&device_buf, bytes), "cuMemAlloc");
    check_buf = malloc(bytes);
    unsigned char *pageable = malloc(bytes), *registered = NULL;
    if (!check_buf || !pageable || posix_memalign((void **)&registered, 4096, bytes) != 0)
        app_wrong("out of host memory");
    round_trip(pageable, APP_PAGEABLE, 1, "pageable");

    void *alloc_host, *host_alloc, *rt_host, *unseen;
    app_check(cuMemAllocHost(&alloc_host, bytes + 256), "cuMemAllocHost");
    round_trip(alloc_host, APP_PINNED, 2, "cuMemAllocHost");
    round_trip((unsigned char *)alloc_host + 256, APP_PINNED, 3, "inside cuMemAllocHost");
    app_check(cuMemHostAlloc(&host_alloc, bytes, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
    round_trip(host_alloc, APP_PINNED, 4, "cuMemHostAlloc");
    check_rt(cudaMallocHost(&rt_host, bytes), "cudaMallocHost");
    round_trip(rt_host, APP_PINNED, 5, "cudaMallocHost");

    app_check(cuMemHostRegister(registered, bytes, 0), "cuMemHostRegister");
    round_trip(registered, APP_PINNED, 6, "registered");
    app_check(cuMemHostUnregister(registered), "cuMemHostUnregister");
    round_trip(registered, APP_PAGEABLE, 7, "unregistered");

    CUdeviceptr managed;
    app_check(cuMemAllocManaged(&managed, bytes, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
    round_trip((void *)(uintptr_t)managed, APP_MANAGED, 8, "managed");

    typedef CUresult (*alloc_host_fn)(void **, size_t);
    alloc_host_fn real_alloc_host = (alloc_host_fn)real_driver_symbol("cuMemAllocHost_v2");
    if (!real_alloc_host) app_wrong("no cuMemAllocHost_v2 in libcuda.so.1's symbol table");
    app_check(real_alloc_host(&unseen, bytes), "cuMemAllocHost_v2 (the driver's own)");
    round_trip(unseen, APP_PINNED, 9, "page-locked behind the tracer's back");

    app_check(cuMemFreeHost(unseen), "cuMemFreeHost");
    app_check(cuMemFree(managed), "cuMemFree");
    check_rt(cudaFreeHost(rt_host), "cudaFreeHost");
    app_check(cuMemFreeHost(host_alloc), "cuMemFreeHost");
    app_check(cuMemFreeHost(alloc_host), "cuMemFreeHost");
    app_check(cuMemFree(device_buf), "cuMemFree");

    /* Page-locked memory the context's end frees, its addresses mapped
     * again as pageable memory (where the system lets this program map
     * them: it does on the emulated driver). */
    void *doomed;
    app_check(cuMemAllocHost(&doomed, bytes), "cuMemAllocHost");
    app_check(cuCtxDestroy(ctx), "cuCtxDestroy");
    void *again = mmap(doomed, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (again == doomed) {
        context_on_device0();
        app_check(cuMemAlloc(&device_buf, bytes), "cuMemAlloc");
        round_trip(doomed, APP_PAGEABLE, 10, "pageable where a context's page-locked memory was");
        app_check(cuMemFree(device_buf), "cuMemFree");
        munmap(doomed, bytes);
    } else if (again != MAP_FAILED) {
        munmap(again, bytes);
    }
    free(registered);
    free(pageable);
    free(check_buf);
    if (app_manifest_write("host_copies") != 0) app_wrong("cannot write the manifest");
    return 0;
}
