/* GPU time of kernels, copies and memsets from CUDA event pairs (DESIGN §5).
 *
 * A hook that enqueues GPU work on a stream brackets the real call:
 *
 *     gt_gpu_pair *p = gt_gpu_begin(stream, per_thread);   // start event recorded
 *     CUresult r = real_fn(...);
 *     gt_gpu_end(p, r == CUDA_SUCCESS);                    // stop event recorded
 *     gt_event *ev = gt_ev_begin();
 *     gt_gpu_attach(ev, p);        // ev may be NULL: the pair is then let go
 *
 * The drain thread later turns the pair into absolute GPU start/end times in
 * CLOCK_MONOTONIC ns (the resolver registered with gt_set_gpu_resolver).
 * Everything here calls the real driver entry points, never the shim's
 * wrappers, and keeps errno.
 */
#ifndef GT_SHIM_GPU_TIME_H
#define GT_SHIM_GPU_TIME_H

#include <cuda.h>
#include <stdint.h>

#include "event.h"

typedef struct gt_gpu_pair gt_gpu_pair;

/* Records the start event on `stream` as the program named it: with
 * per_thread set (a _ptsz/_ptds entry point), a NULL stream is the calling
 * thread's per-thread default stream, else the legacy default stream.
 * Returns NULL, and records nothing, when GPU timing is off, the stream is
 * being captured into a graph (or its capture state cannot be read), there
 * is no context, or no event can be had. */
gt_gpu_pair *gt_gpu_begin(CUstream stream, int per_thread);

/* Records the stop event after the work was enqueued. work_ok = 0 (the real
 * call failed) lets the pair go without a time. p may be NULL. */
void gt_gpu_end(gt_gpu_pair *p, int work_ok);

/* Hands the pair to the record: sets GT_EVF_GPU_PENDING, keeps the pair
 * in ev->gpu_start until the drain resolves it, and sets ev->device to the
 * device of the pair's context. ev NULL (the record was
 * dropped) or p NULL are fine. */
void gt_gpu_attach(gt_event *ev, gt_gpu_pair *p);

/* Before a context is destroyed or reset (cuCtxDestroy,
 * cuDevicePrimaryCtxRelease when it drops the last reference,
 * cuDevicePrimaryCtxReset, cudaDeviceReset): resolves every pending pair of
 * that context now, waiting for its GPU work, and frees the context's
 * events. NULL means the calling thread's current context. */
void gt_gpu_retire_context(CUcontext ctx);

/* Whether `stream` (as gt_gpu_begin takes it) is being captured into a
 * graph, asked with whatever capture query the driver has; 0 when it
 * cannot say. */
int gt_gpu_stream_capturing(CUstream stream, int per_thread);

/* Called by hooks on the first GPU work a process enqueues: registers the
 * shim's exit handler after the CUDA runtime's, so that it runs first and
 * pending pairs are read while contexts still exist. Cheap after the first
 * call. */
void gt_gpu_note_work(void);

/* A pair from gt_gpu_begin must go through gt_gpu_end and then
 * gt_gpu_attach, once each: attach is where an unused pair goes back. */

/* Figures about GPU timing: debug output, tests and benchmarks. */
typedef struct gt_gpu_stats {
    uint64_t skipped_capture;  /* begins refused: capturing stream, or capture state unreadable */
    uint64_t skipped_cap;      /* begins refused: the cap on live pairs was reached */
    uint64_t skipped_other;    /* begins refused: no context, set-up or event record failed */
    uint64_t resolved_timed;   /* pairs resolved with a GPU time */
    uint64_t resolved_untimed; /* resolved without (work or driver failed, given up at exit) */
    uint64_t stored_by_retire; /* pairs read early because their context was retired */
    uint64_t harvested;        /* pairs read early by their thread, the drain being behind */
    uint64_t events_created;   /* successful cuEventCreate calls: two per pair, and epochs */
    uint64_t epoch_records;    /* epoch events recorded (besides two per timed operation) */
    uint64_t pools_created;    /* contexts that got events */
    uint64_t contexts_retired;
    uint64_t live_pairs; /* pairs with events now */
    uint64_t peak_live_pairs;
    uint64_t max_epoch_offset_ns; /* farthest a resolved pair was from the epoch placing it */
    uint64_t max_epoch_window_ns; /* largest uncertainty of an epoch's host time */
} gt_gpu_stats;

void gt_gpu_stats_get(gt_gpu_stats *s);

/* The most pairs with events at once (default 65536, also for 0): beyond
 * it GPU work gets no GPU time until pairs resolve. */
void gt_gpu_set_pair_cap(uint32_t cap);

/* The forked child's reset, registered with gt_atfork_child_add at load:
 * forgets every pool and pair without calling the driver. */
void gt_gpu_after_fork_child(void);

#endif
