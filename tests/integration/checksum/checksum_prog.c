/* A program that reads data back from the GPU in every way the checksums
 * (GPUTRACE_CHECKSUM) tell apart, and writes what they must find: one
 * line per device-to-host copy in CK_TRUTH, {"worker", "index", "bytes",
 * "hash" (16 hex digits, or null), "status"}, the hash computed here from
 * the data the copy brought back, in the mode GPUTRACE_CHECKSUM names
 * (dtoh's when it is off).
 *
 * checksum_prog SCENARIO
 *   mixed      one thread: a synchronous copy, asynchronous copies into
 *              page-locked memory synchronized by their stream, by an event,
 *              by the context, one into pageable memory, a 3-byte one
 *   runtime    the same through the runtime API
 *   late       an asynchronous copy whose data arrives only after the call
 *              returned (a host function holds its stream): hashed at the
 *              synchronize, so its hash is the data's
 *   overwrite  two asynchronous copies into one buffer before a
 *              synchronize (the first: overwritten), then one never
 *              synchronized
 *   threads    four threads, each its own stream and data
 *
 * Each device-to-host copy of mixed and runtime (CK_EXTRA's aside) is on
 * a line marked "SITE": its call site.
 *
 * CK_CHANGE=COPY:ELEM[:ulp] changes element ELEM of copy COPY's data
 * (worker 0): by 1.0, or with ulp in its last mantissa bit.
 * CK_EXTRA=1 adds a copy at the end (mixed). The data are floats. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_driver.h"
#include "app_util.h"
#include "checksum_hash.h"
#include "checksum_mode.h"

#define ELEMS 4096u
#define WORKERS 4u
#define THREAD_COPIES 6u

static FILE *truth;
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;
static gt_checksum_mode mode;
static long change_copy = -1, change_elem;
static int change_ulp;

static void expect(unsigned worker, unsigned index, const void *data, size_t bytes,
                   const char *status)
{
    pthread_mutex_lock(&truth_lock);
    fprintf(truth, "{\"worker\": %u, \"index\": %u, \"bytes\": %zu, ", worker, index, bytes);
    if (strcmp(status, "hashed") == 0)
        fprintf(truth, "\"hash\": \"%016" PRIx64 "\", ", gt_checksum_hash(mode, data, bytes));
    else
        fputs("\"hash\": null, ", truth);
    fprintf(truth, "\"status\": \"%s\"}\n", status);
    pthread_mutex_unlock(&truth_lock);
}

/* Copy `index` of `worker`: floats that differ per copy and worker. */
static void make_data(float *f, unsigned worker, unsigned index)
{
    for (unsigned i = 0; i < ELEMS; i++)
        f[i] = 1.0f + (float)(i % 97) / 128.0f + (float)index + 100.0f * (float)worker;
    if (worker == 0 && change_copy == (long)index) {
        if (change_ulp) {
            uint32_t bits;
            memcpy(&bits, &f[change_elem], sizeof bits);
            bits ^= 1u;
            memcpy(&f[change_elem], &bits, sizeof bits);
        } else {
            f[change_elem] += 1.0f;
        }
    }
}

/* Device memory holding copy `index`'s data; the data in *host. */
static CUdeviceptr upload(unsigned worker, unsigned index, float *host)
{
    CUdeviceptr d;
    make_data(host, worker, index);
    app_check(cuMemAlloc(&d, ELEMS * sizeof(float)), "cuMemAlloc");
    app_check(cuMemcpyHtoD(d, host, ELEMS * sizeof(float)), "cuMemcpyHtoD");
    return d;
}

static float *pinned(void)
{
    void *p;
    app_check(cuMemAllocHost(&p, ELEMS * sizeof(float)), "cuMemAllocHost");
    memset(p, 0, ELEMS * sizeof(float));
    return p;
}

static void check_back(const float *got, const float *want, size_t bytes, const char *what)
{
    app_expect_same(got, want, bytes, what);
}

static void scenario_mixed(void)
{
    const size_t n = ELEMS * sizeof(float);
    float src[ELEMS], got[ELEMS];
    CUstream s;
    CUevent e;
    app_check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    app_check(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    float *host = pinned();
    unsigned k = 0;

    CUdeviceptr d = upload(0, k, src);
    app_check(cuMemcpyDtoH(got, d, n), "cuMemcpyDtoH"); /* SITE */
    check_back(got, src, n, "synchronous copy");
    expect(0, k++, got, n, "hashed");

    d = upload(0, k, src);
    app_check(cuMemcpyDtoHAsync(host, d, n, s), "cuMemcpyDtoHAsync"); /* SITE */
    app_check(cuStreamSynchronize(s), "cuStreamSynchronize");
    check_back(host, src, n, "copy synchronized by its stream");
    expect(0, k++, host, n, "hashed");

    d = upload(0, k, src);
    app_check(cuMemcpyDtoHAsync(host, d, n, s), "cuMemcpyDtoHAsync"); /* SITE */
    app_check(cuEventRecord(e, s), "cuEventRecord");
    app_check(cuEventSynchronize(e), "cuEventSynchronize");
    check_back(host, src, n, "copy synchronized by an event");
    expect(0, k++, host, n, "hashed");

    d = upload(0, k, src);
    app_check(cuMemcpyDtoHAsync(host, d, n, NULL), "cuMemcpyDtoHAsync"); /* SITE */
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    check_back(host, src, n, "copy synchronized by its context");
    expect(0, k++, host, n, "hashed");

    d = upload(0, k, src);
    app_check(cuMemcpyDtoHAsync(got, d, n, s), "cuMemcpyDtoHAsync (pageable)"); /* SITE */
    check_back(got, src, n, "asynchronous copy into pageable memory");
    expect(0, k++, got, n, "hashed");

    d = upload(0, k, src);
    unsigned char three[3];
    app_check(cuMemcpyDtoH(three, d, sizeof three), "cuMemcpyDtoH (3 bytes)"); /* SITE */
    expect(0, k++, three, sizeof three, "hashed");

    if (getenv("CK_EXTRA")) {
        d = upload(0, k, src);
        app_check(cuMemcpyDtoH(got, d, n), "cuMemcpyDtoH (extra)");
        expect(0, k++, got, n, "hashed");
    }
}

static void rt_check(cudaError_t r, const char *what)
{
    if (r != cudaSuccess) app_fail(what, cudaGetErrorName(r), (int)r);
}

static void scenario_runtime(void)
{
    const size_t n = ELEMS * sizeof(float);
    float src[ELEMS], got[ELEMS], *host, *d;
    cudaStream_t s;
    cudaEvent_t e;
    rt_check(cudaStreamCreate(&s), "cudaStreamCreate");
    rt_check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    rt_check(cudaMallocHost((void **)&host, n), "cudaMallocHost");
    rt_check(cudaMalloc((void **)&d, n), "cudaMalloc");
    unsigned k = 0;

    make_data(src, 0, k);
    rt_check(cudaMemcpy(d, src, n, cudaMemcpyHostToDevice), "cudaMemcpy HtoD");
    rt_check(cudaMemcpy(got, d, n, cudaMemcpyDeviceToHost), "cudaMemcpy DtoH"); /* SITE */
    expect(0, k++, got, n, "hashed");

    make_data(src, 0, k);
    rt_check(cudaMemcpy(d, src, n, cudaMemcpyHostToDevice), "cudaMemcpy HtoD");
    rt_check(cudaMemcpyAsync(host, d, n, cudaMemcpyDefault, s), "cudaMemcpyAsync"); /* SITE */
    rt_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    check_back(host, src, n, "runtime copy synchronized by its stream");
    expect(0, k++, host, n, "hashed");

    make_data(src, 0, k);
    rt_check(cudaMemcpy(d, src, n, cudaMemcpyHostToDevice), "cudaMemcpy HtoD");
    rt_check(cudaMemcpyAsync(host, d, n, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync"); /* SITE */
    rt_check(cudaEventRecord(e, s), "cudaEventRecord");
    rt_check(cudaEventSynchronize(e), "cudaEventSynchronize");
    expect(0, k++, host, n, "hashed");

    make_data(src, 0, k);
    rt_check(cudaMemcpy(d, src, n, cudaMemcpyHostToDevice), "cudaMemcpy HtoD");
    rt_check(cudaMemcpyAsync(host, d, n, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync"); /* SITE */
    rt_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    expect(0, k++, host, n, "hashed");
}

static void CUDA_CB hold_stream(void *ms)
{
    usleep((useconds_t)(uintptr_t)ms * 1000u);
}

/* An asynchronous copy queued behind a host function that holds the
 * stream: its data arrives after the call returned. */
static void late_copy(float *host, CUdeviceptr d, CUstream s)
{
    app_check(cuLaunchHostFunc(s, hold_stream, (void *)(uintptr_t)200), "cuLaunchHostFunc");
    app_check(cuMemcpyDtoHAsync(host, d, ELEMS * sizeof(float), s), "cuMemcpyDtoHAsync");
}

static void scenario_late(void)
{
    const size_t n = ELEMS * sizeof(float);
    float src[ELEMS];
    CUstream s;
    app_check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    float *host = pinned();
    CUdeviceptr d = upload(0, 0, src);
    late_copy(host, d, s);
    app_expect_bytes(host, n, 0, "the copy's buffer before its stream ran it");
    app_check(cuStreamSynchronize(s), "cuStreamSynchronize");
    check_back(host, src, n, "the late copy");
    expect(0, 0, host, n, "hashed");
}

static void scenario_overwrite(void)
{
    const size_t n = ELEMS * sizeof(float);
    float src[ELEMS];
    CUstream s;
    app_check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    float *host = pinned();
    CUdeviceptr first = upload(0, 0, src);
    late_copy(host, first, s);
    expect(0, 0, NULL, n, "overwritten");
    CUdeviceptr second = upload(0, 1, src);
    app_check(cuMemcpyDtoHAsync(host, second, n, s), "cuMemcpyDtoHAsync");
    app_check(cuStreamSynchronize(s), "cuStreamSynchronize");
    check_back(host, src, n, "the second copy");
    expect(0, 1, host, n, "hashed");
    /* Queued, never synchronized: the process ends first. */
    float *other = pinned();
    CUdeviceptr third = upload(0, 2, src);
    app_check(cuMemcpyDtoHAsync(other, third, n, s), "cuMemcpyDtoHAsync");
    expect(0, 2, NULL, n, "unsynchronized");
}

static CUcontext context;

static void *worker(void *arg)
{
    unsigned w = (unsigned)(uintptr_t)arg;
    const size_t n = ELEMS * sizeof(float);
    float src[ELEMS], got[ELEMS];
    CUstream s;
    app_check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    app_check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    float *host = pinned();
    for (unsigned k = 0; k < THREAD_COPIES; k++) {
        CUdeviceptr d = upload(w, k, src);
        if (k % 2) {
            app_check(cuMemcpyDtoHAsync(host, d, n, s), "cuMemcpyDtoHAsync");
            app_check(cuStreamSynchronize(s), "cuStreamSynchronize");
            expect(w, k, host, n, "hashed");
        } else {
            app_check(cuMemcpyDtoH(got, d, n), "cuMemcpyDtoH");
            expect(w, k, got, n, "hashed");
        }
    }
    return NULL;
}

static void scenario_threads(void)
{
    pthread_t t[WORKERS];
    for (unsigned w = 0; w < WORKERS; w++)
        if (pthread_create(&t[w], NULL, worker, (void *)(uintptr_t)w) != 0)
            app_wrong("pthread_create");
    for (unsigned w = 0; w < WORKERS; w++)
        pthread_join(t[w], NULL);
}

int main(int argc, char **argv)
{
    app_program = "checksum_prog";
    const char *scenario = argc > 1 ? argv[1] : "";
    const char *path = getenv("CK_TRUTH"), *m = getenv("GPUTRACE_CHECKSUM");
    if (!path || !m || gt_checksum_mode_parse(m, strlen(m), &mode) != 0) {
        fprintf(stderr, "usage: CK_TRUTH=FILE GPUTRACE_CHECKSUM=MODE %s SCENARIO\n", argv[0]);
        return APP_EXIT_USAGE;
    }
    /* With checksums off, the truth is what dtoh would find. */
    if (mode.kind == GT_CHECKSUM_OFF) mode.kind = GT_CHECKSUM_BYTES;
    const char *change = getenv("CK_CHANGE");
    if (change) {
        char ulp[8] = "";
        if (sscanf(change, "%ld:%ld:%7s", &change_copy, &change_elem, ulp) < 2 || change_elem < 0 ||
            change_elem >= (long)ELEMS)
            app_wrong("CK_CHANGE: expected COPY:ELEM[:ulp]");
        change_ulp = strcmp(ulp, "ulp") == 0;
    }
    truth = fopen(path, "w");
    if (!truth) app_wrong("cannot write CK_TRUTH");
    context = app_primary_context();
    if (strcmp(scenario, "mixed") == 0)
        scenario_mixed();
    else if (strcmp(scenario, "runtime") == 0)
        scenario_runtime();
    else if (strcmp(scenario, "late") == 0)
        scenario_late();
    else if (strcmp(scenario, "overwrite") == 0)
        scenario_overwrite();
    else if (strcmp(scenario, "threads") == 0)
        scenario_threads();
    else
        app_wrong("unknown scenario");
    fclose(truth);
    return 0;
}
