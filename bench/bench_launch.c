/* The shim's cost on a kernel launch (figures, not tests: see
 * scripts/bench.sh), on the emulated driver with a zero-duration kernel.
 *
 *   gt_bench_launch PATH/libgputrace.so [launches] [runs] [BASELINE/libgputrace.so|-]
 *                   [PATH/libcupti_ref.so]
 *
 * Two paths into the driver:
 *   driver   cuLaunchKernel, as driver-API programs and the static runtime
 *   runtime  __cudaLaunchKernel, what nvcc's <<<>>> calls with the shared
 *            runtime (the emulated libcudart.so.13): the shim's runtime
 *            wrapper and the driver wrapper under it record one event
 * each in these modes, the runs interleaved so that a change in machine
 * load touches every mode alike:
 *   bare     no shim
 *   off      LD_PRELOAD=libgputrace.so, GPUTRACE_GPU_TIMING=off (native call
 *            sites on, as by default in a program without Python)
 *   nosites  as off, with GPUTRACE_CALLSITES=off: off - nosites is what
 *            taking call sites adds to a launch
 *   events   LD_PRELOAD=libgputrace.so, GPUTRACE_GPU_TIMING=events
 *   disabled LD_PRELOAD=libgputrace.so, GPUTRACE_CATEGORIES=memory: the
 *            launch's categories (kernel, api) off
 *   outside  LD_PRELOAD=libgputrace.so, GPUTRACE_CAPTURE=profiler-api, GPU
 *            timing on, and no profiler start: every launch outside a
 *            capture window, which must cost what `disabled` costs and
 *            make no event record
 *   cupti    LD_PRELOAD=libgputrace.so, GPUTRACE_GPU_TIMING=cupti (the
 *            emulator's libcupti.so.13, which does its own work per launch:
 *            the callback, a record)
 *   ref      no shim, the kit's CUPTI reference recorder injected
 *            (CUDA_INJECTION64_PATH) with CUPTI's callbacks on at each
 *            launch, as the CUPTI source has them: what CUPTI's records and
 *            callbacks cost alone, so that cupti - ref is what the shim adds
 *            to them (only with the recorder's path given)
 * Each child launches on one stream, warms up, then times `launches`
 * launches (wall time / launches, the stream synchronised at the end).
 * Printed per path, as rows of a Markdown table (figure | value |
 * target), medians over the runs of `launches` each: ns per bare launch,
 * the ns the shim adds to it, and for timing on, from the emulator's
 * counters over the timed launches: event records per launch (two, plus
 * the epoch records the drain adds, about one a second) and events
 * created (none once warm); for disabled and outside, the ns added and
 * (outside) the event records. A child whose launch function is not the
 * shim's says so: then the shim has no hook for it.
 *
 * With a second library (another build: the code before a change, or
 * built with other flags), each of its modes runs right after the same
 * mode of the first, in the same rounds, and its rows follow, marked
 * "baseline": the two are compared under the same load. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "bench_emu.h"
#include "bench_median.h"
#include "tests/emu/gtemu.h"

#define CHILD_ENV "GT_BENCH_LAUNCH_CHILD"
#define WARM_UP 200000
#define MAX_RUNS 99

enum mode { BARE, OFF, NOSITES, EVENTS, DISABLED, OUTSIDE, CUPTI, REF, MODES };
static const char *const mode_names[MODES] = {"bare",     "off",     "nosites", "events",
                                              "disabled", "outside", "cupti",   "ref"};
static const char *cupti_ref; /* the reference recorder's path; NULL: no ref mode */
enum path { DRIVER, RUNTIME, PATHS };
static const char *const path_names[PATHS] = {"driver", "runtime"};

/* nvcc's <<<>>> entry point: declared by crt/device_functions.h for C++ only. */
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                         void **args, size_t sharedMem, cudaStream_t stream);

struct result {
    double ns_per_launch;
    uint64_t launches, records, created;
    int intercepted;
};

static int check(CUresult r, const char *what)
{
    return bench_check("gt_bench_launch", r, what);
}

/* Whether the launch function this program calls lies outside the CUDA
 * library: the shim's, preloaded. (Not by dlsym: the shim hands out its
 * wrappers there too.) */
static int intercepted(void *fn, const char *library)
{
    Dl_info info;
    return dladdr(fn, &info) && info.dli_fname && !strstr(info.dli_fname, library);
}

static int check_rt(cudaError_t r, const char *what)
{
    return check(r == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN, what);
}

static void report_child(uint64_t t0, uint64_t launches, uint64_t records, uint64_t created,
                         int hooked)
{
    printf("%.3f %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n",
           (double)(bench_now_ns() - t0) / (double)launches, launches,
           gtemu_event_records() - records, gtemu_events_created() - created, hooked);
}

static int child_runtime(uint64_t launches)
{
    cudaStream_t s;
    cudaLibrary_t lib;
    cudaKernel_t k;
    if (check_rt(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate") ||
        check_rt(cudaLibraryLoadData(&lib, bench_module_ptx, NULL, NULL, 0, NULL, NULL, 0),
                 "cudaLibraryLoadData") ||
        check_rt(cudaLibraryGetKernel(&k, lib, "k_zero"), "cudaLibraryGetKernel"))
        return 1;
    dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    for (int i = 0; i < WARM_UP; i++)
        __cudaLaunchKernel(k, grid, block, NULL, 0, s);
    if (check_rt(cudaStreamSynchronize(s), "cudaStreamSynchronize")) return 1;
    uint64_t records = gtemu_event_records(), created = gtemu_events_created();
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < launches; i++)
        __cudaLaunchKernel(k, grid, block, NULL, 0, s);
    if (check_rt(cudaStreamSynchronize(s), "cudaStreamSynchronize")) return 1;
    report_child(t0, launches, records, created,
                 intercepted((void *)__cudaLaunchKernel, "libcudart.so"));
    return 0;
}

static int child_driver(uint64_t launches)
{
    CUfunction f;
    CUstream s;
    if (bench_driver_setup("gt_bench_launch", &f, &s)) return 1;
    for (int i = 0; i < WARM_UP; i++)
        cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
    if (check(cuStreamSynchronize(s), "cuStreamSynchronize")) return 1;
    uint64_t records = gtemu_event_records(), created = gtemu_events_created();
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < launches; i++)
        cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
    if (check(cuStreamSynchronize(s), "cuStreamSynchronize")) return 1;
    report_child(t0, launches, records, created, intercepted((void *)cuLaunchKernel, "libcuda.so"));
    return 0;
}

/* Runs this program as a child in `mode` on `path`; 0 with *out filled. */
static int run_child(const char *self, const char *shim, enum path path, enum mode mode,
                     uint64_t launches, struct result *out)
{
    FILE *in = NULL;
    pid_t pid = bench_fork_child(CHILD_ENV, &in);
    if (pid < 0) return -1;
    if (pid == 0) {
        setenv("GPUTRACE_VERBOSITY", "none", 1);
        unsetenv("GPUTRACE_OUTPUT");
        unsetenv("GPUTRACE_CATEGORIES");
        unsetenv("GPUTRACE_CAPTURE");
        unsetenv("CUDA_INJECTION64_PATH");
        unsetenv("GPUTRACE_CALLSITES");
        if (mode == BARE || mode == REF) {
            unsetenv("LD_PRELOAD");
            if (mode == REF) {
                setenv("CUDA_INJECTION64_PATH", cupti_ref, 1);
                setenv("GPUTRACE_CUPTI_REF_LAUNCH_CALLBACKS", "1", 1);
                /* The recorder loads libcupti.so.13 by name: the emulator's. */
                setenv("LD_LIBRARY_PATH", GT_BENCH_EMU_LIB_DIR, 1);
            }
        } else {
            setenv("LD_PRELOAD", shim, 1);
            setenv("GPUTRACE_GPU_TIMING",
                   mode == OFF || mode == NOSITES ? "off"
                   : mode == CUPTI                ? "cupti"
                                                  : "events",
                   1);
        }
        if (mode == NOSITES) setenv("GPUTRACE_CALLSITES", "off", 1);
        if (mode == DISABLED) setenv("GPUTRACE_CATEGORIES", "memory", 1);
        if (mode == OUTSIDE) setenv("GPUTRACE_CAPTURE", "profiler-api", 1);
        char count[32];
        snprintf(count, sizeof count, "%" PRIu64, launches);
        execl(self, self, count, path_names[path], (char *)NULL);
        _exit(127);
    }
    int got = in ? fscanf(in, "%lf %" SCNu64 " %" SCNu64 " %" SCNu64 " %d", &out->ns_per_launch,
                          &out->launches, &out->records, &out->created, &out->intercepted)
                 : 0;
    if (in) fclose(in);
    int status;
    waitpid(pid, &status, 0);
    return got == 5 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int child(uint64_t launches, const char *path)
{
    return strcmp(path, path_names[RUNTIME]) == 0 ? child_runtime(launches)
                                                  : child_driver(launches);
}

typedef struct path_figures {
    double ns[MODES][MAX_RUNS];
    struct result events;  /* timing on, summed over the runs */
    struct result outside; /* outside a capture window, summed over the runs */
    int intercepted;
} path_figures;

#define LIBS 2 /* the library measured, and a baseline to compare it with */

/* One run of every path and mode for each of the nlibs libraries (a bare
 * launch once, for all); 0, or -1 when a child failed. */
static int run_round(const char *const *shims, int nlibs, uint64_t launches, int run,
                     path_figures fig[][PATHS])
{
    for (int p = 0; p < PATHS; p++) {
        for (int m = 0; m < MODES; m++) {
            if (m == REF && !cupti_ref) continue;
            for (int l = 0; l < nlibs; l++) {
                path_figures *f = &fig[l][p];
                struct result res;
                /* The runs without the shim are the same for both. */
                if ((m == BARE || m == REF) && l) {
                    f->ns[m][run] = fig[0][p].ns[m][run];
                    continue;
                }
                if (run_child("/proc/self/exe", shims[l], (enum path)p, (enum mode)m, launches,
                              &res)) {
                    fprintf(stderr, "gt_bench_launch: the %s %s run of %s failed\n", path_names[p],
                            mode_names[m], shims[l]);
                    return -1;
                }
                f->ns[m][run] = res.ns_per_launch;
                if (m != BARE && m != REF) f->intercepted &= res.intercepted;
                struct result *sum = m == EVENTS ? &f->events : m == OUTSIDE ? &f->outside : NULL;
                if (sum) {
                    sum->launches += res.launches;
                    sum->records += res.records;
                    sum->created += res.created;
                }
            }
        }
    }
    return 0;
}

/* The rows of one library on one path; `which` "" or " (baseline)". */
static void print_rows(path_figures *f, int runs, const char *label, const char *which,
                       const char *off_target, bool bare)
{
    double med[MODES];
    for (int m = 0; m < MODES; m++)
        med[m] = m == REF && !cupti_ref ? 0 : bench_median(f->ns[m], runs);
    const struct result *e = &f->events;
    const char *note = f->intercepted ? "" : " (not intercepted: the shim's load only)";
    if (bare) printf("| launch, %s: bare | %.1f ns | |\n", label, med[BARE]);
    printf("| launch, %s: added, timing off%s%s | %+.1f ns | %s |\n", label, note, which,
           med[OFF] - med[BARE], off_target);
    printf("| launch, %s: added by native call sites (timing off, on against off)%s%s | %+.1f ns "
           "| %s |\n",
           label, note, which, med[OFF] - med[NOSITES], bare ? "<= +40 ns" : "");
    printf("| launch, %s: added, timing on%s%s | %+.1f ns; %.4f event records and %" PRIu64
           " events created per launch | 2 records, 0 created |\n",
           label, note, which, med[EVENTS] - med[BARE], (double)e->records / (double)e->launches,
           e->created);
    printf("| launch, %s: added, CUPTI source%s%s | %+.1f ns, %+.1f ns over timing off | "
           "%s |\n",
           label, note, which, med[CUPTI] - med[BARE], med[CUPTI] - med[OFF],
           bare ? "<= +60 ns over timing off" : "");
    if (cupti_ref && bare)
        printf(
            "| launch, %s: added by a bare CUPTI recorder (the kit's reference) | %+.1f ns | |\n",
            label, med[REF] - med[BARE]);
    if (cupti_ref)
        printf(
            "| launch, %s: what the CUPTI source adds to that recorder's cost%s | %+.1f ns | |\n",
            label, which, med[CUPTI] - med[REF]);
    printf("| launch, %s: added, kernel and api categories off%s%s | %+.1f ns | |\n", label, note,
           which, med[DISABLED] - med[BARE]);
    const struct result *o = &f->outside;
    printf("| launch, %s: added, outside a capture window (timing on)%s%s | %+.1f ns; %.4f event "
           "records per launch | as with the categories off; 0 records |\n",
           label, note, which, med[OUTSIDE] - med[BARE], (double)o->records / (double)o->launches);
}

int main(int argc, char **argv)
{
    if (getenv(CHILD_ENV)) return child(strtoull(argv[1], NULL, 10), argc > 2 ? argv[2] : "");
    if (argc < 2) {
        fprintf(stderr, "usage: gt_bench_launch PATH/libgputrace.so [launches] [runs] "
                        "[BASELINE/libgputrace.so|-] [PATH/libcupti_ref.so]\n");
        return 2;
    }
    uint64_t launches = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
    int runs = argc > 3 ? atoi(argv[3]) : 7;
    const char *shims[LIBS] = {argv[1], argc > 4 && strcmp(argv[4], "-") ? argv[4] : NULL};
    cupti_ref = argc > 5 ? argv[5] : NULL;
    int nlibs = shims[1] ? 2 : 1;
    if (launches == 0 || runs < 1 || runs > MAX_RUNS) return 2;
    static path_figures fig[LIBS][PATHS];
    for (int l = 0; l < LIBS; l++)
        for (int p = 0; p < PATHS; p++)
            fig[l][p].intercepted = 1;
    for (int r = 0; r < runs; r++)
        if (run_round(shims, nlibs, launches, r, fig) != 0) return 1;
    static const char *const path_labels[PATHS] = {"driver cuLaunchKernel",
                                                   "runtime __cudaLaunchKernel (<<<>>>)"};
    /* The target is the driver launch's; the runtime path has two wrappers. */
    static const char *const off_targets[PATHS] = {"<= +40 ns", ""};
    for (int p = 0; p < PATHS; p++) {
        print_rows(&fig[0][p], runs, path_labels[p], "", off_targets[p], true);
        if (nlibs > 1) print_rows(&fig[1][p], runs, path_labels[p], " (baseline)", "", false);
    }
    return 0;
}
