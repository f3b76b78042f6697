/* A program that starts CUPTI itself midway, as torch.profiler does: it
 * launches `before` kernels, then opens libcupti, registers its own
 * activity buffers and enables kernel records, launches `after` kernels,
 * flushes, and counts the kernel records CUPTI gave it. It exits 0 when it
 * got one for each of the `after` launches (a tracer that kept CUPTI for
 * itself would leave it with none), and writes "own_cupti: N kernel
 * records" on stdout.
 *
 * Usage: own_cupti [before=20] [after=30]; libcupti.so.13 from the
 * loader's path. */
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

#include "app_driver.h"
#include "app_kernels_ptx.h"
#include "app_util.h"

#define BUFFER_BYTES (1u << 20)
#define N 256

static CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
static int kernel_records;

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *r = NULL;
    while (next_record(buffer, valid, &r) == CUPTI_SUCCESS)
        kernel_records += r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    free(buffer);
}

static void *need(void *lib, const char *name)
{
    void *fn = dlsym(lib, name);
    if (!fn) app_wrong(name);
    return fn;
}

static void launch(CUfunction f, CUdeviceptr x, int times)
{
    float factor = 1.0f;
    int n = N;
    void *args[] = {&x, &factor, &n};
    for (int i = 0; i < times; i++)
        app_check(cuLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
}

int main(int argc, char **argv)
{
    app_program = "own_cupti";
    long before = app_arg(argc, argv, 1, "before", 20, 0);
    long after = app_arg(argc, argv, 2, "after", 30, 0);
    app_primary_context();
    CUmodule module;
    CUfunction vec_add, scale;
    app_vector_kernels(app_kernels_ptx, &module, &vec_add, &scale);
    CUdeviceptr x;
    app_check(cuMemAlloc(&x, N * sizeof(float)), "cuMemAlloc");
    launch(scale, x, (int)before);

    void *lib = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!lib) app_wrong("dlopen libcupti.so.13");
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc) =
        need(lib, "cuptiActivityRegisterCallbacks");
    CUptiResult (*enable)(CUpti_ActivityKind) = need(lib, "cuptiActivityEnable");
    CUptiResult (*flush_all)(uint32_t) = need(lib, "cuptiActivityFlushAll");
    next_record = need(lib, "cuptiActivityGetNextRecord");
    if (register_callbacks(requested, completed) != CUPTI_SUCCESS ||
        enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
        app_wrong("CUPTI would not start");
    launch(scale, x, (int)after);
    flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    printf("own_cupti: %d kernel records\n", kernel_records);
    app_check(cuMemFree(x), "cuMemFree");
    return kernel_records == after ? 0 : APP_EXIT_WRONG_RESULT;
}
