/* The shim's cost on a kernel launch (figures, not tests: see
 * scripts/bench.sh), on the emulated driver with a zero-duration kernel.
 *
 *   gt_bench_launch PATH/libgputrace.so [launches] [runs]
 *
 * Runs itself as a child in three modes, the runs interleaved so that a
 * change in machine load touches every mode alike:
 *   bare     no shim
 *   off      LD_PRELOAD=libgputrace.so, GPUTRACE_GPU_TIMING=off
 *   events   LD_PRELOAD=libgputrace.so, GPUTRACE_GPU_TIMING=events
 * Each child launches on one stream, warms up, then times `launches`
 * cuLaunchKernel calls (wall time / launches, the stream synchronised at
 * the end). Printed: the median ns per launch of each mode, the ns the
 * shim adds to a bare launch, and for timing on, from the emulator's
 * counters over the timed launches: event records per launch (two, plus
 * the epoch records the drain adds, about one a second) and events
 * created (none once warm). A child whose cuLaunchKernel is not the
 * shim's says so: then the shim has no launch hook yet. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "bench_median.h"
#include "tests/emu/gtemu.h"

#define CHILD_ENV "GT_BENCH_LAUNCH_CHILD"
#define WARM_UP 200000
#define MAX_RUNS 99

enum mode { BARE, OFF, EVENTS, MODES };
static const char *const mode_names[MODES] = {"bare", "off", "events"};

struct result {
    double ns_per_launch;
    uint64_t launches, records, created;
    int intercepted;
};

static const char module_ptx[] = ".version 8.0\n"
                                 ".target sm_90\n"
                                 ".address_size 64\n"
                                 ".visible .entry k_zero()\n{\n ret;\n}\n";

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int check(CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS) return 0;
    fprintf(stderr, "gt_bench_launch: %s failed (%d)\n", what, (int)r);
    return -1;
}

/* Whether the cuLaunchKernel this program calls lies outside the driver:
 * the shim's, preloaded. (Not by dlsym: the shim hands out its wrappers
 * there too.) */
static int launch_intercepted(void)
{
    Dl_info info;
    return dladdr((void *)cuLaunchKernel, &info) && info.dli_fname &&
           !strstr(info.dli_fname, "libcuda.so");
}

static int child(uint64_t launches)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUstream s;
    if (check(cuInit(0), "cuInit") || check(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
        check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
        check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
        check(cuModuleLoadData(&mod, module_ptx), "cuModuleLoadData") ||
        check(cuModuleGetFunction(&f, mod, "k_zero"), "cuModuleGetFunction") ||
        check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
        return 1;
    for (int i = 0; i < WARM_UP; i++)
        cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
    if (check(cuStreamSynchronize(s), "cuStreamSynchronize")) return 1;
    uint64_t records = gtemu_event_records(), created = gtemu_events_created();
    uint64_t t0 = now_ns();
    for (uint64_t i = 0; i < launches; i++)
        cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
    if (check(cuStreamSynchronize(s), "cuStreamSynchronize")) return 1;
    uint64_t t1 = now_ns();
    printf("%.3f %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n", (double)(t1 - t0) / (double)launches,
           launches, gtemu_event_records() - records, gtemu_events_created() - created,
           launch_intercepted());
    return 0;
}

/* Runs this program as a child in `mode`; 0 with *out filled. */
static int run_child(const char *self, const char *shim, enum mode mode, uint64_t launches,
                     struct result *out)
{
    int fd[2];
    if (pipe(fd) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], STDOUT_FILENO);
        setenv(CHILD_ENV, "1", 1);
        setenv("GPUTRACE_EMU_KERNEL_NS", "k_zero=0", 1);
        setenv("GPUTRACE_VERBOSITY", "none", 1);
        unsetenv("GPUTRACE_OUTPUT");
        if (mode == BARE) {
            unsetenv("LD_PRELOAD");
        } else {
            setenv("LD_PRELOAD", shim, 1);
            setenv("GPUTRACE_GPU_TIMING", mode == OFF ? "off" : "events", 1);
        }
        char count[32];
        snprintf(count, sizeof count, "%" PRIu64, launches);
        execl(self, self, count, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    FILE *in = fdopen(fd[0], "r");
    int got = in ? fscanf(in, "%lf %" SCNu64 " %" SCNu64 " %" SCNu64 " %d", &out->ns_per_launch,
                          &out->launches, &out->records, &out->created, &out->intercepted)
                 : 0;
    if (in) fclose(in);
    int status;
    waitpid(pid, &status, 0);
    return got == 5 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (getenv(CHILD_ENV)) return child(strtoull(argv[1], NULL, 10));
    if (argc < 2) {
        fprintf(stderr, "usage: gt_bench_launch PATH/libgputrace.so [launches] [runs]\n");
        return 2;
    }
    uint64_t launches = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
    int runs = argc > 3 ? atoi(argv[3]) : 7;
    if (launches == 0 || runs < 1 || runs > MAX_RUNS) return 2;
    double ns[MODES][MAX_RUNS];
    struct result events_total = {0};
    int intercepted = 1;
    for (int r = 0; r < runs; r++) {
        for (int m = 0; m < MODES; m++) {
            struct result res;
            if (run_child("/proc/self/exe", argv[1], (enum mode)m, launches, &res) != 0) {
                fprintf(stderr, "gt_bench_launch: the %s run failed\n", mode_names[m]);
                return 1;
            }
            ns[m][r] = res.ns_per_launch;
            if (m != BARE) intercepted &= res.intercepted;
            if (m == EVENTS) {
                events_total.launches += res.launches;
                events_total.records += res.records;
                events_total.created += res.created;
            }
        }
    }
    double med[MODES];
    for (int m = 0; m < MODES; m++)
        med[m] = bench_median(ns[m], runs);
    printf("launch (emulated driver, zero-duration kernel, %" PRIu64 " launches, median of %d "
           "runs)\n",
           launches, runs);
    if (!intercepted)
        printf("  note: cuLaunchKernel is not intercepted: the shim has no launch hook, so the "
               "shim rows measure its load only\n");
    printf("  bare                  %8.1f ns/launch\n", med[BARE]);
    printf("  shim, timing off      %8.1f ns/launch  (+%.1f ns)\n", med[OFF], med[OFF] - med[BARE]);
    printf("  shim, timing events   %8.1f ns/launch  (+%.1f ns)\n", med[EVENTS],
           med[EVENTS] - med[BARE]);
    printf("  timing events: %.4f event records per launch (%" PRIu64 " records, %" PRIu64
           " launches: two each, plus %" PRId64 " epochs), %" PRIu64
           " events created in steady state\n",
           (double)events_total.records / (double)events_total.launches, events_total.records,
           events_total.launches, (int64_t)(events_total.records - 2 * events_total.launches),
           events_total.created);
    return 0;
}
