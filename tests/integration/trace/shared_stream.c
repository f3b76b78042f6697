/* Threads sharing one stream: THREADS threads each launch a kernel on the
 * legacy default stream in ROUNDS rounds, all waiting for one another
 * between rounds. Each thread's records reach the trace together, and its
 * GPU work interleaves with every other thread's across the whole run, so
 * the Perfetto trace needs more lanes for that stream than it may have. */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 40
#define ROUNDS 20

static CUcontext ctx;
static CUfunction kernel;
static pthread_barrier_t round_done;

static void check(CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS) return;
    fprintf(stderr, "shared_stream: %s failed (%d)\n", what, (int)r);
    exit(1);
}

static void *launcher(void *unused)
{
    (void)unused;
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    for (int i = 0; i < ROUNDS; i++) {
        check(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
        pthread_barrier_wait(&round_done);
    }
    return NULL;
}

int main(void)
{
    static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                              ".visible .entry shared_kernel()\n{\n ret;\n}\n";
    CUdevice dev;
    CUmodule module;
    check(cuInit(0), "cuInit");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");
    check(cuModuleLoadData(&module, ptx), "cuModuleLoadData");
    check(cuModuleGetFunction(&kernel, module, "shared_kernel"), "cuModuleGetFunction");
    pthread_barrier_init(&round_done, NULL, THREADS);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&threads[i], NULL, launcher, NULL) != 0) return 1;
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    return 0;
}
