/* Which source gives the GPU times of kernels, copies and memsets (SPEC
 * §12, DESIGN §5), and what a hook does for each.
 *
 * The source is chosen once, at the process's first CUDA call (before the
 * call: init.c's gt_note_cuda_call_slow asks gt_gpu_source_choose), from
 * GPUTRACE_GPU_TIMING: CUPTI activity records where CUPTI can be used
 * (auto, cupti), else CUDA event pairs (gpu_time.h); off, none. It changes
 * once at most afterwards: CUPTI is handed over to the program when the
 * program starts a CUPTI session of its own (cupti_handover.c), and event
 * pairs time the work from then on (the run is then `mixed`).
 *
 * With CUPTI a hook adds no CUDA call of its own. CUPTI calls the shim's
 * callback (cupti_session.c) at the entry of each launch, copy and memset
 * it traces, on the calling thread, with the correlation id that the
 * work's activity record will carry; the outermost API call's id is kept
 * in gt_cupti_thread. The hook notes where the thread's count of outermost
 * calls stood before its real call (gt_cupti_mark) and, after it, takes
 * the id into the record (gt_cupti_attach) when CUPTI saw this call: the
 * count moved, or the hook runs inside a call CUPTI saw (a runtime call
 * whose driver call the hook wraps). The drain matches the id with the
 * activity record (cupti_resolve.c). */
#ifndef GT_GPU_SOURCE_H
#define GT_GPU_SOURCE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "event.h"
#include "settings.h"

enum gt_gpu_src { GT_SRC_OFF, GT_SRC_EVENTS, GT_SRC_CUPTI };

/* enum gt_gpu_src; written before the process's first CUDA call goes on,
 * and at a handover. Relaxed: a hook that reads the old value around a
 * handover times its call with that source, which still resolves. */
extern _Atomic int gt_gpu_src_now;

static inline int gt_gpu_src(void)
{
    return atomic_load_explicit(&gt_gpu_src_now, memory_order_relaxed);
}

/* Chooses the source (once; later calls return at once). Before any GPU
 * work, on the thread of the process's first CUDA call. */
void gt_gpu_source_choose(void);

/* The program starts using CUPTI itself: CUPTI's records so far are
 * flushed, the shim's kinds disabled and its subscriber gone; event pairs
 * time what comes after. `who` names the program's first CUPTI call. */
void gt_gpu_source_hand_over(const char *who);

/* For the report: the source that ran (mixed after a handover) and in
 * words which libcupti it used, why it was not CUPTI, or when it changed. */
enum gt_gpu_source gt_gpu_source_report(char *detail, size_t cap);

/* An older CUPTI ran out of activity buffers (cupti_buffers.c): its
 * session stops, and event pairs time what comes after. Drain thread. */
void gt_gpu_source_starved(void);

/* A forked child: CUPTI's session is the parent's (its threads and
 * buffers did not come along), so event pairs time the child's work. */
void gt_gpu_source_after_fork_child(void);

/* ------------------------------------------------------------ CUPTI */

/* A record whose GPU time waits for CUPTI's activity record: gpu_start
 * holds the correlation id, gpu_end this key (event pairs leave gpu_end 0). */
#define GT_GPU_CUPTI_KEY UINT64_MAX

/* The calling thread's outermost CUDA call that CUPTI traced: its
 * correlation id, how deep CUPTI's callbacks are now, and how many such
 * calls began (written by the callback, read by the hooks: one thread). */
typedef struct gt_cupti_thread {
    uint32_t corr;
    uint32_t depth;
    uint32_t calls;
} gt_cupti_thread;
extern __thread gt_cupti_thread gt_cupti_tls __attribute__((tls_model("initial-exec")));

/* Before the real call. */
static inline uint32_t gt_cupti_mark(void)
{
    return gt_cupti_tls.calls;
}

/* Calls whose correlation id could not be had (CUPTI did not trace them). */
extern _Atomic uint64_t gt_cupti_uncorrelated;

/* After the real call, into the record of GPU work that succeeded and was
 * not captured into a graph. */
static inline void gt_cupti_attach(gt_event *ev, uint32_t mark)
{
    const gt_cupti_thread *t = &gt_cupti_tls;
    if (GT_LIKELY(t->depth || t->calls != mark)) {
        ev->gpu_start = t->corr;
        ev->gpu_end = GT_GPU_CUPTI_KEY;
        ev->flags |= GT_EVF_GPU_PENDING;
        return;
    }
    atomic_fetch_add_explicit(&gt_cupti_uncorrelated, 1, memory_order_relaxed);
}

#endif
