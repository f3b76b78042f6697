#include "histogram.h"

#include <stdlib.h>

/* Octave 0 holds the exact values 0..63; octave o >= 1 holds the values
 * whose highest set bit is o + 5, in 64 buckets by the next 6 bits. */
static unsigned octave_of(uint64_t v, unsigned *sub)
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

static uint64_t bucket_midpoint(unsigned octave, unsigned sub)
{
    if (octave == 0) return sub;
    unsigned shift = octave - 1;
    uint64_t lo = (uint64_t)(GT_HIST_SUB + sub) << shift;
    return lo + (((uint64_t)1 << shift) >> 1);
}

int gt_histogram_add(gt_histogram *h, uint64_t v)
{
    unsigned sub;
    unsigned o = octave_of(v, &sub);
    if (!h->octaves[o]) {
        h->octaves[o] = calloc(GT_HIST_SUB, sizeof(uint64_t));
        if (!h->octaves[o]) return -1;
    }
    h->octaves[o][sub]++;
    h->count++;
    return 0;
}

void gt_histogram_free(gt_histogram *h)
{
    for (unsigned o = 0; o < GT_HIST_OCTAVES; o++) {
        free(h->octaves[o]);
        h->octaves[o] = NULL;
    }
    h->count = 0;
}

uint64_t gt_histogram_value_at(const gt_histogram *h, uint64_t rank)
{
    uint64_t seen = 0;
    for (unsigned o = 0; o < GT_HIST_OCTAVES; o++) {
        if (!h->octaves[o]) continue;
        for (unsigned s = 0; s < GT_HIST_SUB; s++) {
            seen += h->octaves[o][s];
            if (seen > rank) return bucket_midpoint(o, s);
        }
    }
    return 0;
}
