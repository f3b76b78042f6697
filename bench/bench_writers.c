/* The writers' costs (figures, not tests: see scripts/bench.sh).
 *
 * A run of N events (a solver's loop on two threads and two streams: NVTX
 * range, copy in, two kernels, copy out, a synchronize every 16 rounds,
 * an allocation and a free every 64) goes through what the drain does
 * with every record when all formats are asked for: gt_report_add, then
 * gt_timeline_add streaming the Chrome trace and gt_pftrace_add streaming
 * the Perfetto trace, each to its file. Then what the exit does: the text
 * summary, JSON and CSV files, the traces completed. Each trace's own
 * time (its adds, its completion) and size per record are given apart,
 * side by side: targets for the Perfetto trace, 10M records in under 1 s
 * at 30 bytes a record at most.
 *
 *   bench_writers [DIR]          1M and 10M events, each in a child process
 *                                so that its peak RSS is its own; files go
 *                                to DIR (default /tmp), then to /dev/null
 *                                (the writers' own cost, without the file
 *                                system's)
 *   bench_writers --one N DIR    one run of N events (what the children do;
 *                                DIR "-" is /dev/null)
 *
 * Making the records is the benchmark's own work (in the shim the hooks do
 * it, in the program's threads): it is timed apart and left out of every
 * figure. Target: all formats for 10M events within 2 s, and peak memory
 * that does not grow with the number of events. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aggregate.h"
#include "chrome.h"
#include "event.h"
#include "pftrace.h"
#include "report.h"
#include "settings.h"
#include "stream_file.h"
#include "strtab.h"
#include "trace_format.h"

#define BATCH 4096u /* records handed over at a time, as a drained chunk */
#define TARGET_S 2.0
#define PERFETTO_TARGET_S 1.0
#define PERFETTO_TARGET_BYTES 30.0

typedef struct names {
    uint32_t push, sync, h2d, d2h, launch, alloc, free_, range, kernels[3];
} names;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static gt_event record(uint8_t kind, uint32_t api, uint32_t tid, uint64_t t, uint64_t host_ns)
{
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = kind;
    ev.api = api;
    ev.tid = tid;
    ev.host_start = t;
    ev.host_end = t + host_ns;
    return ev;
}

static void set_gpu(gt_event *ev, uint64_t *gpu_clock, uint64_t ns)
{
    if (*gpu_clock < ev->host_end) *gpu_clock = ev->host_end;
    ev->flags |= GT_EVF_GPU_TIMED;
    ev->gpu_start = *gpu_clock;
    ev->gpu_end = *gpu_clock + ns;
    *gpu_clock += ns;
}

static gt_event copy(const names *n, uint32_t tid, uint64_t t, uint64_t *gpu, bool in)
{
    gt_event ev = record(GT_EV_MEMCPY, in ? n->h2d : n->d2h, tid, t, 3000);
    ev.flags = GT_EVF_ASYNC;
    ev.u.copy.dir = in ? GT_DIR_HTOD : GT_DIR_DTOH;
    ev.u.copy.host_mem = GT_HOST_PINNED;
    ev.bytes = in ? 1u << 20 : 256u << 10;
    ev.stream = 0x7f0000001000ull + tid;
    set_gpu(&ev, gpu, in ? 90000 : 25000);
    return ev;
}

static gt_event kernel(const names *n, uint32_t tid, uint64_t t, uint64_t *gpu, uint64_t i)
{
    gt_event ev = record(GT_EV_KERNEL, n->launch, tid, t, 4000);
    ev.name = n->kernels[i % 3];
    ev.stream = 0x7f0000001000ull + tid;
    ev.u.kernel.grid[0] = 1024, ev.u.kernel.grid[1] = ev.u.kernel.grid[2] = 1;
    ev.u.kernel.block[0] = 256, ev.u.kernel.block[1] = ev.u.kernel.block[2] = 1;
    set_gpu(&ev, gpu, 200000 + (i % 97) * 1000);
    return ev;
}

/* The records of round i (of one thread) into out; returns how many. */
static unsigned round_records(const names *n, uint64_t i, uint64_t *t, uint64_t *gpu, gt_event *out)
{
    uint32_t tid = 1000 + (uint32_t)(i & 1);
    unsigned k = 0;
    gt_event ev = record(GT_EV_NVTX_PUSH, n->push, tid, *t, 300);
    ev.name = n->range;
    out[k++] = ev;
    out[k++] = copy(n, tid, *t += 1000, gpu, true);
    out[k++] = kernel(n, tid, *t += 4000, gpu, i);
    out[k++] = kernel(n, tid, *t += 5000, gpu, i + 1);
    out[k++] = copy(n, tid, *t += 5000, gpu, false);
    if (i % 16 == 15) out[k++] = record(GT_EV_SYNC, n->sync, tid, *t += 4000, 400000);
    if (i % 64 == 63) {
        ev = record(GT_EV_ALLOC, n->alloc, tid, *t += 1000, 20000);
        ev.u.mem.addr = 0x700000000000ull + i * 4096;
        ev.bytes = 8u << 20;
        out[k++] = ev;
        ev = record(GT_EV_FREE, n->free_, tid, *t += 30000, 20000);
        ev.u.mem.addr = 0x700000000000ull + i * 4096;
        out[k++] = ev;
    }
    ev = record(GT_EV_NVTX_POP, 0, tid, *t += 4000, 300);
    out[k++] = ev;
    *t += 300000;
    return k;
}

static void intern_names(gt_strtab *s, names *n)
{
#define NAME(field, text) n->field = gt_strtab_intern(s, text, strlen(text))
    NAME(push, "nvtxRangePushA");
    NAME(sync, "cuStreamSynchronize");
    NAME(h2d, "cuMemcpyHtoDAsync_v2");
    NAME(d2h, "cuMemcpyDtoHAsync_v2");
    NAME(launch, "cuLaunchKernel");
    NAME(alloc, "cuMemAlloc_v2");
    NAME(free_, "cuMemFree_v2");
    NAME(range, "solver step");
    NAME(kernels[0], "void ode::rk4_integrate<double, 4>(double const*, double*, int)");
    NAME(kernels[1], "reduce_status(int const*, int*, int)");
    NAME(kernels[2], "void ode::error_norm<double>(double const*, double*, int)");
#undef NAME
}

static int write_verbose_text(const gt_report *r, const gt_process_info *p, FILE *out)
{
    return gt_report_write_summary_at(r, p, GT_VERB_VERBOSE, out);
}

typedef int (*writer)(const gt_report *r, const gt_process_info *p, FILE *out);

static int write_file(const char *dir, const char *name, writer write, const gt_report *r,
                      const gt_process_info *p)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(strcmp(dir, "-") == 0 ? "/dev/null" : path, "w");
    int rc = f && write(r, p, f) == 0 ? 0 : -1;
    if (f && fclose(f) != 0) rc = -1;
    if (rc) fprintf(stderr, "bench: cannot write %s\n", path);
    return rc;
}

/* This thread's CPU time: on a loaded machine, what a writer cost apart
 * from the waits for a CPU that its wall time includes. */
static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static long peak_rss_kib(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return ru.ru_maxrss;
}

/* A streamed trace's file: its temporary file, or /dev/null. */
typedef struct trace_file {
    char path[4096];
    gt_stream_file f;
} trace_file;

static int open_trace(trace_file *t, const char *dir, const char *name)
{
    bool sink = strcmp(dir, "-") == 0;
    char err[4200];
    snprintf(t->path, sizeof t->path, "%s/%s", sink ? "/dev" : dir, name);
    t->f = (gt_stream_file){.fd = -1};
    if (sink)
        t->f.fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    else if (gt_stream_file_open(&t->f, t->path, err, sizeof err) != 0)
        t->f.fd = -1;
    if (t->f.fd < 0) fprintf(stderr, "bench: cannot write %s\n", t->path);
    return t->f.fd < 0 ? -1 : 0;
}

/* Puts the finished trace in place (rc: its finish's). */
static int close_trace(trace_file *t, const char *dir, int rc)
{
    char err[4200] = "write failed";
    if (strcmp(dir, "-") == 0) {
        close(t->f.fd);
    } else if (rc == 0 && gt_stream_file_commit(&t->f, t->path, err, sizeof err) != 0) {
        rc = -1;
    }
    if (rc) fprintf(stderr, "bench: %s: %s\n", t->path, err);
    return rc;
}

static int one_run(uint64_t events, const char *dir)
{
    gt_strtab *strings = gt_strtab_create();
    names n;
    intern_names(strings, &n);
    gt_report *r = gt_report_create(NULL, strings);
    bool sink = strcmp(dir, "-") == 0;
    trace_file chrome, perfetto;
    if (open_trace(&chrome, dir, "bench-writers.trace.json") != 0 ||
        open_trace(&perfetto, dir, "bench-writers.pftrace") != 0)
        return 1;
    gt_process_info p = {.pid = getpid(), .hostname = "bench", .command = "./solver"};
    uint64_t t = 1000000000, gpu = 0;
    p.start_ns = t;
    gt_timeline *tl = gt_timeline_create(chrome.f.fd, strings, p.pid, 0, GT_CAT_ALL);
    gt_timeline_follow_memory(tl, &r->memory);
    gt_pftrace *pf = gt_pftrace_create(perfetto.f.fd, strings, p.pid, GT_CAT_ALL);
    gt_pftrace_follow_memory(pf, &r->memory);
    static gt_event batch[BATCH + 16];

    double t0 = now_s(), cpu0 = cpu_s(), aggregate_s = 0, making_s = 0, chrome_s = 0,
           perfetto_s = 0, chrome_cpu = 0, perfetto_cpu = 0;
    uint64_t done = 0, round = 0;
    while (done < events) {
        unsigned k = 0;
        double m = now_s();
        while (k < BATCH && done + k < events)
            k += round_records(&n, round++, &t, &gpu, batch + k);
        if (done + k > events) k = (unsigned)(events - done);
        double a = now_s();
        making_s += a - m;
        for (unsigned i = 0; i < k; i++)
            gt_report_add(r, &batch[i]);
        double c = now_s(), c_cpu = thread_cpu_s();
        aggregate_s += c - a;
        for (unsigned i = 0; i < k; i++)
            gt_timeline_add(tl, &batch[i]);
        double f = now_s(), f_cpu = thread_cpu_s();
        chrome_s += f - c;
        chrome_cpu += f_cpu - c_cpu;
        for (unsigned i = 0; i < k; i++)
            gt_pftrace_add(pf, &batch[i]);
        perfetto_s += now_s() - f;
        perfetto_cpu += thread_cpu_s() - f_cpu;
        done += k;
    }
    double drained = now_s() - making_s;
    p.end_ns = t;
    gt_report_finish(r, p.end_ns); /* the memory counters reach both traces here */
    int rc = write_file(dir, "bench-writers.txt", write_verbose_text, r, &p);
    rc |= write_file(dir, "bench-writers.json", gt_report_write_json, r, &p);
    rc |= write_file(dir, "bench-writers.csv", gt_report_write_csv, r, &p);
    double c = now_s(), c_cpu = thread_cpu_s();
    rc |= close_trace(&chrome, dir, gt_timeline_finish(tl, &p));
    double f = now_s(), f_cpu = thread_cpu_s();
    rc |= close_trace(&perfetto, dir, gt_pftrace_finish(pf, &p));
    double end = now_s();
    chrome_s += f - c;
    perfetto_s += end - f;
    chrome_cpu += f_cpu - c_cpu;
    perfetto_cpu += thread_cpu_s() - f_cpu;
    end -= making_s;
    uint64_t chrome_bytes = gt_trace_bytes(tl), perfetto_bytes = gt_trace_bytes(pf);
    const char *to = sink ? "/dev/null" : dir;
    printf("%" PRIu64 " events to %s: %.2f s in all [target <= %.1f s at 10M], %.2f s of CPU: "
           "drain side %.2f s (aggregation %.2f s, traces streaming %.2f s), exit side %.3f s; "
           "trace %.0f MiB, %.0f bytes per record; peak RSS %ld KiB (making the records, not "
           "counted: %.2f s)\n",
           events, to, end - t0, TARGET_S, cpu_s() - cpu0 - making_s, drained - t0, aggregate_s,
           drained - t0 - aggregate_s, end - drained,
           (double)(chrome_bytes + perfetto_bytes) / 1048576.0,
           (double)(chrome_bytes + perfetto_bytes) / (double)events, peak_rss_kib(RUSAGE_SELF),
           making_s);
    printf("%" PRIu64 " events to %s: chrome trace %.2f s (%.2f s CPU), %.0f MiB, %.1f bytes "
           "per record\n",
           events, to, chrome_s, chrome_cpu, (double)chrome_bytes / 1048576.0,
           (double)chrome_bytes / (double)events);
    printf("%" PRIu64 " events to %s: perfetto trace %.2f s (%.2f s CPU), %.0f MiB, %.1f bytes "
           "per record [target < %.0f s at 10M, <= %.0f bytes per record]\n",
           events, to, perfetto_s, perfetto_cpu, (double)perfetto_bytes / 1048576.0,
           (double)perfetto_bytes / (double)events, PERFETTO_TARGET_S, PERFETTO_TARGET_BYTES);
    fflush(stdout);
    const char *files[] = {"bench-writers.txt", "bench-writers.json", "bench-writers.csv",
                           "bench-writers.trace.json", "bench-writers.pftrace"};
    for (size_t i = 0; !sink && i < sizeof files / sizeof files[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    gt_timeline_destroy(tl);
    gt_pftrace_destroy(pf);
    gt_report_destroy(r);
    gt_strtab_destroy(strings);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--one") == 0)
        return one_run(strtoull(argv[2], NULL, 10), argv[3]);
    const char *dirs[] = {argc > 1 ? argv[1] : "/tmp", "-"};
    static const char *const sizes[] = {"1000000", "10000000"};
    int rc = 0;
    for (size_t i = 0; i < 4; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            execl("/proc/self/exe", argv[0], "--one", sizes[i % 2], dirs[i / 2], (char *)NULL);
            _exit(127);
        }
        int status;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
    }
    return rc;
}
