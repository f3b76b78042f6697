/* A log-bucket histogram of nanosecond samples, for rows too long to keep
 * every sample. Values below 64 have a bucket each; above, every power of
 * two is split into 64 buckets, so a bucket spans at most 1/64 of its lower
 * bound. A quantile is reported as its bucket's midpoint: the relative
 * error is at most 1/128 (0.79%). Octaves are allocated when first used. */
#ifndef GT_HISTOGRAM_H
#define GT_HISTOGRAM_H

#include <stdint.h>

#define GT_HIST_SUB_BITS 6u
#define GT_HIST_SUB (1u << GT_HIST_SUB_BITS)
#define GT_HIST_OCTAVES (64u - GT_HIST_SUB_BITS + 1u)

typedef struct gt_histogram {
    uint64_t *octaves[GT_HIST_OCTAVES]; /* each GT_HIST_SUB counts, NULL until used */
    uint64_t count;
} gt_histogram;

/* Octave 0 holds the exact values 0..63; octave o >= 1 holds the values
 * whose highest set bit is o + 5, in 64 buckets by the next 6 bits. */
static inline unsigned gt_histogram_octave(uint64_t v, unsigned *sub)
{
    if (v < GT_HIST_SUB) {
        *sub = (unsigned)v;
        return 0;
    }
    unsigned top = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = top - GT_HIST_SUB_BITS;
    *sub = (unsigned)(v >> shift) & (GT_HIST_SUB - 1);
    return shift + 1;
}

/* Allocates the octave, then counts the sample. */
int gt_histogram_add_slow(gt_histogram *h, unsigned octave, unsigned sub);

/* 0, or -1 when an octave could not be allocated (the sample is not
 * counted). Inline: the drain adds a sample for most records. */
static inline int gt_histogram_add(gt_histogram *h, uint64_t v)
{
    unsigned sub;
    unsigned o = gt_histogram_octave(v, &sub);
    if (!h->octaves[o]) return gt_histogram_add_slow(h, o, sub);
    h->octaves[o][sub]++;
    h->count++;
    return 0;
}
void gt_histogram_free(gt_histogram *h);

/* The value of the sample of 0-based rank `rank` in sorted order, as its
 * bucket's midpoint. rank must be below h->count. */
uint64_t gt_histogram_value_at(const gt_histogram *h, uint64_t rank);

#endif
