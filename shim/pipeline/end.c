/* The pipeline's end steps: who asks for them, who waits, and what each
 * step is made of (the drain's side of each is in drain.c).
 *
 * Each step is asked for by a program thread (or the signal handler) and
 * made on the drain thread; without one, by the asking thread itself, one
 * thread at a time:
 *  - the cut: every thread's records so far are taken, GPU times still
 *    pending are awaited for at most final_wait_ms and then given up
 *    (counted), and the consumer is told (params.cut): what it receives
 *    afterwards is late. Recording goes on, so that what threads still do
 *    is counted, not lost. From the cut's start no event pair is made.
 *  - a report (exec): the same taking and bounded wait, then finished()
 *    with the totals so far; recording goes on (the exec may fail).
 *  - the final report: the cut if not made, then recording closes,
 *    everything recorded is taken, finished() is called for the last time,
 *    and the drain thread ends.
 * Waiting is on futexes (async-signal-safe), bounded by the asker. */
#include "clock.h"
#include "drain_steps.h"
#include "pipeline.h"
#include "record.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Steps asked for (bits of `requests`). */
#define REQ_CUT 1u
#define REQ_REPORT 2u
#define REQ_FINAL 4u

/* `progress`: the steps made. Reports made for REQ_REPORT are counted in
 * the bits above PROGRESS_SHIFT. */
#define PROGRESS_CUT 1u
#define PROGRESS_FINAL 2u
#define PROGRESS_SHIFT 2

/* Askers fetch_or with release (after storing request_signal); the drain
 * thread exchanges with acquire. */
static _Atomic uint32_t requests;
static _Atomic int request_signal;
/* Report requests are numbered (fetch_add acq_rel); a report made covers
 * every number taken before it began. */
static _Atomic uint32_t report_tickets;
/* futex word: PROGRESS_* and the reports made; store release by the
 * thread making the steps, load acquire by waiters. */
static _Atomic uint32_t progress;
/* 1 from the cut's start (relaxed: GPU timing reads it to make no more
 * event pairs; a pair made just before is given up like any other). */
static _Atomic int cutting;
/* Without a drain thread: 1 while a program thread makes a step (CAS
 * acq_rel to claim, store release to let go). */
static _Atomic int end_busy;
static int cut_made; /* the thread making the steps only */

void gt_end_reset(void)
{
    atomic_store_explicit(&requests, 0, memory_order_relaxed);
    atomic_store_explicit(&request_signal, 0, memory_order_relaxed);
    atomic_store_explicit(&report_tickets, 0, memory_order_relaxed);
    atomic_store_explicit(&progress, 0, memory_order_relaxed);
    atomic_store_explicit(&cutting, 0, memory_order_relaxed);
    atomic_store_explicit(&end_busy, 0, memory_order_relaxed);
    cut_made = 0;
}

int gt_pipeline_cutting(void)
{
    return atomic_load_explicit(&cutting, memory_order_relaxed);
}

int gt_end_asked(void)
{
    return atomic_load_explicit(&requests, memory_order_relaxed) != 0;
}

uint32_t gt_end_take(int *sig)
{
    uint32_t req = atomic_exchange_explicit(&requests, 0, memory_order_acquire);
    if (req) *sig = atomic_load_explicit(&request_signal, memory_order_relaxed);
    return req;
}

/* ------------------------------------------------------ the steps */

static void set_progress(uint32_t bits, uint32_t reports)
{
    uint32_t p = atomic_load_explicit(&progress, memory_order_relaxed);
    uint32_t made = p >> PROGRESS_SHIFT;
    if (reports > made) made = reports;
    atomic_store_explicit(&progress,
                          (p & ((1u << PROGRESS_SHIFT) - 1)) | bits | made << PROGRESS_SHIFT,
                          memory_order_release);
    gt_futex(&progress, FUTEX_WAKE, INT_MAX, NULL);
}

static void end_cut(void)
{
    atomic_store_explicit(&cutting, 1, memory_order_relaxed);
    gt_drain_settle();
    gt_drain_cut();
    cut_made = 1;
    set_progress(PROGRESS_CUT, 0);
}

static void end_report(void)
{
    uint32_t serving = atomic_load_explicit(&report_tickets, memory_order_acquire);
    gt_drain_settle();
    gt_drain_report(0, 0);
    set_progress(0, serving);
}

static void end_final(int sig)
{
    gt_drain_last();
    gt_drain_report(1, sig);
    set_progress(PROGRESS_CUT | PROGRESS_FINAL, 0);
}

int gt_end_work(uint32_t req, int sig)
{
    struct gt_tls *t = &gt_tls;
    t->finishing = 1;
    if ((req & (REQ_CUT | REQ_FINAL)) && !cut_made) end_cut();
    if (req & REQ_FINAL)
        end_final(sig);
    else if (req & REQ_REPORT)
        end_report();
    t->finishing = 0;
    return (req & REQ_FINAL) != 0;
}

/* ------------------------------------------------------ asking, waiting */

static int satisfied(uint32_t req, uint32_t ticket)
{
    uint32_t p = atomic_load_explicit(&progress, memory_order_acquire);
    if (p & PROGRESS_FINAL) return 1;
    if (req & REQ_FINAL) return 0;
    if ((req & REQ_CUT) && !(p & PROGRESS_CUT)) return 0;
    return !(req & REQ_REPORT) || (p >> PROGRESS_SHIFT) >= ticket;
}

/* Async-signal-safe. With `run_here`, the caller makes the steps itself
 * when no other thread is at them (there is no drain thread). */
static int wait_for(uint32_t req, uint32_t ticket, unsigned wait_ms, int run_here, int sig)
{
    uint64_t deadline = gt_clock_mono_ns() + (uint64_t)wait_ms * 1000000u;
    for (;;) {
        uint32_t p = atomic_load_explicit(&progress, memory_order_acquire);
        if (satisfied(req, ticket)) return 0;
        int idle = 0;
        if (run_here && atomic_compare_exchange_strong_explicit(
                            &end_busy, &idle, 1, memory_order_acq_rel, memory_order_acquire)) {
            if (!satisfied(req, ticket)) gt_end_work(req, sig);
            atomic_store_explicit(&end_busy, 0, memory_order_release);
            gt_futex(&progress, FUTEX_WAKE, INT_MAX, NULL);
            continue;
        }
        uint64_t now = gt_clock_mono_ns();
        if (now >= deadline) return -1;
        /* Another thread makes the steps without a drain thread: its wake
         * when it lets go may come before this wait begins, so look again
         * within a millisecond. */
        uint64_t left = deadline - now;
        if (run_here && left > 1000000u) left = 1000000u;
        struct timespec timeout = gt_ns_timespec(left);
        gt_futex(&progress, FUTEX_WAIT, p, &timeout);
    }
}

static int request_end(uint32_t req, unsigned wait_ms)
{
    int saved = errno, rc = 0;
    uint32_t ticket = 0;
    if (req & REQ_REPORT)
        ticket = atomic_fetch_add_explicit(&report_tickets, 1, memory_order_acq_rel) + 1;
    if (satisfied(req, ticket)) {
        rc = 0;
    } else if (gt_tls.finishing) {
        rc = -1; /* the thread making the steps, called back: it cannot wait for itself */
    } else {
        /* A report with nothing ever recorded (no drain started) is empty:
         * not made, and a later start is not barred (the exec may fail). */
        int state = gt_drain_settled(req != REQ_REPORT);
        if (state == GT_DRAIN_RUNNING) {
            atomic_fetch_or_explicit(&requests, req, memory_order_release);
            gt_drain_wake();
            rc = wait_for(req, ticket, wait_ms, 0, 0);
        } else if (state != GT_DRAIN_NONE) {
            rc = wait_for(req, ticket, wait_ms, 1, 0);
        }
    }
    errno = saved;
    return rc;
}

int gt_pipeline_cut(unsigned wait_ms)
{
    return request_end(REQ_CUT, wait_ms);
}

int gt_pipeline_report(unsigned wait_ms)
{
    return request_end(REQ_REPORT, wait_ms);
}

int gt_pipeline_finish(unsigned wait_ms)
{
    return request_end(REQ_FINAL, wait_ms);
}

int gt_pipeline_finish_from_signal(int sig, unsigned wait_ms)
{
    int saved = errno, rc = -1;
    if (satisfied(REQ_FINAL, 0)) {
        rc = 0;
    } else if (!gt_tls.finishing && gt_drain_running()) {
        atomic_store_explicit(&request_signal, sig, memory_order_relaxed);
        atomic_fetch_or_explicit(&requests, REQ_FINAL, memory_order_release);
        gt_drain_wake();
        rc = wait_for(REQ_FINAL, 0, wait_ms, 0, sig);
    }
    /* No drain thread: nothing was recorded, there is nothing to report. */
    errno = saved;
    return rc;
}
