/* What snapshots (GPUTRACE_INTERVAL) cost the program's threads (figures,
 * not tests: see scripts/bench.sh), on the emulated driver.
 *
 *   gt_bench_snapshot PATH/libgputrace.so DIR [marks] [seconds] [runs]
 *
 * A child under libgputrace.so (GPU timing off, NVTX through the same
 * library) first makes a large report: `marks` NVTX marks with distinct
 * names (default 100000; each a row of the marks table and of the NVTX
 * table). Then it launches a zero-duration kernel as fast as it can for
 * `seconds` (default 1.5), timing every launch, while (mode `snapshots`)
 * the report files DIR/snap.{json,txt,csv} are rewritten every 0.1 s, or
 * (mode `none`) only at exit. Runs alternate between the modes; per mode,
 * medians over the runs of: the mean ns per launch, the slowest launch,
 * launches over 100 us, and the snapshots written meanwhile (changes of
 * the JSON file seen), and how long writing the last snapshot's JSON took
 * (from the file's birth to its last change, statx). A stalled thread
 * would show as a slowest launch of about that length; the thread's own
 * CPU time per launch tells contention for the CPU (fewer free cores than
 * busy threads) from waiting. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <nvtx3/nvToolsExt.h>

#include "bench_emu.h"
#include "bench_cpu_time.h"
#include "bench_median.h"

#define CHILD_ENV "GT_BENCH_SNAPSHOT_CHILD"
#define MAX_RUNS 31
#define STALL_NS 100000.0

enum mode { NONE, SNAPSHOTS, MODES };
static const char *const mode_names[MODES] = {"none", "snapshots"};

#define FIGURES 6
struct result {
    double ns_per_launch, slowest_ns, stalls, snapshots, json_write_ns, cpu_ns_per_launch;
};

static int child(const char *json, long marks, double seconds)
{
    CUfunction f;
    CUstream s;
    if (bench_driver_setup("gt_bench_snapshot", &f, &s)) return 1;
    char name[32];
    for (long i = 0; i < marks; i++) {
        snprintf(name, sizeof name, "mark %ld", i);
        nvtxMarkA(name);
    }
    uint64_t launches = 0, stalls = 0, slowest = 0, snapshots = 0;
    struct timespec last_change = {0, 0};
    uint64_t cpu0 = bench_thread_cpu_ns();
    uint64_t start = bench_now_ns(), end = start + (uint64_t)(seconds * 1e9), t = start;
    while (t < end) {
        for (int i = 0; i < 1000; i++) {
            uint64_t t0 = bench_now_ns();
            cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
            t = bench_now_ns();
            if (t - t0 > slowest) slowest = t - t0;
            stalls += t - t0 > STALL_NS;
        }
        launches += 1000;
        struct stat st;
        if (stat(json, &st) == 0 && (st.st_mtim.tv_sec != last_change.tv_sec ||
                                     st.st_mtim.tv_nsec != last_change.tv_nsec)) {
            snapshots += last_change.tv_sec != 0 || last_change.tv_nsec != 0;
            last_change = st.st_mtim;
        }
        if (launches % 100000 == 0 &&
            bench_check("gt_bench_snapshot", cuStreamSynchronize(s), "cuStreamSynchronize"))
            return 1;
    }
    uint64_t elapsed = bench_now_ns() - start, cpu = bench_thread_cpu_ns() - cpu0;
    struct statx sx;
    double write_ns = 0;
    if (statx(AT_FDCWD, json, 0, STATX_BTIME | STATX_MTIME, &sx) == 0 &&
        (sx.stx_mask & STATX_BTIME))
        write_ns = (double)(sx.stx_mtime.tv_sec - sx.stx_btime.tv_sec) * 1e9 +
                   (double)((int64_t)sx.stx_mtime.tv_nsec - (int64_t)sx.stx_btime.tv_nsec);
    printf("%.3f %" PRIu64 " %" PRIu64 " %" PRIu64 " %.0f %.3f\n",
           (double)elapsed / (double)launches, slowest, stalls, snapshots, write_ns,
           (double)cpu / (double)launches);
    return 0;
}

static int run_child(const char *shim, const char *dir, enum mode mode, long marks, double seconds,
                     struct result *out)
{
    char template[4096], json[4200];
    snprintf(template, sizeof template, "%s/snap", dir);
    snprintf(json, sizeof json, "%s.json", template);
    unlink(json);
    FILE *in = NULL;
    pid_t pid = bench_fork_child(CHILD_ENV, &in);
    if (pid < 0) return -1;
    if (pid == 0) {
        setenv("GPUTRACE_VERBOSITY", "none", 1);
        setenv("GPUTRACE_GPU_TIMING", "off", 1);
        setenv("GPUTRACE_OUTPUT", template, 1);
        setenv("GPUTRACE_FORMAT", "json,text,csv", 1);
        setenv("LD_PRELOAD", shim, 1);
        setenv("NVTX_INJECTION64_PATH", shim, 1);
        if (mode == SNAPSHOTS)
            setenv("GPUTRACE_INTERVAL", "0.1", 1);
        else
            unsetenv("GPUTRACE_INTERVAL");
        char n[32], secs[32];
        snprintf(n, sizeof n, "%ld", marks);
        snprintf(secs, sizeof secs, "%g", seconds);
        execl("/proc/self/exe", "gt_bench_snapshot", json, n, secs, (char *)NULL);
        _exit(127);
    }
    int got =
        in ? fscanf(in, "%lf %lf %lf %lf %lf %lf", &out->ns_per_launch, &out->slowest_ns,
                    &out->stalls, &out->snapshots, &out->json_write_ns, &out->cpu_ns_per_launch)
           : 0;
    if (in) fclose(in);
    int status;
    waitpid(pid, &status, 0);
    return got == FIGURES && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (getenv(CHILD_ENV)) return child(argv[1], strtol(argv[2], NULL, 10), atof(argv[3]));
    if (argc < 3) {
        fprintf(stderr, "usage: gt_bench_snapshot PATH/libgputrace.so DIR [marks] [seconds] "
                        "[runs]\n");
        return 2;
    }
    long marks = argc > 3 ? strtol(argv[3], NULL, 10) : 100000;
    double seconds = argc > 4 ? atof(argv[4]) : 1.5;
    int runs = argc > 5 ? atoi(argv[5]) : 5;
    if (marks < 0 || seconds <= 0 || runs < 1 || runs > MAX_RUNS) return 2;
    static double fig[MODES][FIGURES][MAX_RUNS];
    for (int r = 0; r < runs; r++) {
        for (int m = 0; m < MODES; m++) {
            struct result res;
            if (run_child(argv[1], argv[2], (enum mode)m, marks, seconds, &res) != 0) {
                fprintf(stderr, "gt_bench_snapshot: the %s run failed\n", mode_names[m]);
                return 1;
            }
            fig[m][0][r] = res.ns_per_launch;
            fig[m][1][r] = res.slowest_ns;
            fig[m][2][r] = res.stalls;
            fig[m][3][r] = res.snapshots;
            fig[m][4][r] = res.json_write_ns;
            fig[m][5][r] = res.cpu_ns_per_launch;
        }
    }
    double med[MODES][FIGURES];
    for (int m = 0; m < MODES; m++)
        for (int k = 0; k < FIGURES; k++)
            med[m][k] = bench_median(fig[m][k], runs);
    printf("| launch during snapshots of a report of %ld NVTX marks (every 0.1 s, %.0f in %.1f s; "
           "the JSON alone written in %.0f ms) against none | wall %.1f ns vs %.1f ns per launch, "
           "the launching thread's CPU %.1f ns vs %.1f ns; slowest %.0f us vs %.0f us; %.0f vs "
           "%.0f launches over 100 us | the thread's CPU per launch unchanged; no launch as slow "
           "as a snapshot |\n",
           marks, med[SNAPSHOTS][3], seconds, med[SNAPSHOTS][4] / 1e6, med[SNAPSHOTS][0],
           med[NONE][0], med[SNAPSHOTS][5], med[NONE][5], med[SNAPSHOTS][1] / 1000,
           med[NONE][1] / 1000, med[SNAPSHOTS][2], med[NONE][2]);
    return 0;
}
