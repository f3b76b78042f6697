// What a CUDA event pair reads over the work it brackets on this GPU: the floor of the
// GPU check's time comparison (scripts/gpu_check/run.py runs this bare, first).
//
// An event pair's timestamps are taken by the GPU's front end, CUPTI's by the units that
// do the work, so a pair always reads a little more. How much depends on what the GPU
// was doing: with work queued back to back it is a few microseconds; for the first
// operation after the GPU has been idle for a while (a host that synchronises, then
// computes, then launches again) the units doing the work take longer to start after
// the front end has timestamped the start event, and the pair reads tens of
// microseconds more than the work. Operations a few bytes or threads long take well
// under a microsecond themselves, so what a pair reads around them is that excess.
//
// Usage: event_floor [PAUSE_MS] [REPEATS]
// Prints one JSON line: for each operation (an empty kernel, a 4-byte memset, a 4-byte
// device-to-device copy) the median reading queued back to back and after PAUSE_MS
// (default 100) of host sleep, and "floor_ns": the largest median after a pause.
// Exit status 2 when a CUDA call fails, 64 on bad arguments.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "app_util.h"

#define MAX_REPEATS 64

__global__ void empty_kernel() {}

static void check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) app_fail(what, cudaGetErrorName(err), (int)err);
}
#define CHECK(call) check((call), #call)

enum op { KERNEL, MEMSET, COPY, OPS };
static const char *const op_names[OPS] = {"kernel", "memset", "dtod"};

static void *dev_a, *dev_b;

static void issue(enum op which, cudaStream_t s)
{
    switch (which) {
    case KERNEL: empty_kernel<<<1, 1, 0, s>>>(); CHECK(cudaGetLastError()); break;
    case MEMSET: CHECK(cudaMemsetAsync(dev_a, 0, 4, s)); break;
    default: CHECK(cudaMemcpyAsync(dev_b, dev_a, 4, cudaMemcpyDeviceToDevice, s)); break;
    }
}

// The median of `repeats` pair readings, in ns; pause_ms 0: the pairs queued back to back.
static double median_pair_ns(enum op which, cudaStream_t s, int repeats, int pause_ms)
{
    cudaEvent_t start[MAX_REPEATS], stop[MAX_REPEATS];
    float ms[MAX_REPEATS];
    for (int i = 0; i < repeats; i++) {
        CHECK(cudaEventCreate(&start[i]));
        CHECK(cudaEventCreate(&stop[i]));
    }
    for (int i = 0; i < repeats; i++) {
        if (pause_ms) {
            CHECK(cudaStreamSynchronize(s));
            usleep((useconds_t)pause_ms * 1000);
        }
        CHECK(cudaEventRecord(start[i], s));
        issue(which, s);
        CHECK(cudaEventRecord(stop[i], s));
    }
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < repeats; i++) {
        CHECK(cudaEventElapsedTime(&ms[i], start[i], stop[i]));
        CHECK(cudaEventDestroy(start[i]));
        CHECK(cudaEventDestroy(stop[i]));
    }
    std::sort(ms, ms + repeats);
    return ms[repeats / 2] * 1e6;
}

int main(int argc, char **argv)
{
    app_program = "event_floor";
    int pause_ms = (int)std::min(app_arg(argc, argv, 1, "PAUSE_MS", 100, 1), 10000L);
    int repeats = (int)std::min(app_arg(argc, argv, 2, "REPEATS", 7, 1), (long)MAX_REPEATS);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&dev_a, 4));
    CHECK(cudaMalloc(&dev_b, 4));
    for (int w = 0; w < OPS; w++) issue((enum op)w, s); // first-use costs out of the figures
    CHECK(cudaStreamSynchronize(s));

    double floor_ns = 0;
    printf("{\"pause_ms\":%d,\"repeats\":%d", pause_ms, repeats);
    for (int w = 0; w < OPS; w++) {
        double queued = median_pair_ns((enum op)w, s, repeats, 0);
        double paused = median_pair_ns((enum op)w, s, repeats, pause_ms);
        floor_ns = std::max(floor_ns, paused);
        printf(",\"%s\":{\"queued_ns\":%.0f,\"after_pause_ns\":%.0f}", op_names[w], queued, paused);
    }
    printf(",\"floor_ns\":%.0f}\n", floor_ns);
    CHECK(cudaFree(dev_a));
    CHECK(cudaFree(dev_b));
    CHECK(cudaStreamDestroy(s));
    return 0;
}
