/* The terminal summary's sections (SPEC §5), shared between summary.c (the
 * layout: header, memory, advice, diagnostics) and summary_tables.c (the
 * statistics tables). */
#ifndef GT_SUMMARY_H
#define GT_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "aggregate.h"
#include "event.h"
#include "report.h"
#include "settings.h"
#include "table.h"

#define GT_SUMMARY_TOP_ROWS 10u /* rows per table at default verbosity */

typedef struct gt_summary {
    const gt_report *r;
    const gt_process_info *p;
    enum gt_verbosity v;
    FILE *out;
    int rc;         /* -1 once a table could not be written whole */
    unsigned width; /* columns lines fit at default verbosity */
} gt_summary;

/* The table of a row category (every category but memory). */
void gt_summary_table(gt_summary *s, enum gt_category c);

/* summary_numbers.c: whether any NVTX row has payload numbers, and a
 * row's rates in words ("flops 2.10 TFLOP/s, bytes 845 GB/s"; a new
 * string, NULL when it has none). */
bool gt_summary_has_rates(const gt_report *r);
char *gt_summary_rates(const gt_report *r, const gt_row *row);

/* Memory per range, NVTX counters, memory heaps: each only when it has
 * rows. */
void gt_summary_range_memory(gt_summary *s);
void gt_summary_counters(gt_summary *s);
void gt_summary_heaps(gt_summary *s);

/* "12.3%", the share of part in whole. */
char *gt_summary_percent(uint64_t part, uint64_t whole, char *buf, size_t cap);

#endif
