#include "histogram.h"

#include <stdlib.h>

static uint64_t bucket_midpoint(unsigned octave, unsigned sub)
{
    if (octave == 0) return sub;
    unsigned shift = octave - 1;
    uint64_t lo = (uint64_t)(GT_HIST_SUB + sub) << shift;
    return lo + (((uint64_t)1 << shift) >> 1);
}

int gt_histogram_add_slow(gt_histogram *h, unsigned octave, unsigned sub)
{
    h->octaves[octave] = calloc(GT_HIST_SUB, sizeof(uint64_t));
    if (!h->octaves[octave]) return -1;
    h->octaves[octave][sub]++;
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
