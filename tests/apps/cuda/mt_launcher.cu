// Many threads launching many empty kernels, each thread on its own stream (or all on
// one): the load a tracer's hot path must carry.
//
// Usage: mt_launcher [threads=8] [launches=50000] [shared=0]
//  - each thread: one non-blocking stream, `launches` launches of empty_kernel,
//    one cudaStreamSynchronize, the stream destroyed
//  - shared=1: every thread launches on one non-blocking stream the main thread
//    made, synchronizes it, and main destroys it after the joins
#include <pthread.h>
#include <cstdio>

#include "app_util.h"
#include "manifest.h"

__global__ void empty_kernel() {}

static long launches_per_thread;
static cudaStream_t shared_stream; // shared=1: every thread's stream

static void check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) app_fail(what, cudaGetErrorName(err), (int)err);
}

#define CHECK(call) check((call), #call)

static void *launcher(void *)
{
    cudaStream_t s = shared_stream;
    if (!s) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (long i = 0; i < launches_per_thread; i++)
        empty_kernel<<<1, 1, 0, s>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    if (!shared_stream) CHECK(cudaStreamDestroy(s));
    app_manifest_kernel("empty_kernel", (unsigned long long)launches_per_thread, false);
    app_manifest_sync("cudaStreamSynchronize", 1);
    return nullptr;
}

int main(int argc, char **argv)
{
    app_program = "mt_launcher";
    long threads = app_arg(argc, argv, 1, "threads", 8, 1);
    launches_per_thread = app_arg(argc, argv, 2, "launches", 50000, 0);
    if (app_arg(argc, argv, 3, "shared", 0, 0))
        CHECK(cudaStreamCreateWithFlags(&shared_stream, cudaStreamNonBlocking));
    pthread_t *ids = new pthread_t[threads];
    for (long t = 0; t < threads; t++)
        if (pthread_create(&ids[t], nullptr, launcher, nullptr) != 0) app_wrong("pthread_create");
    for (long t = 0; t < threads; t++)
        pthread_join(ids[t], nullptr);
    delete[] ids;
    if (shared_stream) CHECK(cudaStreamDestroy(shared_stream));
    return app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
}
