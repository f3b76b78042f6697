/* Statistics of one table row's samples (SPEC §5), integers in ns.
 *
 * count, total, min, max, first and the mean are exact. The standard
 * deviation is the sample standard deviation (divisor n - 1; 0 for one
 * sample), from exact integer sums of the deviations from the first
 * sample (the shifted-data method): no division per sample, which on the
 * drain thread cost more than the rest of a record's aggregation, and no
 * loss of digits when values are large and their spread small. The median is exact while
 * the row holds at most GT_STATS_EXACT_CAP samples; past that the samples
 * move into a log-bucket histogram (histogram.h) and the median carries a
 * relative error of at most 1/128. Memory per row: the samples kept (an
 * array grown by doubling up to the cap), then only the histogram's used
 * octaves.
 *
 * A report read back from a file has no samples, only the summary it
 * wrote: such a row's stats hold count, total, min, max and first, and
 * `preset` points at the summary as read, which gt_stats_summarize then
 * returns whole (the median and standard deviation cannot be recomputed). */
#ifndef GT_STATS_H
#define GT_STATS_H

#include <stdint.h>

#include "histogram.h"

#define GT_STATS_EXACT_CAP 4096u

struct gt_stats_summary;

typedef struct gt_stats {
    uint64_t count;
    uint64_t total;
    uint64_t min;
    uint64_t max;
    uint64_t first;
    /* Sum of (v - first)^2: exact while every |v - first| is below 2^44 ns
     * (about 4.9 hours) and there are fewer than 2^40 samples. */
    unsigned __int128 sq_dev;
    uint64_t *samples; /* exact regime: every sample, in arrival order */
    uint32_t nsamples;
    uint32_t capacity;
    gt_histogram *hist; /* histogram regime: set once the cap is passed */
    const struct gt_stats_summary *preset; /* read back: the summary; owned elsewhere */
} gt_stats;

/* The SPEC §6 STATS object; avg, med, stddev and rest_avg rounded to the
 * nearest ns. rest_avg is the mean of the samples after the first, 0 when
 * there is only one. Every field is 0 for a row with no samples. */
typedef struct gt_stats_summary {
    uint64_t count;
    uint64_t total;
    uint64_t avg;
    uint64_t med;
    uint64_t min;
    uint64_t max;
    uint64_t stddev;
    uint64_t first;
    uint64_t rest_avg;
} gt_stats_summary;

/* Keeps v among the exact samples; past the cap, moves them into a histogram. */
void gt_stats_keep_slow(gt_stats *s, uint64_t v);

/* A zeroed gt_stats is an empty one. Inline: the drain adds one sample
 * for most records. */
static inline void gt_stats_add(gt_stats *s, uint64_t v)
{
    if (s->count == 0) {
        s->first = s->min = s->max = v;
    } else {
        if (v < s->min) s->min = v;
        if (v > s->max) s->max = v;
    }
    s->count++;
    s->total += v;
    uint64_t dev = v >= s->first ? v - s->first : s->first - v;
    s->sq_dev += (unsigned __int128)dev * dev;
    if (s->hist)
        gt_histogram_add(s->hist, v);
    else
        gt_stats_keep_slow(s, v);
}
void gt_stats_free(gt_stats *s);
void gt_stats_summarize(const gt_stats *s, gt_stats_summary *out);

/* The summary of samples known only through their moments: count,
 * total, min, max, first, m2 (the sum of squared deviations from the
 * mean) and a median found elsewhere; rounded as gt_stats_summarize
 * rounds. For statistics combined from several summaries. */
void gt_stats_summary_from_moments(uint64_t count, uint64_t total, uint64_t min, uint64_t max,
                                   uint64_t first, long double m2, uint64_t med,
                                   gt_stats_summary *out);

#endif
