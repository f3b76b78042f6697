/* The event pipeline's costs (figures, not tests: see scripts/bench.sh).
 *
 *   append   ns per recorded event on the recording thread: gt_ev_begin,
 *            a kernel-launch record filled with two timestamps, commit;
 *            thread CPU time / events, with the drain thread running;
 *            1 and 2 recording threads, median of the runs.
 *   drain    records per second the drain folds into the report (tick
 *            conversion, gt_report_add), measured on records already
 *            published; also without the report, to show the pipeline's
 *            own share.
 *   memory   chunk memory mapped while 2 threads record as fast as they
 *            can into a small cap: never above it; the excess is dropped. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_median.h"
#include "internal.h"

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

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
    double ns_per_event;
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
    uint64_t stored = 0, measured = 0, cpu = 0;
    if (!r->bursts) {
        uint64_t t0 = thread_cpu_ns();
        for (uint64_t i = 0; i < r->events; i++)
            stored += (uint64_t)record_launch(i, r->timestamps);
        cpu = thread_cpu_ns() - t0;
        measured = r->events;
    }
    for (int b = 0; b < r->bursts; b++) {
        uint64_t t0 = thread_cpu_ns();
        for (uint64_t i = 0; i < BURST_EVENTS; i++)
            stored += (uint64_t)record_launch(i, r->timestamps);
        if (b > 0) {
            cpu += thread_cpu_ns() - t0;
            measured += BURST_EVENTS;
        }
        r->events += BURST_EVENTS;
        wait_drained();
    }
    r->ns_per_event = (double)cpu / (double)measured;
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
        .consume_run = consume,
    };
    if (gt_pipeline_start(&p) != 0) {
        fprintf(stderr, "bench: cannot map the chunk table\n");
        exit(1);
    }
}

/* Runs n recording threads; returns the slowest thread's ns/event. */
static double run_recorders(int n, recorder proto, uint64_t *events, uint64_t *stored)
{
    recorder r[2];
    *events = *stored = 0;
    for (int i = 0; i < n; i++) {
        r[i] = proto;
        pthread_create(&r[i].thread, NULL, record_loop, &r[i]);
    }
    double worst = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(r[i].thread, NULL);
        *events += r[i].events;
        *stored += r[i].stored;
        if (r[i].ns_per_event > worst) worst = r[i].ns_per_event;
    }
    return worst;
}

static double append_ns(int threads, int timestamps, uint64_t *dropped)
{
    double v[RUNS];
    *dropped = 0;
    for (int run = 0; run < RUNS; run++) {
        uint64_t events, stored;
        start((size_t)GT_BUFFER_MB_DEFAULT << 20, 1, gt_collect_records);
        recorder proto = {.timestamps = timestamps, .bursts = BURSTS};
        v[run] = run_recorders(threads, proto, &events, &stored);
        gt_pipeline_finish(60000);
        *dropped += events - stored;
    }
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
    printf("clock: %s\n", gt_clock_tsc ? "rdtsc (invariant TSC)" : "clock_gettime");

    uint64_t dropped;
    for (int threads = 1; threads <= 2; threads++) {
        double with = append_ns(threads, 1, &dropped);
        uint64_t dropped_bare;
        double bare = append_ns(threads, 0, &dropped_bare);
        printf("append, %d thread%s: %.1f ns/event with two timestamps, %.1f ns without "
               "(median of %d runs x %llu events; %" PRIu64 " dropped)  [target <= 15 ns]\n",
               threads, threads > 1 ? "s" : "", with, bare, RUNS,
               (unsigned long long)(BURSTS - 1) * BURST_EVENTS, dropped + dropped_bare);
    }

    double into_report = drain_rate(gt_collect_records);
    double converted = drain_rate(consume_convert);
    double alone = drain_rate(consume_count);
    printf("drain: %.1f M events/s into the report; without the report %.1f M/s with tick "
           "conversion, %.1f M/s without (median of %d x %llu events)  [target >= 50 M/s]\n",
           into_report / 1e6, converted / 1e6, alone / 1e6, RUNS, (unsigned long long)DRAIN_EVENTS);

    size_t cap = 4u << 20;
    uint64_t events, stored;
    start(cap, 1, gt_collect_records);
    recorder flood = {.timestamps = 1, .events = FLOOD_EVENTS};
    run_recorders(2, flood, &events, &stored);
    gt_pool_stats s;
    gt_pool_stats_get(&s);
    gt_pipeline_finish(60000);
    printf("memory: peak %.2f MiB of chunks with a %.2f MiB cap, 2 threads x %llu events "
           "flooding: %" PRIu64 " stored, %" PRIu64 " dropped  [target: never above the cap]\n",
           (double)s.mapped_chunks * (double)s.chunk_bytes / 1048576.0, (double)cap / 1048576.0,
           (unsigned long long)FLOOD_EVENTS, stored, events - stored);
    return s.mapped_chunks * s.chunk_bytes <= cap ? 0 : 1;
}
