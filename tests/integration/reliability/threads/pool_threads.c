/* A pool of many threads, each recording a little and then idling, as
 * servers and data loaders do: THREADS threads each launch a kernel, wait
 * until every thread has (so that all of them hold what they recorded at
 * once), idle for IDLE_MS, then launch LATER kernels more.
 *
 *   pool_threads THREADS IDLE_MS LATER
 *
 * Prints the number of launches made. */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "app_util.h"
#include "test_support.h"

static CUcontext ctx;
static CUfunction kernel;
static pthread_barrier_t all_launched;
static long idle_ms, later;

static void launch(void)
{
    app_check(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
}

static void *worker(void *unused)
{
    (void)unused;
    app_check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    launch();
    pthread_barrier_wait(&all_launched);
    struct timespec idle = {idle_ms / 1000, (idle_ms % 1000) * 1000000};
    nanosleep(&idle, NULL);
    for (long i = 0; i < later; i++)
        launch();
    return NULL;
}

int main(int argc, char **argv)
{
    app_program = "pool_threads";
    if (argc != 4) {
        fprintf(stderr, "usage: pool_threads THREADS IDLE_MS LATER\n");
        return APP_EXIT_USAGE;
    }
    long threads = atol(argv[1]);
    idle_ms = atol(argv[2]);
    later = atol(argv[3]);
    ctx = context_on_device0();
    kernel = empty_kernel("pool_kernel", NULL);
    pthread_barrier_init(&all_launched, NULL, (unsigned)threads);
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    for (long i = 0; t && i < threads; i++)
        if (pthread_create(&t[i], &attr, worker, NULL) != 0) app_wrong("pthread_create");
    for (long i = 0; t && i < threads; i++)
        pthread_join(t[i], NULL);
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    printf("%ld launches\n", threads * (1 + later));
    free(t);
    return 0;
}
