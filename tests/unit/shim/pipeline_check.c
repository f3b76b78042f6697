#include "buffer.h"
#include "clock.h"
#include "event.h"
#include "pipeline.h"
#include "pipeline_check.h"
#include "record.h"

#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define MAX_THREADS 128

typedef struct tally {
    uint32_t tid;
    uint64_t next_seq;
    uint64_t count;
    uint64_t bad; /* out of order, or payload damaged */
    gt_event last;
} tally;

static tally tallies[MAX_THREADS];
static int n_tallies;
static uint64_t consumed;
static uint64_t runs;
static gt_pipeline_totals totals;
static int finished_calls;
static int snapshots, snapshots_wrong; /* snapshot reports; those not as consumed */

void check_reset(void)
{
    memset(tallies, 0, sizeof tallies);
    n_tallies = 0;
    consumed = 0;
    runs = 0;
    memset(&totals, 0, sizeof totals);
    finished_calls = 0;
    snapshots = snapshots_wrong = 0;
}

static uint64_t payload(uint32_t tid, uint64_t seq)
{
    return seq * 0x9e3779b97f4a7c15ull ^ tid;
}

void check_fill(gt_event *ev)
{
    ev->kind = GT_EV_KERNEL;
    ev->host_start = gt_clock_ticks();
    ev->bytes = payload(ev->tid, ev->seq);
    ev->stream = ~ev->seq;
    ev->host_end = gt_clock_ticks();
}

_Atomic uint64_t check_gpu_completed;
int check_gpu_give_ups;
int check_gpu_cut_asks;

static int fake_resolve(gt_event *ev, int give_up)
{
    uint64_t h = ev->gpu_start;
    if (h <= atomic_load(&check_gpu_completed)) {
        ev->gpu_start = 1000 * h;
        ev->gpu_end = 1000 * h + 500;
        ev->flags = (uint8_t)((ev->flags & ~GT_EVF_GPU_PENDING) | GT_EVF_GPU_TIMED);
        return 1;
    }
    if (!give_up) return 0;
    if (give_up == GT_GPU_GIVE_UP_CUT)
        check_gpu_cut_asks++;
    else
        check_gpu_give_ups++;
    ev->flags &= (uint8_t)~GT_EVF_GPU_PENDING;
    return 1;
}

const gt_gpu_resolver check_gpu_resolver = {.resolve = fake_resolve};

void check_gpu_reset(void)
{
    atomic_store(&check_gpu_completed, 0);
    check_gpu_give_ups = 0;
    check_gpu_cut_asks = 0;
}

void check_record_pending(uint64_t handle)
{
    gt_event *ev = gt_ev_begin();
    assert_non_null(ev);
    check_fill(ev);
    ev->flags = GT_EVF_GPU_PENDING;
    ev->gpu_start = handle;
    gt_ev_commit(ev);
}

uint64_t check_record_n(uint64_t n, int throttle)
{
    uint64_t stored = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (throttle && i % 31 == 0) {
            gt_pool_stats s;
            for (gt_pool_stats_get(&s); s.pending_chunks > s.max_chunks / 4; gt_pool_stats_get(&s))
                sched_yield();
        }
        gt_event *ev = gt_ev_begin();
        if (!ev) continue;
        check_fill(ev);
        gt_ev_commit(ev);
        stored++;
    }
    return stored;
}

static tally *tally_of(uint32_t tid)
{
    for (int i = 0; i < n_tallies; i++)
        if (tallies[i].tid == tid) return &tallies[i];
    if (n_tallies == MAX_THREADS) return NULL;
    tallies[n_tallies].tid = tid;
    return &tallies[n_tallies++];
}

void check_ev_cancel(void)
{
    gt_tls.seq--;
    gt_tls.guard = 0;
}

void check_consume(gt_event *ev, void *ctx)
{
    (void)ctx;
    consumed++;
    tally *t = tally_of(ev->tid);
    if (!t) return;
    if (ev->seq != t->next_seq || ev->kind != GT_EV_KERNEL ||
        ev->bytes != payload(ev->tid, ev->seq) || ev->stream != ~ev->seq ||
        (ev->flags & GT_EVF_GPU_PENDING))
        t->bad++;
    t->next_seq = ev->seq + 1;
    t->count++;
    t->last = *ev;
}

void check_finished(const gt_pipeline_totals *t, void *ctx)
{
    (void)ctx;
    if (t->snapshot) {
        /* Made on the draining thread after the records it counts. */
        if (t->records != consumed || t->final) snapshots_wrong++;
        snapshots++;
        return;
    }
    totals = *t;
    finished_calls++;
}

int check_snapshots(void)
{
    return snapshots;
}

int check_snapshots_wrong(void)
{
    return snapshots_wrong;
}

int check_finished_calls(void)
{
    return finished_calls;
}

const gt_pipeline_totals *check_totals(void)
{
    return &totals;
}

uint64_t check_consumed(void)
{
    return consumed;
}

int check_threads_seen(void)
{
    return n_tallies;
}

uint64_t check_thread_count(int i)
{
    return tallies[i].count;
}

const gt_event *check_thread_last(int i)
{
    return &tallies[i].last;
}

void check_assert_thread_in_order(int i)
{
    assert_true(i < n_tallies);
    assert_int_equal(tallies[i].bad, 0);
    assert_int_equal(tallies[i].next_seq, tallies[i].count);
}

void check_assert_thread(int i, uint64_t n)
{
    check_assert_thread_in_order(i);
    assert_int_equal(tallies[i].count, n);
}

void check_assert_thread_count_in(int i, uint64_t lo, uint64_t hi)
{
    check_assert_thread_in_order(i);
    assert_in_range(tallies[i].count, lo, hi);
}

/* Called on the drain thread, where cmocka cannot fail a test: a run that
 * is not one thread's consecutive records marks that thread's tally bad. */
void check_run_shape(const gt_event *ev, uint32_t n)
{
    runs++;
    tally *t = tally_of(ev[0].tid);
    if (!t) return;
    if (n == 0) t->bad++;
    for (uint32_t i = 1; i < n; i++)
        if (ev[i].tid != ev[0].tid || ev[i].seq != ev[0].seq + i) t->bad++;
}

void check_consume_run(gt_event *ev, uint32_t n, void *ctx)
{
    check_run_shape(ev, n);
    for (uint32_t i = 0; i < n; i++)
        check_consume(&ev[i], ctx);
}

uint64_t check_runs(void)
{
    return runs;
}

