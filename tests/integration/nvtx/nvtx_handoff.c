/* Start/end ranges ended on another thread, as a producer hands work to a
 * consumer: the main thread starts a range, launches a kernel inside it,
 * hands the range's id to another thread, which ends it, and once it has,
 * launches a kernel outside it; ROUNDS times. Each range encloses exactly
 * one kernel. The ending thread's records reach the tracer in their own
 * time, after the main thread's later kernels.
 *
 *   nvtx_handoff ROUNDS */
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_util.h"
#include "test_support.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static nvtxRangeId_t handed;
static int has_range, finished;

static void *ender(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!has_range && !finished)
            pthread_cond_wait(&changed, &lock);
        if (!has_range) break;
        nvtxRangeEnd(handed);
        has_range = 0;
        pthread_cond_broadcast(&changed);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void hand_over(nvtxRangeId_t id)
{
    pthread_mutex_lock(&lock);
    handed = id;
    has_range = 1;
    pthread_cond_broadcast(&changed);
    while (has_range)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
    app_program = "nvtx_handoff";
    long rounds = app_arg(argc, argv, 1, "rounds", 1000, 1);
    context_on_device0();
    CUfunction kernel = empty_kernel("handoff_kernel", NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, ender, NULL) != 0) app_wrong("pthread_create");
    for (long i = 0; i < rounds; i++) {
        nvtxRangeId_t id = nvtxRangeStartA("handed");
        app_check(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
        hand_over(id);
        app_check(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
    }
    pthread_mutex_lock(&lock);
    finished = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    printf("%ld ranges\n", rounds);
    return 0;
}
