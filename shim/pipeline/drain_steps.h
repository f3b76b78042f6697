/* What drain.c and end.c share: end.c says when each end step is made and
 * makes it with the drain's means, on the drain thread (or, without one,
 * on the thread that asked). Nothing outside shim/pipeline/ includes it. */
#ifndef GT_DRAIN_STEPS_H
#define GT_DRAIN_STEPS_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

enum gt_drain_state {
    GT_DRAIN_NONE,     /* not started: starts at first use */
    GT_DRAIN_STARTING, /* pthread_create in progress */
    GT_DRAIN_RUNNING,
    GT_DRAIN_FAILED, /* could not start: records wait until the end */
    GT_DRAIN_BARRED  /* an end step was made without one: never starts */
};

/* The drain thread's state once settled (enum gt_drain_state); with
 * `bar`, a drain not started never will be. */
int gt_drain_settled(int bar);
int gt_drain_running(void); /* async-signal-safe */

/* The draining thread's side of the steps. Settle: every record so far
 * taken (live chunks stolen) and consumed, pending GPU times awaited at
 * most final_wait_ms from now, then given up. Cut: what is consumed from
 * now on is late; params.cut. Last: recording closed, every record
 * consumed. Report: params.finished with the totals so far. */
void gt_drain_settle(void);
void gt_drain_cut(void);
void gt_drain_last(void);
void gt_drain_report(int final, int sig);

/* For the drain thread: whether a step is asked for (relaxed: a pass
 * working through a backlog gives way), the steps asked for since the
 * last take (and the signal of a final one), and making them (1 once the
 * final report is made). */
int gt_end_asked(void);
uint32_t gt_end_take(int *sig);
int gt_end_work(uint32_t steps, int sig);
void gt_end_reset(void); /* with the pipeline's start */

/* futex(2) on a private word; and ns as a timespec. */
long gt_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout);
static inline struct timespec gt_ns_timespec(uint64_t ns)
{
    return (struct timespec){(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
}

#endif
