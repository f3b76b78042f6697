/* The JSON of the numbers NVTX carried (json_numbers.c), called by the
 * report's JSON writer where each belongs. */
#ifndef GT_JSON_NUMBERS_H
#define GT_JSON_NUMBERS_H

#include <stdint.h>

#include "json_writer.h"
#include "nvtx_marks.h"
#include "report.h"
#include "table.h"

/* Inside an `nvtx` row's object: its "payload", "payload_fields" and
 * "memory", each when it has them. */
void gt_json_nvtx_numbers(gt_json *w, const gt_report *r, const gt_row *row);

/* Inside an `nvtx_marks` row's object: its "payload" when it has one. */
void gt_json_mark_payload(gt_json *w, const gt_nvtx_mark *m);

/* "nvtx_counters": [...]; times count from start_ns. -1 when rows were
 * left out for want of memory. */
int gt_json_nvtx_counters(gt_json *w, const gt_report *r, uint64_t start_ns);

/* "heaps": [...] inside the memory object, when there are heaps. -1 as
 * above. */
int gt_json_heaps(gt_json *w, const gt_report *r);

#endif
