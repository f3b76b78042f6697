/* The subcommands on big reports (figures, not tests: see scripts/bench.sh).
 *
 *   bench_tools GPUTRACE DIR
 *   bench_tools --write DIR      only the two reports, left in DIR
 *                                (gt-bench-base.json, gt-bench-new.json),
 *                                for profiling
 *
 * Makes two reports of ROWS rows each through the real aggregation and
 * JSON writer (60% kernels, 20% NVTX ranges, 20% entry points, several
 * calls each; the second run has a tenth of the kernels 20% slower, some
 * rows gone and some new), writes them to DIR, then times the gputrace
 * command on them, end to end (start, read, parse, render, write): report
 * at default and verbose verbosity and as JSON, diff, and merge of two and
 * of four reports. Each figure is the median of RUNS runs, with the peak
 * RSS of the command. Target: under 1 s each. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aggregate.h"
#include "bench_median.h"
#include "event.h"
#include "report.h"
#include "strtab.h"

#define ROWS 100000u
#define RUNS 7
#define CALLS_PER_ROW 4u
#define TARGET_S 1.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "<before><i><after>" interned. */
static uint32_t name(gt_strtab *t, const char *before, unsigned i, const char *after)
{
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%s%u%s", before, i, after);
    return gt_strtab_intern(t, buf, (size_t)n);
}

static void add(gt_report *r, const gt_event *ev)
{
    gt_report_add(r, ev);
}

/* One run's report: `variant` 1 is the run that changed. */
static gt_report *make_report(gt_strtab *names, int variant)
{
    gt_report *r = gt_report_create(NULL, names);
    unsigned kernels = ROWS * 6 / 10, ranges = ROWS / 5, apis = ROWS - kernels - ranges;
    uint64_t t = 1000000000ull;
    uint32_t launch = gt_strtab_intern(names, "cuLaunchKernel", 14);
    for (unsigned k = 0; k < kernels; k++) {
        /* The changed run: every 10th kernel 20% slower; 1% gone, 1% new. */
        bool slower = variant && k % 10 == 0, gone = variant && k % 100 == 1;
        if (gone) continue;
        uint32_t id =
            variant && k % 100 == 2
                ? name(names, "void solver::new_kernel_", k, "<float>(float*, int)")
                : name(names, "void solver::kernel_", k, "<float>(float const*, float*, int)");
        for (unsigned c = 0; c < CALLS_PER_ROW; c++) {
            gt_event ev;
            memset(&ev, 0, sizeof ev);
            ev.kind = GT_EV_KERNEL;
            ev.api = launch;
            ev.name = id;
            ev.tid = 1 + c % 4;
            ev.host_start = t;
            ev.host_end = t + 3000;
            uint64_t ns = 1000 + (k % 997) * 13 + c * 7;
            if (slower) ns = ns * 6 / 5;
            ev.flags = GT_EVF_GPU_TIMED;
            ev.gpu_start = t + 500;
            ev.gpu_end = t + 500 + ns;
            add(r, &ev);
            t += ns + 1000;
        }
    }
    for (unsigned i = 0; i < ranges; i++) {
        uint32_t id = name(names, "step ", i, "");
        for (unsigned c = 0; c < CALLS_PER_ROW; c++) {
            gt_event ev;
            memset(&ev, 0, sizeof ev);
            ev.kind = GT_EV_NVTX_PUSH;
            ev.name = id;
            ev.tid = 1;
            ev.host_start = ev.host_end = t;
            add(r, &ev);
            ev.kind = GT_EV_NVTX_POP;
            ev.name = 0;
            t += 2000 + i % 1000;
            ev.host_start = ev.host_end = t;
            add(r, &ev);
        }
    }
    for (unsigned i = 0; i < apis; i++) {
        uint32_t id = name(names, "cuEntryPoint_", i, "");
        for (unsigned c = 0; c < CALLS_PER_ROW; c++) {
            gt_event ev;
            memset(&ev, 0, sizeof ev);
            ev.kind = GT_EV_API;
            ev.api = id;
            ev.tid = 1;
            ev.host_start = t;
            ev.host_end = t + 100 + i % 500;
            add(r, &ev);
            t += 1000;
        }
    }
    gt_report_finish(r, t);
    return r;
}

static int write_report(gt_strtab *names, int variant, const char *path)
{
    gt_report *r = make_report(names, variant);
    gt_process_info p = {.pid = 100 + variant,
                         .ppid = 1,
                         .hostname = "bench",
                         .command = "./solver --big",
                         .start_ns = 1000000000ull,
                         .end_ns = 9000000000ull};
    FILE *f = fopen(path, "w");
    int rc = f && gt_report_write_json(r, &p, f) == 0 ? 0 : -1;
    if (f && fclose(f) != 0) rc = -1;
    gt_report_destroy(r);
    return rc;
}

/* Runs argv with stdout to /dev/null; the wall time, the CPU time (user
 * and system) and the peak RSS in KiB. */
static double run(char *const argv[], double *cpu_s, long *rss_kib, int *status)
{
    double start = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, STDOUT_FILENO);
        execv(argv[0], argv);
        _exit(127);
    }
    struct rusage ru;
    if (pid < 0 || wait4(pid, status, 0, &ru) < 0) return -1;
    *rss_kib = ru.ru_maxrss;
    *cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
             (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    return now_s() - start;
}

/* Wall time is the figure; the CPU time beside it is what the command
 * itself took (one thread), which other work on the machine moves less. */
static void figure(const char *what, char *const argv[], int ok_status)
{
    double t[RUNS], cpu[RUNS];
    long rss = 0, worst_rss = 0;
    for (int i = 0; i < RUNS; i++) {
        int status = 0;
        t[i] = run(argv, &cpu[i], &rss, &status);
        if (t[i] < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != ok_status) {
            printf("| %s | failed (exit status %d) | |\n", what,
                   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
            return;
        }
        if (rss > worst_rss) worst_rss = rss;
    }
    double med = bench_median(t, RUNS);
    printf("| %s | %.2f s (%.2f s CPU); peak RSS %ld MiB | < %.0f s%s |\n", what, med,
           bench_median(cpu, RUNS), worst_rss / 1024, TARGET_S, med < TARGET_S ? "" : " (missed)");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_tools GPUTRACE DIR | bench_tools --write DIR\n");
        return 2;
    }
    bool write_only = strcmp(argv[1], "--write") == 0;
    char *cli = argv[1], base[4096], next[4096], out[4096];
    snprintf(base, sizeof base, "%s/gt-bench-base.json", argv[2]);
    snprintf(next, sizeof next, "%s/gt-bench-new.json", argv[2]);
    snprintf(out, sizeof out, "%s/gt-bench-merged", argv[2]);
    gt_strtab *names = gt_strtab_create();
    if (write_report(names, 0, base) != 0 || write_report(names, 1, next) != 0) {
        fprintf(stderr, "bench_tools: cannot write the reports in %s\n", argv[2]);
        return 1;
    }
    gt_strtab_destroy(names);
    if (write_only) return 0;
    struct stat st;
    stat(base, &st);
    char what[256];
    snprintf(what, sizeof what, "report of %u rows (%.0f MB of JSON), default summary", ROWS,
             (double)st.st_size / 1e6);
    figure(what, (char *[]){cli, "report", base, NULL}, 0);
    figure("the same, verbose (every row)", (char *[]){cli, "report", base, "-v", "verbose", NULL},
           0);
    figure("the same, as JSON", (char *[]){cli, "report", base, "-f", "json", NULL}, 0);
    figure("diff of two such reports (exit 1: slower rows)",
           (char *[]){cli, "diff", base, next, NULL}, 1);
    figure("diff, every row as CSV", (char *[]){cli, "diff", base, next, "-f", "csv", NULL}, 1);
    figure("merge of two such reports, to JSON",
           (char *[]){cli, "merge", base, next, "-o", out, NULL}, 0);
    figure("merge of four such reports, to JSON",
           (char *[]){cli, "merge", base, next, base, next, "-o", out, NULL}, 0);
    unlink(base);
    unlink(next);
    strcat(out, ".json");
    unlink(out);
    return 0;
}
