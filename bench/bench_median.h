/* The median the benchmarks report: robust to a run disturbed by other
 * work on the machine. */
#ifndef GT_BENCH_MEDIAN_H
#define GT_BENCH_MEDIAN_H

#include <stdlib.h>

static inline int bench_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) in place. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
