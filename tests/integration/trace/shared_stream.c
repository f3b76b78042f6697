/* Threads sharing one stream: THREADS threads each launch a kernel on the
 * legacy default stream in ROUNDS rounds, all waiting for one another
 * between rounds. Each thread's records reach the trace together, and its
 * GPU work interleaves with every other thread's across the whole run, so
 * the Perfetto trace needs more lanes for that stream than it may have. */
#include <cuda.h>
#include <pthread.h>

#include "app_util.h"
#include "test_support.h"

#define THREADS 40
#define ROUNDS 20

static CUcontext ctx;
static CUfunction kernel;
static pthread_barrier_t round_done;

static void *launcher(void *unused)
{
    (void)unused;
    app_check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    for (int i = 0; i < ROUNDS; i++) {
        app_check(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
        pthread_barrier_wait(&round_done);
    }
    return NULL;
}

int main(void)
{
    app_program = "shared_stream";
    ctx = context_on_device0();
    kernel = empty_kernel("shared_kernel", NULL);
    pthread_barrier_init(&round_done, NULL, THREADS);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&threads[i], NULL, launcher, NULL) != 0) app_wrong("pthread_create");
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    return 0;
}
