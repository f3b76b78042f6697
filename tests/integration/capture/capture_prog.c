/* Work inside and outside capture windows, so that a tracer's report can
 * be checked to hold exactly the work inside (check_capture.py).
 *
 *   capture_prog MODE [launches]     (launches default 10)
 *
 * Work inside a window is `vec_add`, outside `apps::scale`: a report that
 * has any apps::scale row recorded outside a window. Times are from the
 * start of main, which follows the shim's load by a few milliseconds.
 *
 * profiler  three profiler windows (cuProfilerStart/Stop, then the
 *           runtime's cudaProfilerStart/Stop, then the driver's again),
 *           each: `launches` vec_add, one 4 KiB pageable HtoD copy, a
 *           cuCtxSynchronize, 30 ms; before, between and after them
 *           `launches` apps::scale and a cuCtxSynchronize. Memory: 1 MiB
 *           allocated before the first window, 2 MiB in the first, the
 *           1 MiB freed between the first and the second, the 2 MiB freed
 *           in the second, 4 MiB allocated after the last and never freed.
 * nvtx      two threads: apps::scale, then both in a range "phase" (one
 *           pushed, one started on one thread and ended on the other),
 *           `launches` vec_add each, a range "inner" pushed inside it, and
 *           apps::scale again once neither is in "phase" (barriers order
 *           it). The starting thread pushes "straddle" before "phase" and
 *           pops it inside; marks "outside" and "inside".
 * timed     apps::scale at 0 ms, vec_add at 700 ms, apps::scale at
 *           1500 ms (for a delay of 0.4 s and a duration of 0.8 s).
 * combined  profiler windows at [50, 150) ms with 3 vec_add, [250, 700)
 *           ms with 2 vec_add at once and `launches` at 600 ms, and
 *           [1400, 1500) ms with 7 vec_add (for a delay of 0.4 s and a
 *           duration of 0.8 s: only the `launches` count).
 *
 * serve     a server that never ends by itself: "serving pid P", then
 *           every 100 ms `launches` vec_add and a sync, then "batch N" on
 *           stdout (flushed), until a signal ends it.
 * crash     `launches` vec_add and a sync, "ready" on stdout, 700 ms of
 *           sleep, then a write through a null pointer (SIGSEGV);
 *           crash_fpe an integer division by zero (SIGFPE), crash_abort
 *           abort() (SIGABRT), crash_handled the null write with the
 *           program's own SIGSEGV handler, installed after printing
 *           "default handler before: 1" when sigaction said SIG_DFL, which
 *           prints "own handler" and exits with status 3.
 *
 * Except for serve and crash, prints "event records outside N" and
 * "event records inside N": the
 * emulated driver's event records made while the program was outside and
 * inside its windows (the program records none itself). Exit codes as
 * tests/apps. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaProfiler.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_kernels_ptx.h"
#include "app_driver.h"
#include "app_util.h"

#define ELEMENTS 4096
#define BLOCK 256
#define COPY_BYTES 4096u
#define MIB (1u << 20)

static CUcontext ctx;
static CUfunction vec_add, scale;
static CUdeviceptr x, y, z;
static long launches;
static struct timespec t_start;
static uint64_t (*event_records)(void);
static uint64_t records_outside, records_inside;
static int counted_per_call = 1; /* outside() and inside() count their own records */

static void check_rt(cudaError_t r, const char *what)
{
    if (r != cudaSuccess) app_fail(what, cudaGetErrorName(r), (int)r);
}

/* Sleeps until `ms` after main started (at once when that has passed). */
static void at(long ms)
{
    struct timespec t = t_start;
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0)
        ;
}

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

static uint64_t records(void)
{
    return event_records ? event_records() : 0;
}

/* The NVTX phase's threads launch on streams of their own: on one stream
 * shared, a thread's event pair could enclose the other's kernel. */
static __thread CUstream own_stream;

static void launch(CUfunction f, long n)
{
    int elements = ELEMENTS;
    float factor = 2.0f;
    void *add_args[] = {&x, &y, &z, &elements};
    void *scale_args[] = {&z, &factor, &elements};
    for (long i = 0; i < n; i++)
        app_check(cuLaunchKernel(f, ELEMENTS / BLOCK, 1, 1, BLOCK, 1, 1, 0, own_stream,
                             f == vec_add ? add_args : scale_args, NULL),
              "cuLaunchKernel");
}

/* apps::scale outside every window, its event records counted as outside. */
static void outside(long n)
{
    uint64_t before = records();
    launch(scale, n);
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    if (counted_per_call) records_outside += records() - before;
}

static void inside(long n)
{
    uint64_t before = records();
    launch(vec_add, n);
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    if (counted_per_call) records_inside += records() - before;
}

static void profiler_mode(void)
{
    static unsigned char host[COPY_BYTES];
    CUdeviceptr a, b, c;
    app_check(cuMemAlloc(&a, MIB), "cuMemAlloc");
    outside(launches);
    app_check(cuProfilerStart(), "cuProfilerStart");
    app_check(cuMemAlloc(&b, 2 * MIB), "cuMemAlloc");
    app_check(cuMemcpyHtoD(b, host, COPY_BYTES), "cuMemcpyHtoD");
    inside(launches);
    pause_ms(30);
    app_check(cuProfilerStop(), "cuProfilerStop");
    outside(launches);
    app_check(cuMemFree(a), "cuMemFree");
    check_rt(cudaProfilerStart(), "cudaProfilerStart");
    app_check(cuMemcpyHtoD(b, host, COPY_BYTES), "cuMemcpyHtoD");
    inside(launches);
    app_check(cuMemFree(b), "cuMemFree");
    pause_ms(30);
    check_rt(cudaProfilerStop(), "cudaProfilerStop");
    outside(launches);
    app_check(cuProfilerStart(), "cuProfilerStart");
    app_check(cuMemcpyHtoD(x, host, COPY_BYTES), "cuMemcpyHtoD");
    inside(launches);
    pause_ms(30);
    app_check(cuProfilerStop(), "cuProfilerStop");
    outside(launches);
    app_check(cuMemAlloc(&c, 4 * MIB), "cuMemAlloc");
}

/* Both threads run each phase together, between barriers: the event
 * records are counted by the pushing thread at the barriers, where neither
 * thread is launching. */
static pthread_barrier_t barrier;
static nvtxRangeId_t handed;

static void wait_all(void)
{
    pthread_barrier_wait(&barrier);
}

/* Pushes "phase"; its partner thread starts it, and this thread ends that. */
static void *pusher(void *arg)
{
    (void)arg;
    app_check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    app_check(cuStreamCreate(&own_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    wait_all();
    uint64_t r0 = records();
    outside(launches);
    nvtxMarkA("outside");
    wait_all();
    uint64_t r1 = records();
    nvtxRangePushA("phase");
    wait_all();
    inside(launches);
    nvtxRangePushA("inner");
    nvtxMarkA("inside");
    nvtxRangePop();
    wait_all();
    uint64_t r2 = records();
    nvtxRangePop();
    nvtxRangeEnd(handed);
    wait_all();
    uint64_t r3 = records();
    outside(launches);
    wait_all();
    records_outside = (r1 - r0) + (records() - r3);
    records_inside = r2 - r1;
    return NULL;
}

static void *starter(void *arg)
{
    (void)arg;
    app_check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    app_check(cuStreamCreate(&own_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    wait_all();
    outside(launches);
    nvtxRangePushA("straddle");
    wait_all();
    handed = nvtxRangeStartA("phase");
    wait_all();
    nvtxRangePop(); /* "straddle", opened outside */
    inside(launches);
    wait_all();
    wait_all();
    outside(launches);
    wait_all();
    return NULL;
}

static void nvtx_mode(void)
{
    pthread_t a, b;
    counted_per_call = 0;
    if (pthread_barrier_init(&barrier, NULL, 2) != 0) app_wrong("pthread_barrier_init");
    if (pthread_create(&a, NULL, pusher, NULL) != 0 || pthread_create(&b, NULL, starter, NULL) != 0)
        app_wrong("pthread_create");
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pthread_barrier_destroy(&barrier);
}

static void timed_mode(void)
{
    outside(launches);
    at(700);
    inside(launches);
    at(1500);
    outside(launches);
}

static void combined_mode(void)
{
    at(50);
    app_check(cuProfilerStart(), "cuProfilerStart");
    outside(3);
    at(150);
    app_check(cuProfilerStop(), "cuProfilerStop");
    at(250);
    check_rt(cudaProfilerStart(), "cudaProfilerStart");
    outside(2);
    at(600);
    inside(launches);
    at(700);
    check_rt(cudaProfilerStop(), "cudaProfilerStop");
    at(1400);
    app_check(cuProfilerStart(), "cuProfilerStart");
    outside(7);
    at(1500);
    app_check(cuProfilerStop(), "cuProfilerStop");
}

static void serve_mode(void)
{
    printf("serving pid %d\n", (int)getpid());
    for (long batch = 1;; batch++) {
        inside(launches);
        printf("batch %ld\n", batch);
        fflush(stdout);
        pause_ms(100);
    }
}

/* Null, behind a volatile read: the compiler cannot turn the write into
 * anything but a fault. */
static int *volatile nowhere;

static volatile int zero;

static void own_handler(int sig)
{
    (void)sig;
    static const char said[] = "own handler\n";
    ssize_t unused = write(STDOUT_FILENO, said, sizeof said - 1);
    (void)unused;
    _exit(3);
}

static void crash_mode(const char *how)
{
    if (!strcmp(how, "crash_handled")) {
        struct sigaction old, sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = own_handler;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGSEGV, NULL, &old) != 0) app_wrong("sigaction");
        printf("default handler before: %d\n",
               !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL);
        if (sigaction(SIGSEGV, &sa, NULL) != 0) app_wrong("sigaction");
    }
    inside(launches);
    printf("ready\n");
    fflush(stdout);
    pause_ms(700);
    if (!strcmp(how, "crash_abort")) abort();
    if (!strcmp(how, "crash_fpe")) printf("%ld\n", launches / zero);
    *nowhere = 1;
}

int main(int argc, char **argv)
{
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    app_program = "capture_prog";
    const char *mode = argc > 1 ? argv[1] : "";
    launches = app_arg(argc, argv, 2, "launches", 10, 1);
    event_records = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "gtemu_event_records");
    CUmodule module;
    ctx = app_primary_context();
    app_vector_kernels(app_kernels_ptx, &module, &vec_add, &scale);
    CUdeviceptr *bufs[] = {&x, &y, &z};
    for (int i = 0; i < 3; i++)
        app_check(cuMemAlloc(bufs[i], ELEMENTS * sizeof(float)), "cuMemAlloc");
    if (!strcmp(mode, "profiler"))
        profiler_mode();
    else if (!strcmp(mode, "nvtx"))
        nvtx_mode();
    else if (!strcmp(mode, "timed"))
        timed_mode();
    else if (!strcmp(mode, "combined"))
        combined_mode();
    else if (!strcmp(mode, "serve"))
        serve_mode();
    else if (!strncmp(mode, "crash", 5))
        crash_mode(mode);
    else {
        fprintf(
            stderr,
            "usage: capture_prog profiler|nvtx|timed|combined|serve|crash[_fpe|_abort|_handled] "
            "[launches]\n");
        return APP_EXIT_USAGE;
    }
    printf("event records outside %llu\n", (unsigned long long)records_outside);
    printf("event records inside %llu\n", (unsigned long long)records_inside);
    return 0;
}
