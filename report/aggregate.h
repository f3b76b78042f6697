/* The report's insides, shared by the aggregation and the writers.
 *
 * Row keys per category (gt_row_key.f):
 *   kernel   name id, 1 for a graph launch
 *   memcpy   enum gt_copy_dir, enum gt_host_mem, 1 when async
 *   memset   1 when async
 *   compile  api id, program name id, 1 when it succeeded
 *   module   api id, enum gt_image_kind
 *   sync     api id
 *   nvtx     domain id, message id
 *   api      api id
 * The memory category has its own structure (memory.h). */
#ifndef GT_AGGREGATE_H
#define GT_AGGREGATE_H

#include <stdbool.h>

#include "gpu_busy.h"
#include "memory.h"
#include "nvtx.h"
#include "report.h"
#include "table.h"

struct gt_report {
    gt_report_options opt;
    const gt_strtab *names;
    uint64_t events;
    uint64_t dropped;
    gt_table tables[GT_CAT_COUNT]; /* tables[GT_CAT_MEMORY] stays empty */
    gt_memory memory;
    gt_nvtx nvtx;
    gt_gpu_busy busy;
};

static inline bool gt_report_enabled(const gt_report *r, enum gt_category c)
{
    return (r->opt.categories & GT_CAT_BIT(c)) != 0;
}

/* Which key fields of a category are string ids (bit i = field i). */
unsigned gt_report_key_strings(enum gt_category c);

/* The rows of a category in report order (gt_table_sorted); the caller
 * frees the array. */
gt_sorted_row *gt_report_sorted_rows(const gt_report *r, enum gt_category c, size_t *n);

#endif
