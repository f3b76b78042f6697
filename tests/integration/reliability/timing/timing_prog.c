/* GPU work that a tracer must time on whatever driver it finds: built with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, so every stream-ordered call is a
 * _ptsz/_ptds entry point and the NULL stream is each thread's per-thread
 * default stream.
 *
 *   timing_prog [launches]   (default 20)
 *
 * Work (check_timing.py derives the expected report from it and the
 * emulator's configured durations):
 *   - main thread, per-thread default stream: `launches` vec_add, one
 *     4 MiB pinned HtoD copy, one 1 MiB memset;
 *   - a second thread, its own per-thread default stream, at the same
 *     time: `launches` vec_add (so that each stream has work of the other
 *     beside it: an event on the wrong stream would time that wait too);
 *   - an explicit stream: `launches` apps::scale, then 3 more captured
 *     into a graph (which must hold exactly those 3 kernels: a tracer's
 *     event in a capturing stream would add nodes), launched once.
 * Prints one line per fact it checked; exit codes as tests/apps. */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>

#include "app_kernels_ptx.h"
#include "app_driver.h"
#include "app_util.h"

#define ELEMENTS 4096
#define BLOCK 256
#define COPY_BYTES (4u << 20)
#define MEMSET_BYTES (1u << 20)
#define CAPTURED 3

static CUcontext ctx;
static CUfunction vec_add, scale;
static CUdeviceptr x, y, z, big;
static long launches;

static void launch(CUfunction f, CUstream stream, const char *what)
{
    int n = ELEMENTS;
    float factor = 2.0f;
    void *add_args[] = {&x, &y, &z, &n};
    void *scale_args[] = {&z, &factor, &n};
    app_check(cuLaunchKernel(f, ELEMENTS / BLOCK, 1, 1, BLOCK, 1, 1, 0, stream,
                         f == vec_add ? add_args : scale_args, NULL),
          what);
}

static void *second_thread(void *arg)
{
    (void)arg;
    app_check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    for (long i = 0; i < launches; i++)
        launch(vec_add, NULL, "cuLaunchKernel vec_add (second thread)");
    app_check(cuStreamSynchronize(NULL), "cuStreamSynchronize (second thread)");
    return NULL;
}

/* Kernels captured from an explicit stream: the graph holds exactly them. */
static void capture(CUstream stream)
{
    CUgraph graph;
    CUgraphExec exec;
    app_check(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
    for (int i = 0; i < CAPTURED; i++)
        launch(scale, stream, "cuLaunchKernel apps::scale (captured)");
    app_check(cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
    size_t nodes = 0;
    app_check(cuGraphGetNodes(graph, NULL, &nodes), "cuGraphGetNodes");
    if (nodes != CAPTURED) app_wrong("the captured graph has other nodes than its kernels");
    printf("graph nodes %zu\n", nodes);
    app_check(cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
    app_check(cuGraphLaunch(exec, stream), "cuGraphLaunch");
    app_check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    app_check(cuGraphExecDestroy(exec), "cuGraphExecDestroy");
    app_check(cuGraphDestroy(graph), "cuGraphDestroy");
}

int main(int argc, char **argv)
{
    app_program = "timing_prog";
    launches = app_arg(argc, argv, 1, "launches", 20, 1);
    CUdevice dev = 0; /* app_primary_context's */
    CUmodule module;
    CUstream stream;
    void *pinned;
    ctx = app_primary_context();
    app_vector_kernels(app_kernels_ptx, &module, &vec_add, &scale);
    CUdeviceptr *bufs[] = {&x, &y, &z};
    for (int i = 0; i < 3; i++)
        app_check(cuMemAlloc(bufs[i], ELEMENTS * sizeof(float)), "cuMemAlloc");
    app_check(cuMemAlloc(&big, COPY_BYTES), "cuMemAlloc");
    app_check(cuMemAllocHost(&pinned, COPY_BYTES), "cuMemAllocHost");
    app_fill_pattern(pinned, COPY_BYTES, 17);
    app_check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");

    pthread_t other;
    if (pthread_create(&other, NULL, second_thread, NULL) != 0) app_wrong("pthread_create");
    for (long i = 0; i < launches; i++) {
        launch(vec_add, NULL, "cuLaunchKernel vec_add");
        launch(scale, stream, "cuLaunchKernel apps::scale");
    }
    app_check(cuMemcpyHtoDAsync(big, pinned, COPY_BYTES, NULL), "cuMemcpyHtoDAsync");
    app_check(cuMemsetD8Async(big, 0x2a, MEMSET_BYTES, NULL), "cuMemsetD8Async");
    app_check(cuStreamSynchronize(NULL), "cuStreamSynchronize");
    pthread_join(other, NULL);
    app_check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    capture(stream);

    /* The copy and the memset really happened, in order. */
    unsigned char *back = pinned;
    app_check(cuMemcpyDtoH(back, big, MEMSET_BYTES), "cuMemcpyDtoH");
    app_expect_bytes(back, MEMSET_BYTES, 0x2a, "memset bytes");
    printf("launches %ld per stream\n", launches);

    app_check(cuStreamDestroy(stream), "cuStreamDestroy");
    app_check(cuMemFreeHost(pinned), "cuMemFreeHost");
    CUdeviceptr *all[] = {&x, &y, &z, &big};
    for (int i = 0; i < 4; i++)
        app_check(cuMemFree(*all[i]), "cuMemFree");
    app_check(cuModuleUnload(module), "cuModuleUnload");
    app_check(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
    return 0;
}
