/* Host timestamps: cheap raw ticks on the hot path, CLOCK_MONOTONIC ns in
 * the report.
 *
 * Where the TSC is invariant (constant rate, runs in every C-state:
 * CPUID 0x80000007 EDX bit 8) the hot path reads it with rdtsc; elsewhere
 * it calls clock_gettime and ticks are already ns. TSC ticks are converted
 * on the draining thread by interpolating between calibration points,
 * pairs (tsc, CLOCK_MONOTONIC ns) sampled at load and then at every drain
 * pass. A point is kept every GT_CLOCK_SPACING_NS in a ring, and the newest
 * sample is the last point, so a tick read before the latest sample is
 * always between two points: the conversion follows CLOCK_MONOTONIC
 * (NTP slewing included) to within the sampling error (tens of ns) over any
 * run length. Ticks older than the ring are extrapolated with the average
 * rate over the ring. */

#include "clock.h"

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define GT_CLOCK_RING 128
#define GT_CLOCK_SPACING_NS 100000000ull /* 100 ms: the ring covers 12.8 s */
#define GT_CLOCK_SAMPLE_TRIES 4

int gt_clock_tsc;

typedef struct point {
    uint64_t tsc;
    uint64_t ns;
} point;

/* Converting-thread state (see clock.h: one converting thread at a time). */
static point ring[GT_CLOCK_RING];
static unsigned ring_start, ring_n;
static point newest; /* the latest sample: the last point when newer than the ring's */

/* The segment used last: most ticks fall in the newest one. Empty
 * (tsc1 == tsc0) when it must be looked up again; with clock_gettime
 * ticks it is the identity over every tick, so the inline conversion
 * needs no test of the source. */
gt_clock_segment gt_clock_seg;

static void forget_segment(void)
{
    gt_clock_seg.tsc1 = gt_clock_seg.tsc0;
}

GT_NO_STACK_PROTECTOR uint64_t gt_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1u;
#else
    return 0;
#endif
}

/* The tightest of a few (tsc, ns) brackets: the ns reading is paired with
 * the middle of the two rdtsc around it, so preemption in between only
 * costs a retry. */
static point sample(void)
{
    point best = {0, 0};
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < GT_CLOCK_SAMPLE_TRIES; i++) {
        uint64_t a = gt_rdtsc();
        uint64_t ns = gt_clock_mono_ns();
        uint64_t b = gt_rdtsc();
        if (b >= a && b - a < best_width) {
            best_width = b - a;
            best = (point){a + (b - a) / 2, ns};
        }
    }
    return best;
}

void gt_clock_init(int force_source)
{
    gt_clock_tsc = force_source < 0 ? tsc_invariant() : force_source && tsc_invariant();
    if (!gt_clock_tsc) {
        gt_clock_seg = (gt_clock_segment){0, UINT64_MAX, 0, 1ull << 32};
        return;
    }
    ring[0] = newest = sample();
    ring_start = 0;
    ring_n = 1;
    forget_segment();
}

static point ring_at(unsigned i)
{
    return ring[(ring_start + i) % GT_CLOCK_RING];
}

void gt_clock_refine(void)
{
    if (!gt_clock_tsc) return;
    point p = sample();
    if (p.tsc <= newest.tsc || p.ns < newest.ns) return;
    newest = p;
    forget_segment();
    if (p.ns - ring_at(ring_n - 1).ns < GT_CLOCK_SPACING_NS) return;
    if (ring_n < GT_CLOCK_RING)
        ring_n++;
    else
        ring_start = (ring_start + 1) % GT_CLOCK_RING;
    ring[(ring_start + ring_n - 1) % GT_CLOCK_RING] = p;
}

static unsigned n_points(void)
{
    return ring_n + (newest.tsc > ring_at(ring_n - 1).tsc);
}

static point point_at(unsigned i)
{
    return i < ring_n ? ring_at(i) : newest;
}

/* ns per tick between two points, as a 32.32 fixed-point factor. */
static uint64_t rate(point a, point b)
{
    return (uint64_t)(((unsigned __int128)(b.ns - a.ns) << 32) / (b.tsc - a.tsc));
}

static uint64_t scale(uint64_t ticks, uint64_t mult)
{
    return (uint64_t)(((unsigned __int128)ticks * mult) >> 32);
}

static uint64_t cache_segment(point from, uint64_t until_tsc, uint64_t mult, uint64_t t)
{
    gt_clock_seg = (gt_clock_segment){from.tsc, until_tsc, from.ns, mult};
    return from.ns + scale(t - from.tsc, mult);
}

uint64_t gt_clock_to_ns_slow(uint64_t t)
{
    if (!gt_clock_tsc) return t;
    if (n_points() < 2) gt_clock_refine(); /* a rate needs two points */
    unsigned n = n_points();
    point first = point_at(0), last = point_at(n - 1);
    if (n < 2) return first.ns;
    if (t < first.tsc) {
        /* Older than the ring: back from its first point at its average
         * rate (rare: not cached). */
        uint64_t back = scale(first.tsc - t, rate(first, last));
        return back < first.ns ? first.ns - back : 0;
    }
    if (t >= last.tsc) /* newer than the latest sample: on at the ring's rate */
        return cache_segment(last, UINT64_MAX, rate(first, last), t);
    unsigned lo = 0, hi = n - 1; /* point_at(lo).tsc <= t < point_at(hi).tsc */
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (point_at(mid).tsc <= t)
            lo = mid;
        else
            hi = mid;
    }
    point a = point_at(lo), b = point_at(hi);
    return cache_segment(a, b.tsc, rate(a, b), t);
}
