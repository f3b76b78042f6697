/* The terminal summary's sections (SPEC §5), shared between summary.c (the
 * layout: header, memory, advice, diagnostics) and summary_tables.c (the
 * statistics tables). */
#ifndef GT_SUMMARY_H
#define GT_SUMMARY_H

#include <stdio.h>

#include "aggregate.h"
#include "event.h"
#include "report.h"
#include "settings.h"

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

/* "12.3%", the share of part in whole. */
char *gt_summary_percent(uint64_t part, uint64_t whole, char *buf, size_t cap);

#endif
