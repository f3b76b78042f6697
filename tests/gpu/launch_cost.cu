// What one kernel launch costs the host, and what one cuEventRecord costs: the figures
// that say what a tracer adds to a launch-bound program (scripts/gpu_check/launch_cost.py
// runs this bare and under each tracer).
//
// Usage: launch_cost MODE LAUNCHES
//   one    LAUNCHES empty-kernel launches on one non-blocking stream
//   four   4 threads, each launching LAUNCHES/4 on a stream of its own, started together
//          by a barrier: wall from the barrier to the last thread done, per launch
//   event  LAUNCHES cuEventRecord calls on an idle stream (default-flag event), the call
//          gputrace makes twice per timed launch
// Each mode first does WARMUP launches (records), split among its threads, and
// synchronizes, so that module loading and first-use costs stay out of the timing. The
// result is one JSON line on stdout. Exit status 2 when a CUDA call fails, 64 on bad
// arguments.
#include <cuda.h>
#include <pthread.h>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "app_util.h"

#define THREADS 4
#define WARMUP 10000

__global__ void empty_kernel() {}

static void check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) app_fail(what, cudaGetErrorName(err), (int)err);
}

static void check_drv(CUresult err, const char *what)
{
    const char *name = "unknown error";
    if (err != CUDA_SUCCESS) {
        cuGetErrorName(err, &name);
        app_fail(what, name, (int)err);
    }
}

#define CHECK(call) check((call), #call)
#define CHECK_DRV(call) check_drv((call), #call)

static double now_ns()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void launch(cudaStream_t s, long n)
{
    for (long i = 0; i < n; i++)
        empty_kernel<<<1, 1, 0, s>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
}

static cudaStream_t new_stream()
{
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
}

static void one(long launches)
{
    cudaStream_t s = new_stream();
    launch(s, WARMUP);
    double start = now_ns();
    launch(s, launches);
    double wall = now_ns() - start;
    CHECK(cudaStreamDestroy(s));
    printf("{\"mode\":\"one\",\"launches\":%ld,\"warmup\":%d,\"threads\":1,"
           "\"ns_per_launch\":%.1f}\n", launches, WARMUP, wall / launches);
}

static pthread_barrier_t ready;
static long per_thread;

static void *launcher(void *)
{
    cudaStream_t s = new_stream();
    launch(s, WARMUP / THREADS);
    pthread_barrier_wait(&ready);
    launch(s, per_thread);
    CHECK(cudaStreamDestroy(s));
    return nullptr;
}

static void four(long launches)
{
    per_thread = launches / THREADS;
    if (per_thread == 0) app_wrong("four needs LAUNCHES >= 4");
    pthread_t ids[THREADS];
    // The main thread waits at the barrier too: its release is the start of the timing.
    if (pthread_barrier_init(&ready, nullptr, THREADS + 1) != 0) app_wrong("pthread_barrier_init");
    for (pthread_t &id : ids)
        if (pthread_create(&id, nullptr, launcher, nullptr) != 0) app_wrong("pthread_create");
    pthread_barrier_wait(&ready);
    double start = now_ns();
    for (pthread_t id : ids)
        pthread_join(id, nullptr);
    double wall = now_ns() - start;
    long total = per_thread * THREADS;
    printf("{\"mode\":\"four\",\"launches\":%ld,\"warmup\":%d,\"threads\":%d,"
           "\"ns_per_launch\":%.1f}\n", total, WARMUP / THREADS * THREADS, THREADS, wall / total);
}

static void record(CUevent ev, CUstream s, long n)
{
    for (long i = 0; i < n; i++)
        CHECK_DRV(cuEventRecord(ev, s));
    CHECK_DRV(cuStreamSynchronize(s));
}

static void event(long records)
{
    cudaStream_t s = new_stream();
    CUevent ev;
    CHECK_DRV(cuEventCreate(&ev, CU_EVENT_DEFAULT));
    record(ev, s, WARMUP);
    double start = now_ns();
    record(ev, s, records);
    double wall = now_ns() - start;
    CHECK_DRV(cuEventDestroy(ev));
    CHECK(cudaStreamDestroy(s));
    printf("{\"mode\":\"event\",\"records\":%ld,\"warmup\":%d,\"ns_per_record\":%.1f}\n",
           records, WARMUP, wall / records);
}

int main(int argc, char **argv)
{
    app_program = "launch_cost";
    const char *mode = argc > 1 ? argv[1] : "";
    long n = app_arg(argc, argv, 2, "launches", 1000000, 1);
    // The runtime makes the device's primary context current, which the driver calls use.
    CHECK(cudaFree(nullptr));
    if (strcmp(mode, "one") == 0)
        one(n);
    else if (strcmp(mode, "four") == 0)
        four(n);
    else if (strcmp(mode, "event") == 0)
        event(n);
    else {
        fprintf(stderr, "usage: launch_cost one|four|event [LAUNCHES]\n");
        return APP_EXIT_USAGE;
    }
    return 0;
}
