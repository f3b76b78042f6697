/* The event pipeline's costs (figures, not tests: see scripts/bench.sh).
 * Prints rows of a Markdown table: figure | value | target.
 *
 *   append   ns per recorded event on the recording thread: gt_ev_begin,
 *            a kernel-launch record filled, commit; thread CPU time per
 *            burst of events / events, with the drain thread running; 1
 *            and 2 recording threads; the median over every burst of every
 *            thread and run, which a burst disturbed by other work on the
 *            machine does not move. Twice: with the record's times set by
 *            the benchmark (the pipeline's own cost, what the target is
 *            for), then read from the clock as a hook does (two reads per
 *            record). The clock read alone is measured too: on x86 an
 *            rdtsc, whose cost is the CPU's and which every hook pays
 *            whatever the pipeline.
 *   drain    records per second the drain folds into the report (tick
 *            conversion, gt_report_add), measured on records already
 *            published (a backlog: chunks no longer in any cache); also
 *            without the report, to show the pipeline's own share.
 *   memory   chunk memory mapped while 2 threads record as fast as they
 *            can into a small cap: never above it; the excess is dropped. */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_cpu_time.h"
#include "bench_median.h"
#include "buffer.h"
#include "clock.h"
#include "collect.h"
#include "config.h"
#include "event.h"
#include "log.h"
#include "pipeline.h"
#include "process.h"
#include "record.h"
#include "settings.h"
#include "strtab.h"

#define RUNS 5
#define BURST_EVENTS 16384ull /* 2 MiB of records: a working set the caches hold */
#define BURSTS 101            /* per thread and run, the first one a warm-up */
#define DRAIN_EVENTS 4000000ull
#define FLOOD_EVENTS 20000000ull
#define NAMES 16

static uint32_t api_id, name_ids[NAMES];
static uint64_t consumed_only;

static const char *no_env(const char *name, void *ctx)
{
    (void)name;
    (void)ctx;
    return NULL;
}

/* What a launch hook writes. */
static inline int record_launch(uint64_t i, int timestamps)
{
    uint64_t t0 = timestamps ? gt_clock_ticks() : i;
    gt_event *ev = gt_ev_begin();
    if (!ev) return 0;
    ev->kind = GT_EV_KERNEL;
    ev->api = api_id;
    ev->name = name_ids[i % NAMES];
    ev->device = 0;
    ev->stream = 0x7f00 + (i & 3);
    ev->u.kernel.func = 0x5500 + i % NAMES;
    ev->u.kernel.grid[0] = 256;
    ev->u.kernel.grid[1] = ev->u.kernel.grid[2] = 1;
    ev->u.kernel.block[0] = 128;
    ev->u.kernel.block[1] = ev->u.kernel.block[2] = 1;
    ev->host_start = t0;
    ev->host_end = timestamps ? gt_clock_ticks() : i + 1;
    gt_ev_commit(ev);
    return 1;
}

typedef struct recorder {
    pthread_t thread;
    int timestamps;
    int bursts; /* 0: record `events` flat out (the flood) */
    uint64_t events;
    uint64_t stored;
    double *burst_ns; /* ns per event of each measured burst (bursts - 1) */
} recorder;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Sleeps (no CPU time) until the drain has taken everything published
 * and, most likely, recycled it. */
static void wait_drained(void)
{
    gt_pool_stats s;
    for (gt_pool_stats_get(&s); s.pending_chunks; gt_pool_stats_get(&s))
        sleep_ms(1);
    sleep_ms(3);
}

/* Steady state: bursts the drain keeps up with, chunks recycled (the first
 * burst, which maps and first touches them, is not counted). CPU time of
 * the recording loop only. */
static void *record_loop(void *arg)
{
    recorder *r = arg;
    uint64_t stored = 0;
    for (uint64_t i = 0; !r->bursts && i < r->events; i++)
        stored += (uint64_t)record_launch(i, r->timestamps);
    for (int b = 0; b < r->bursts; b++) {
        uint64_t t0 = bench_thread_cpu_ns();
        for (uint64_t i = 0; i < BURST_EVENTS; i++)
            stored += (uint64_t)record_launch(i, r->timestamps);
        if (b > 0) r->burst_ns[b - 1] = (double)(bench_thread_cpu_ns() - t0) / (double)BURST_EVENTS;
        r->events += BURST_EVENTS;
        wait_drained();
    }
    r->stored = stored;
    return NULL;
}

typedef void consume_fn(gt_event *ev, uint32_t n, void *ctx);

static void consume_count(gt_event *ev, uint32_t n, void *ctx)
{
    (void)ctx;
    for (uint32_t i = 0; i < n; i++)
        consumed_only += ev[i].host_end - ev[i].host_start > 0;
}

static void consume_convert(gt_event *ev, uint32_t n, void *ctx)
{
    (void)ctx;
    for (uint32_t i = 0; i < n; i++)
        consumed_only += gt_clock_to_ns(ev[i].host_end) - gt_clock_to_ns(ev[i].host_start) > 0;
}

/* The consumer gets runs of records, as the shim's does (init.c). */
static void start(size_t cap_bytes, int drain_thread, consume_fn *consume)
{
    gt_collect_release();
    gt_pipeline_params p = {
        .chunk_bytes = GT_CHUNK_DEFAULT_BYTES,
        .cap_bytes = cap_bytes,
        .drain_thread = drain_thread,
        .consume = consume,
    };
    if (gt_pipeline_start(&p) != 0) {
        fprintf(stderr, "bench: cannot map the chunk table\n");
        exit(1);
    }
}

/* Runs n recording threads (burst_ns: (bursts - 1) slots per thread). */
static void run_recorders(int n, recorder proto, double *burst_ns, uint64_t *events,
                          uint64_t *stored)
{
    recorder r[2];
    *events = *stored = 0;
    for (int i = 0; i < n; i++) {
        r[i] = proto;
        r[i].burst_ns = burst_ns ? burst_ns + i * (BURSTS - 1) : NULL;
        pthread_create(&r[i].thread, NULL, record_loop, &r[i]);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(r[i].thread, NULL);
        *events += r[i].events;
        *stored += r[i].stored;
    }
}

/* The median ns per event over every measured burst of every thread and run. */
static double append_ns(int threads, int timestamps, uint64_t *dropped)
{
    static double v[RUNS * 2 * (BURSTS - 1)];
    int per_run = threads * (BURSTS - 1);
    *dropped = 0;
    for (int run = 0; run < RUNS; run++) {
        uint64_t events, stored;
        start((size_t)GT_BUFFER_MB_DEFAULT << 20, 1, gt_collect_records);
        recorder proto = {.timestamps = timestamps, .bursts = BURSTS};
        run_recorders(threads, proto, v + run * per_run, &events, &stored);
        gt_pipeline_finish(60000);
        *dropped += events - stored;
    }
    return bench_median(v, RUNS * per_run);
}

/* One clock read (what a hook pays twice per call), in a loop whose reads
 * depend on nothing: the CPU's throughput for them. */
static double clock_read_ns(void)
{
    enum { READS = 1 << 22 };
    double v[RUNS];
    uint64_t sum = 0;
    for (int run = 0; run < RUNS; run++) {
        uint64_t t0 = bench_thread_cpu_ns();
        for (int i = 0; i < READS; i++)
            sum += gt_clock_ticks();
        v[run] = (double)(bench_thread_cpu_ns() - t0) / READS;
    }
    consumed_only += sum & 1;
    return bench_median(v, RUNS);
}

/* Records published with no drain thread, then drained on this thread. */
static double drain_rate(consume_fn *consume)
{
    double v[RUNS];
    size_t cap = (DRAIN_EVENTS / 500 + 16) * GT_CHUNK_DEFAULT_BYTES;
    for (int run = 0; run < RUNS; run++) {
        start(cap, 0, consume);
        for (uint64_t i = 0; i < DRAIN_EVENTS; i++)
            record_launch(i, 1);
        gt_ev_flush();
        uint64_t t0 = gt_clock_mono_ns();
        gt_pipeline_drain_now();
        uint64_t t1 = gt_clock_mono_ns();
        v[run] = (double)DRAIN_EVENTS / ((double)(t1 - t0) / 1e9);
        gt_pipeline_finish(60000);
    }
    return bench_median(v, RUNS);
}

int main(void)
{
    gt_config_parse(&gt_cfg, no_env, NULL);
    gt_log_init(GT_LOG_STDERR, NULL, GT_VERB_NONE);
    gt_clock_init(-1);
    gt_strtab *names = gt_names();
    api_id = gt_strtab_intern(names, "cuLaunchKernel", 14);
    for (int i = 0; i < NAMES; i++) {
        char name[64];
        int n = snprintf(name, sizeof name, "void solver::step<%d>(float*, int)", i);
        name_ids[i] = gt_strtab_intern(names, name, (size_t)n);
    }
    const char *clock = gt_clock_tsc ? "rdtsc" : "clock_gettime";

    double append[2][2]; /* [threads - 1][timestamps] */
    uint64_t dropped = 0;
    for (int threads = 1; threads <= 2; threads++) {
        for (int timestamps = 0; timestamps <= 1; timestamps++) {
            uint64_t d;
            append[threads - 1][timestamps] = append_ns(threads, timestamps, &d);
            dropped += d;
        }
    }
    for (int threads = 1; threads <= 2; threads++)
        printf("| append: begin, fill, commit; %d thread%s | %.1f ns/event | <= 15 ns |\n", threads,
               threads > 1 ? "s" : "", append[threads - 1][0]);
    printf("| clock read (%s), what a hook pays twice per call | %.1f ns | |\n", clock,
           clock_read_ns());
    for (int threads = 1; threads <= 2; threads++)
        printf("| append with both times read from the clock; %d thread%s | %.1f ns/event | |\n",
               threads, threads > 1 ? "s" : "", append[threads - 1][1]);
    printf("| append: records dropped (64 MiB cap, the drain keeping up) | %" PRIu64 " | 0 |\n",
           dropped);

    double into_report = drain_rate(gt_collect_records);
    double converted = drain_rate(consume_convert);
    double alone = drain_rate(consume_count);
    printf("| drain: records folded into the report (a %llu-record backlog) | %.1f M/s | >= 50 "
           "M/s |\n",
           (unsigned long long)DRAIN_EVENTS, into_report / 1e6);
    printf("| drain without the report: tick conversion / nothing | %.0f / %.0f M/s | |\n",
           converted / 1e6, alone / 1e6);

    size_t cap = 4u << 20;
    uint64_t events, stored;
    start(cap, 1, gt_collect_records);
    recorder flood = {.timestamps = 1, .events = FLOOD_EVENTS};
    run_recorders(2, flood, NULL, &events, &stored);
    gt_pool_stats s;
    gt_pool_stats_get(&s);
    gt_pipeline_finish(60000);
    printf("| memory: chunks mapped, %.0f MiB cap, 2 threads flooding (%" PRIu64 " of %" PRIu64
           " stored) | %.2f MiB | <= cap |\n",
           (double)cap / 1048576.0, stored, events, (double)s.mapped_bytes / 1048576.0);
    return s.mapped_bytes <= cap ? 0 : 1;
}
