/* Host timestamps. The hot path stores raw ticks (rdtsc where the TSC is
 * invariant, else CLOCK_MONOTONIC ns); the drain converts them to
 * CLOCK_MONOTONIC ns with a piecewise calibration it refines as it runs. */
#ifndef GT_CLOCK_H
#define GT_CLOCK_H

#include <stdint.h>

#include "compiler.h"

extern int gt_clock_tsc; /* 1: ticks are TSC cycles; 0: ticks are ns. Set at load. */

uint64_t gt_clock_mono_ns(void);

static inline uint64_t gt_rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return 0; /* never called: gt_clock_tsc stays 0 */
#endif
}

static inline uint64_t gt_clock_ticks(void)
{
    if (GT_LIKELY(gt_clock_tsc)) return gt_rdtsc();
    return gt_clock_mono_ns();
}

/* At load: picks the source (force_source: -1 auto, 0 clock_gettime, 1 TSC
 * when available) and anchors the calibration at the current time. */
void gt_clock_init(int force_source);

/* Converting thread only (the drain, or the thread finishing the pipeline
 * when there is no drain thread): adds a calibration sample, then
 * converts ticks read at or before that moment. */
void gt_clock_refine(void);

/* The calibration segment the last conversion used: ticks in [tsc0, tsc1)
 * convert as ns0 + ((ticks - tsc0) * mult >> 32). Converting thread only. */
typedef struct gt_clock_segment {
    uint64_t tsc0, tsc1, ns0, mult;
} gt_clock_segment;
extern gt_clock_segment gt_clock_seg;
uint64_t gt_clock_to_ns_slow(uint64_t ticks);

/* Inline: the drain converts two timestamps per record, and almost every
 * tick falls in the segment used last. */
static inline uint64_t gt_clock_to_ns(uint64_t ticks)
{
    const gt_clock_segment *s = &gt_clock_seg;
    if (GT_LIKELY(ticks - s->tsc0 < s->tsc1 - s->tsc0))
        return s->ns0 + (uint64_t)(((unsigned __int128)(ticks - s->tsc0) * s->mult) >> 32);
    return gt_clock_to_ns_slow(ticks);
}

#endif
