/* Capture control (GPUTRACE_CAPTURE, GPUTRACE_DELAY, GPUTRACE_DURATION):
 * when the shim records.
 *
 * Recording is on while the capture mode's condition holds and the time
 * since load is in [delay, delay + duration):
 *   all           always;
 *   profiler-api  from a cuProfilerStart or cudaProfilerStart to the next
 *                 stop (profiler calls do not nest: one stop ends it);
 *   nvtx:NAME     while a range of that name (in the default domain, in
 *                 DOMAIN for NAME@DOMAIN, in any for NAME@*) is open on
 *                 any thread.
 * Each stretch of time with recording on is a window.
 *
 * The hooks test one byte, gt_capture_gate, with their mode (hook.h):
 * outside a window a call passes straight through, exactly as when its
 * category is off. Calls that keep the shim's own bookkeeping (allocations
 * and frees, kernel names, compiler programs) go on outside windows, and
 * their records, flagged GT_EVF_UNCAPTURED, count only towards memory in
 * use (the report's `current` is then right inside a window whatever was
 * allocated before it).
 *
 * Changes are rare (a profiler call, a matching range, a time edge) and
 * made under a mutex, which also orders the window accounting; the gate is
 * stored inside it and read without it. Time edges are applied by
 * gt_capture_poll: the drain thread calls it (init.c gives it as the
 * pipeline's next_edge) and sleeps no longer than the
 * next edge, the first CUDA call and the NVTX injection call it too, so
 * recording starts at the first call after the delay even before the
 * drain thread exists. */
#ifndef GT_CAPTURE_WINDOW_H
#define GT_CAPTURE_WINDOW_H

#include <stdatomic.h>
#include <stdint.h>

#include "report.h"

struct gt_config;

/* 0xff inside a window (every hook mode passes), 0 outside. Relaxed: a
 * thread sees a window open or close at its next call; nothing else is
 * ordered by it. */
extern _Atomic uint8_t gt_capture_gate;

static inline unsigned gt_capture_mask(void)
{
    return atomic_load_explicit(&gt_capture_gate, memory_order_relaxed);
}

static inline int gt_capture_open(void)
{
    return gt_capture_mask() != 0;
}

/* At load and in a forked child (whose own start is its load):
 * recording as the configuration says, counted from start_ns. */
void gt_capture_start(const struct gt_config *cfg, uint64_t start_ns);

/* cuProfilerStart / cudaProfilerStart (on = 1), and their stops. Only in
 * profiler-api mode does it change anything. */
void gt_capture_profiler(int on);

/* A range that the nvtx mode waits for opened (+1) or closed (-1). */
void gt_capture_nvtx(int change);

/* Applies the time edges reached by now_ns; returns the ns until the next
 * one, UINT64_MAX when none is left. Lock-free until an edge is due. */
uint64_t gt_capture_poll(uint64_t now_ns);

/* What was captured up to end_ns, for the report. */
void gt_capture_get(gt_capture_info *out, uint64_t end_ns);

/* The times (CLOCK_MONOTONIC ns) at which windows opened since *seen
 * (a count, updated), at most max of them, the latest ones: the report
 * places the memory in use there. Returns how many were written. */
uint32_t gt_capture_opens_since(uint64_t *seen, uint64_t *out, uint32_t max);

/* Windows opened so far: a cheap test before gt_capture_opens_since. */
uint64_t gt_capture_open_count(void);

#endif
