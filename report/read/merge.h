/* Merging reports of many processes (MPI ranks, fork children, repeated
 * runs) into one report, which the writers take like any other and whose
 * JSON reads back like any other (so merges merge again).
 *
 * Rows are matched by their key (aggregate.h) and summed. Exact: calls,
 * bytes, every total, the number of timed calls, min, max, the mean, and
 * from them avg and rest_avg; first is the first input's (in the order
 * given) that has the row. The standard deviation is combined from each
 * input's mean (exact: total / count) and standard deviation (written
 * rounded to 1 ns), so it is within about 1 ns of the deviation of all the
 * samples. The median cannot be combined: it is the median of the
 * inputs' medians weighted by their counts, which lies between the
 * smallest and the largest of them (exact when one input has the row or
 * all inputs agree).
 *
 * Each row also gets its spread across the inputs: min, median and max
 * of each input's total (0 for an input without the row), the input with
 * the largest, and how many inputs have it. Memory devices are summed by
 * device number (peaks are each process's own: their sum is an upper
 * bound of a simultaneous peak), with the largest leaks of all inputs.
 * Advice: per rule, the counts summed and the message of the input with
 * the most, saying in how many inputs it fired. The header: wall time is
 * the longest input's, GPU busy time, events and dropped events the sums.
 * NVTX rows keep the nesting of the first input that has them. Checksums
 * are not summed: each input's copies are kept under a rank of their own. */
#ifndef GT_MERGE_H
#define GT_MERGE_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"
#include "strtab.h"

/* Merges n reports read back from files (load.h), all with their names
 * in `names`, which must outlive the result; files[i] names input i in
 * the header. NULL when out of memory (err says so). */
gt_report *gt_report_merge(gt_report *const *in, const char *const *files, size_t n,
                           const gt_strtab *names, char *err, size_t errcap);

/* merge_checksums.c: the inputs' checksum lists into out's, each input's
 * copies under its own rank (the first input's 0, then on). Fails, with
 * err set, when out of memory or when inputs hashed in different modes. */
bool gt_merge_checksums(gt_report *out, gt_report *const *in, size_t n, char *err, size_t errcap);

#endif
