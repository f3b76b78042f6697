/* CUPTI's clock on the shim's (cupti_internal.h). A sample reads
 * CLOCK_MONOTONIC, then cuptiGetTimestamp, then CLOCK_MONOTONIC again: the
 * CUPTI time is placed at the middle of that window, and the best of a few
 * tries (the narrowest window) is kept. Both clocks run at one rate, so
 * one offset maps every time until the next sample; samples are renewed
 * every GT_CUPTI_CLOCK_RESAMPLE_NS, which follows a step of the wall
 * clock (CUPTI's default clock is CLOCK_REALTIME based) within that.
 *
 * A renewed sample replaces the offset only when its window excludes the
 * one in use (a step, or a first sample that was wider than it looked):
 * records are mapped in the order threads drain, not the order a stream
 * ran them, so each needless change of a few ns would make back-to-back
 * work on a stream overlap, or open a gap, where the offset moved. */
#include "cupti_internal.h"

#include <stdatomic.h>

#include "clock.h"

#define TRIES 3

/* CLOCK_MONOTONIC minus CUPTI's clock, ns, as a two's complement value.
 * Relaxed: each is a whole value, and only the drain reads them after the
 * session's start has written the first. */
static _Atomic uint64_t offset;
static _Atomic uint64_t window;
static uint64_t last_sample; /* the sampling thread's */
static int have_offset;      /* the sampling thread's */

void gt_cupti_clock_sample(int now)
{
    uint64_t t = gt_clock_mono_ns();
    if (!now && t - last_sample < GT_CUPTI_CLOCK_RESAMPLE_NS) return;
    uint64_t best_window = UINT64_MAX, best_offset = 0;
    for (int i = 0; i < TRIES; i++) {
        uint64_t cupti = 0;
        uint64_t before = gt_clock_mono_ns();
        if (gt_cupti.get_timestamp(&cupti) != CUPTI_SUCCESS || !cupti) return;
        uint64_t after = gt_clock_mono_ns();
        if (after - before < best_window) {
            best_window = after - before;
            best_offset = before + best_window / 2 - cupti;
        }
    }
    last_sample = gt_clock_mono_ns();
    if (have_offset) {
        /* Two's complement distance from the new sample's middle. */
        uint64_t from_middle = atomic_load_explicit(&offset, memory_order_relaxed) - best_offset;
        if ((int64_t)from_middle < 0) from_middle = -from_middle;
        if (from_middle <= best_window / 2) return;
    }
    have_offset = 1;
    atomic_store_explicit(&offset, best_offset, memory_order_relaxed);
    atomic_store_explicit(&window, best_window, memory_order_relaxed);
}

uint64_t gt_cupti_clock_to_mono(uint64_t cupti_ns)
{
    if (!cupti_ns) return 0;
    return cupti_ns + atomic_load_explicit(&offset, memory_order_relaxed);
}

uint64_t gt_cupti_clock_window(void)
{
    return atomic_load_explicit(&window, memory_order_relaxed);
}
