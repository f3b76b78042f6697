/* GPU times from CUPTI, the drain's side: a record waiting with its
 * correlation id (gpu_source.h) takes the times of the activity records
 * that carry that id.
 *
 * Each pass first reads the buffers CUPTI completed (cupti_buffers.c) into
 * the correlation table, renewing the clock mapping now and then. A record
 * whose activity records are not in yet waits, and while one waits the
 * drain asks CUPTI for what it holds every GT_CUPTI_FLUSH_NS: a default
 * flush, which hands over the buffers whose records are all complete and
 * never waits for the GPU. An end step waits a bounded time (the
 * pipeline's final wait): a default flush at once, a forced one (records
 * still incomplete come without times) when half of the wait is gone, then
 * what is still missing is reported without GPU time. Reading buffers
 * stays within that wait too (a backlog of them is left unread once it is
 * over), and a pass outside an end step stops reading as soon as one is
 * asked for: an exit on a signal is not held up by a backlog.
 *
 * A graph launch's work is as many records as the graph ran nodes, which
 * the shim cannot know beforehand: its record waits until no new one has
 * come for GT_CUPTI_GRAPH_QUIET_NS, more than two flushes apart. Its
 * kernel nodes then follow it to the consumer as records of their own
 * (GT_EVF_GRAPH_NODE: a kernel's run, not a call; gt_cupti_extras).
 *
 * A record whose activity record the table pushed out (the drain far
 * behind) takes no GPU time, at once. One whose activity record was lost
 * otherwise (CUPTI dropped it, or its buffer was refused) would hold its
 * thread's later records until the end. Once any loss was counted, a
 * record that has waited GT_CUPTI_LOST_NS through flushes is taken for
 * lost and reported without GPU time; without a loss a record waits,
 * however long its work runs. */
#include "cupti_internal.h"

#include <string.h>

#include "clock.h"
#include "gpu_internal.h"
#include "gpu_source.h"

#define GT_CUPTI_FLUSH_NS 10000000u
#define GT_CUPTI_GRAPH_QUIET_NS 25000000u
#define GT_CUPTI_LOST_NS 1000000000u
#define WAITERS 1024u /* records waiting, by correlation id: since when */

static uint64_t last_flush;
static uint64_t now_ns;        /* the pass's time */
static int waiting;            /* a record waited since the last poll */
static int forced;             /* the end step's forced flush was made */
static uint64_t settle_start;  /* the end step's first poll; 0 outside one */
static uint64_t read_until;    /* the end step's deadline for reading buffers; 0 none */
static int (*read_stop)(void); /* outside an end step: one was asked for */
static uint32_t handed_nodes;  /* the last resolved graph launch's nodes, for gt_cupti_extras */
static struct waiter {
    uint32_t corr;
    uint64_t since;
} waiters[WAITERS]; /* direct-mapped: a collision restarts a wait, never ends one early */

static int losses_counted(void)
{
    return gt_cupti_records_dropped() || gt_cupti_buffers_refused() || gt_cupti_table_evicted();
}

/* Whether a record waiting for corr's activity records should stop. */
static int given_up_as_lost(uint32_t corr)
{
    struct waiter *w = &waiters[corr % WAITERS];
    if (w->corr != corr) {
        *w = (struct waiter){corr, now_ns};
        return 0;
    }
    return losses_counted() && now_ns - w->since >= GT_CUPTI_LOST_NS &&
           last_flush > w->since + GT_CUPTI_FLUSH_NS;
}

/* Reads the buffers CUPTI completed, within the pass's limits. */
static void read_completed(void)
{
    gt_cupti_buffers_drain(gt_cupti_records_read, read_until, read_stop);
}

static void flush(uint32_t flag)
{
    gt_cupti.flush_all(flag);
    last_flush = gt_clock_mono_ns();
    gt_cupti_records_set_forced(flag == CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    read_completed();
    gt_cupti_records_set_forced(0);
}

void gt_cupti_poll(uint64_t settle_left_ns, int (*stop)(void))
{
    now_ns = gt_clock_mono_ns();
    gt_cupti_records_set_pass(now_ns);
    /* An end step's wait is over: nothing more is read or flushed, which
     * would only lengthen the exit; what is not in is given up. */
    if (settle_left_ns == 1) return;
    read_until = settle_left_ns ? now_ns + settle_left_ns : 0;
    read_stop = stop;
    if (!gt_cupti_session_running()) {
        read_completed();
        return;
    }
    gt_cupti_clock_sample(0);
    read_completed();
    if (gt_cupti_buffers_starved()) {
        gt_gpu_source_starved();
        return;
    }
    if (stop && stop()) return; /* an end step takes over: it flushes */
    if (!settle_left_ns) {
        settle_start = 0;
        forced = 0;
        if (waiting && now_ns - last_flush >= GT_CUPTI_FLUSH_NS) flush(0);
    } else if (waiting) {
        if (!settle_start) {
            settle_start = now_ns;
            flush(0);
        } else if (!forced && settle_left_ns <= now_ns - settle_start) {
            forced = 1;
            flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        } else if (now_ns - last_flush >= GT_CUPTI_FLUSH_NS / 10) {
            flush(0);
        }
    }
    waiting = 0;
}

/* Work still running when a forced flush took its record (no timestamps)
 * is waited for as long as the end step allows, then given up: counted
 * as pending at the cut, as an unfinished pair is. */
static int settled(const gt_event *ev, const gt_cupti_entry *e)
{
    if (!e || e->running) return 0;
    if (ev->kind != GT_EV_GRAPH) return 1;
    return now_ns - e->updated >= GT_CUPTI_GRAPH_QUIET_NS;
}

int gt_cupti_resolve(gt_event *ev, int give_up)
{
    uint32_t corr = (uint32_t)ev->gpu_start;
    const gt_cupti_entry *e = gt_cupti_table_find(corr);
    int lost = !e && (gt_cupti_table_pushed_out(corr) || given_up_as_lost(corr));
    if (!give_up && !settled(ev, e) && !lost) {
        waiting = 1;
        return 0;
    }
    ev->flags &= (uint8_t)~GT_EVF_GPU_PENDING;
    /* Nodes the drain did not ask for (it gave the launch up) go. */
    gt_cupti_node unused;
    while (gt_cupti_table_take_node(&handed_nodes, &unused))
        ;
    if (e && e->start && !e->untimed) {
        gt_gpu_span span = {e->start, e->end, gt_cupti_clock_window()};
        /* Host times are still ticks here; this is the converting thread. */
        gt_gpu_after_call(&span, gt_clock_to_ns(ev->host_start));
        ev->gpu_start = span.start;
        ev->gpu_end = span.end;
        ev->flags |= GT_EVF_GPU_TIMED;
        if (e->device != UINT16_MAX) ev->device = e->device;
        gt_gpu_count_add(&gt_gpu_count.resolved_timed, 1);
    } else {
        ev->gpu_start = ev->gpu_end = 0;
        gt_gpu_count_add(&gt_gpu_count.resolved_untimed, 1);
    }
    gt_cupti_table_remove(corr, ev->kind == GT_EV_GRAPH ? &handed_nodes : NULL);
    return 1;
}

uint32_t gt_cupti_extras(const gt_event *ev, gt_event *out, uint32_t cap)
{
    uint32_t n = 0;
    gt_cupti_node node;
    while (n < cap && gt_cupti_table_take_node(&handed_nodes, &node)) {
        gt_event *x = &out[n++];
        memset(x, 0, sizeof *x);
        x->kind = GT_EV_KERNEL;
        x->flags = GT_EVF_GRAPH_NODE | (node.start ? GT_EVF_GPU_TIMED : 0);
        x->device = node.device;
        x->name = node.name;
        x->tid = ev->tid;
        x->seq = ev->seq;
        x->stream = ev->stream;
        x->gpu_start = node.start;
        x->gpu_end = node.end;
    }
    return n;
}
