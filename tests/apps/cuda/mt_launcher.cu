// Many threads launching many empty kernels, each thread on its own stream: the load
// a tracer's hot path must carry.
//
// Usage: mt_launcher [threads=8] [launches=50000]
//  - each thread: one non-blocking stream, `launches` launches of empty_kernel,
//    one cudaStreamSynchronize, the stream destroyed
#include <pthread.h>
#include <cstdio>

#include "app_util.h"
#include "manifest.h"

__global__ void empty_kernel() {}

static long launches_per_thread;

static void check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) app_fail(what, cudaGetErrorName(err), (int)err);
}

#define CHECK(call) check((call), #call)

static void *launcher(void *)
{
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (long i = 0; i < launches_per_thread; i++)
        empty_kernel<<<1, 1, 0, s>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaStreamDestroy(s));
    app_manifest_kernel("empty_kernel", (unsigned long long)launches_per_thread, false);
    app_manifest_sync("cudaStreamSynchronize", 1);
    return nullptr;
}

int main(int argc, char **argv)
{
    app_program = "mt_launcher";
    long threads = app_arg(argc, argv, 1, "threads", 8, 1);
    launches_per_thread = app_arg(argc, argv, 2, "launches", 50000, 0);
    pthread_t *ids = new pthread_t[threads];
    for (long t = 0; t < threads; t++)
        if (pthread_create(&ids[t], nullptr, launcher, nullptr) != 0) app_wrong("pthread_create");
    for (long t = 0; t < threads; t++)
        pthread_join(ids[t], nullptr);
    delete[] ids;
    return app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
}
