/* What the pipeline tests share: a producer that writes checkable records
 * and a consumer that checks them (each thread's seq contiguous from 0,
 * payload intact). Threads are numbered in the order their first record
 * reaches the consumer. */
#ifndef GT_PIPELINE_CHECK_H
#define GT_PIPELINE_CHECK_H

#include <stdatomic.h>
#include <stdint.h>

#include "event.h"
#include "pipeline.h"

void check_reset(void);
void check_consume(gt_event *ev, void *ctx);
/* Gives the calling thread's open slot back, as a hook that decides not to
 * record after gt_ev_begin would: it is not recorded and its seq is
 * reused. */
void check_ev_cancel(void);
/* The pipeline's consumer (gt_pipeline_params.consume): a run that is not
 * consecutive records of one thread counts as bad for check_assert_thread;
 * then each record is checked as check_consume. */
void check_consume_run(gt_event *ev, uint32_t n, void *ctx);
void check_run_shape(const gt_event *ev, uint32_t n);
uint64_t check_runs(void); /* runs seen since check_reset */

void check_finished(const gt_pipeline_totals *t, void *ctx);

/* A fake GPU for records pending their GPU time: handle h (in gpu_start)
 * completes once h <= check_gpu_completed; resolved records get GPU times
 * 1000 h .. 1000 h + 500. check_gpu_give_ups counts what was given up
 * before the cut, check_gpu_cut_asks what was given up from the cut on
 * (GT_GPU_GIVE_UP_CUT: nothing to give back). */
extern _Atomic uint64_t check_gpu_completed;
extern int check_gpu_give_ups;
extern int check_gpu_cut_asks;
extern const gt_gpu_resolver check_gpu_resolver;
void check_gpu_reset(void);
/* Records one checkable record pending the GPU work of `handle`. */
void check_record_pending(uint64_t handle);

void check_fill(gt_event *ev);
/* Records n checkable records on the calling thread; returns how many
 * were stored. throttle: wait while a quarter of the cap is pending. */
uint64_t check_record_n(uint64_t n, int throttle);

int check_finished_calls(void); /* reports but snapshots */
int check_snapshots(void);
int check_snapshots_wrong(void); /* snapshots whose count was not what had been consumed */
const gt_pipeline_totals *check_totals(void);
uint64_t check_consumed(void);
int check_threads_seen(void);
uint64_t check_thread_count(int i);
const gt_event *check_thread_last(int i);

/* Thread i delivered exactly seq 0..n-1, in order, intact. */
void check_assert_thread(int i, uint64_t n);
void check_assert_thread_count_in(int i, uint64_t lo, uint64_t hi);
void check_assert_thread_in_order(int i);

#endif
