#include "histogram.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Moves the kept samples into a histogram; on failure the row keeps its
 * first GT_STATS_EXACT_CAP samples and its median stays theirs. */
static void enter_histogram_regime(gt_stats *s)
{
    gt_histogram *h = calloc(1, sizeof(*h));
    if (!h) return;
    for (uint32_t i = 0; i < s->nsamples; i++) {
        if (gt_histogram_add(h, s->samples[i]) != 0) {
            gt_histogram_free(h);
            free(h);
            return;
        }
    }
    free(s->samples);
    s->samples = NULL;
    s->nsamples = s->capacity = 0;
    s->hist = h;
}

void gt_stats_keep_slow(gt_stats *s, uint64_t v)
{
    if (s->nsamples == s->capacity) {
        if (s->capacity >= GT_STATS_EXACT_CAP) {
            enter_histogram_regime(s);
            if (s->hist) gt_histogram_add(s->hist, v);
            return;
        }
        uint32_t cap = s->capacity ? s->capacity * 2 : 8;
        uint64_t *grown = realloc(s->samples, cap * sizeof(*grown));
        if (!grown) return;
        s->samples = grown;
        s->capacity = cap;
    }
    s->samples[s->nsamples++] = v;
}

void gt_stats_free(gt_stats *s)
{
    free(s->samples);
    if (s->hist) {
        gt_histogram_free(s->hist);
        free(s->hist);
    }
    memset(s, 0, sizeof(*s));
}

static uint64_t rounded_div(uint64_t num, uint64_t den)
{
    uint64_t q = num / den;
    uint64_t r = num % den;
    return q + (r >= den - r);
}

/* Rounds half up, without overflow, given a <= b. */
static uint64_t midpoint(uint64_t a, uint64_t b)
{
    return a + (b - a) / 2 + ((b - a) & 1);
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t median_of_samples(const gt_stats *s)
{
    uint64_t *sorted = malloc(s->nsamples * sizeof(*sorted));
    if (!sorted) return rounded_div(s->total, s->count);
    memcpy(sorted, s->samples, s->nsamples * sizeof(*sorted));
    qsort(sorted, s->nsamples, sizeof(*sorted), compare_u64);
    uint32_t n = s->nsamples;
    uint64_t med = n % 2 ? sorted[n / 2] : midpoint(sorted[n / 2 - 1], sorted[n / 2]);
    free(sorted);
    return med;
}

/* (sum of squared deviations - n * mean deviation^2) / (n - 1), with the
 * deviations taken from the first sample; long double keeps the
 * cancellation harmless when the first sample is far from the mean. */
static long double sample_variance(const gt_stats *s)
{
    long double n = (long double)s->count;
    long double sum_dev = (long double)s->total - n * (long double)s->first;
    long double var = ((long double)s->sq_dev - sum_dev * sum_dev / n) / (n - 1);
    return var > 0 ? var : 0;
}

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static uint64_t median_of_histogram(const gt_stats *s)
{
    uint64_t n = s->hist->count;
    uint64_t lo = gt_histogram_value_at(s->hist, (n - 1) / 2);
    uint64_t hi = gt_histogram_value_at(s->hist, n / 2);
    return clamp(midpoint(lo, hi), s->min, s->max);
}

void gt_stats_summarize(const gt_stats *s, gt_stats_summary *out)
{
    if (s->preset) {
        *out = *s->preset;
        return;
    }
    memset(out, 0, sizeof(*out));
    if (s->count == 0) return;
    out->count = s->count;
    out->total = s->total;
    out->avg = rounded_div(s->total, s->count);
    out->min = s->min;
    out->max = s->max;
    out->first = s->first;
    if (s->count > 1) {
        out->rest_avg = rounded_div(s->total - s->first, s->count - 1);
        out->stddev = (uint64_t)llroundl(sqrtl(sample_variance(s)));
    }
    if (s->hist && s->hist->count)
        out->med = median_of_histogram(s);
    else if (s->nsamples)
        out->med = median_of_samples(s);
    else
        out->med = out->avg;
}

void gt_stats_summary_from_moments(uint64_t count, uint64_t total, uint64_t min, uint64_t max,
                                   uint64_t first, long double m2, uint64_t med,
                                   gt_stats_summary *out)
{
    memset(out, 0, sizeof(*out));
    if (count == 0) return;
    out->count = count;
    out->total = total;
    out->avg = rounded_div(total, count);
    out->min = min;
    out->max = max;
    out->first = first;
    out->med = clamp(med, min, max);
    if (count > 1) {
        out->rest_avg = total >= first ? rounded_div(total - first, count - 1) : 0;
        long double var = m2 > 0 ? m2 / (long double)(count - 1) : 0;
        out->stddev = (uint64_t)llroundl(sqrtl(var));
    }
}
