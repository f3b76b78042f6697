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

/* Hands the pair to the record: sets GT_EVF_GPU_PENDING and keeps the pair
 * in ev->gpu_start until the drain resolves it. ev NULL (the record was
 * dropped) or p NULL are fine. */
void gt_gpu_attach(gt_event *ev, gt_gpu_pair *p);

/* Before a context is destroyed or reset (cuCtxDestroy,
 * cuDevicePrimaryCtxRelease when it drops the last reference,
 * cuDevicePrimaryCtxReset, cudaDeviceReset): resolves every pending pair of
 * that context now, waiting for its GPU work, and frees the context's
 * events. NULL means the calling thread's current context. */
void gt_gpu_retire_context(CUcontext ctx);

/* Called by hooks on the first GPU work a process enqueues: registers the
 * shim's exit handler after the CUDA runtime's, so that it runs first and
 * pending pairs are read while contexts still exist. Cheap after the first
 * call. */
void gt_gpu_note_work(void);

#endif
