/* The JSON report's `callsites` array (callsite_json.c). */
#ifndef GT_CALLSITE_JSON_H
#define GT_CALLSITE_JSON_H

#include "json_writer.h"
#include "report.h"

/* Writes the key and the array: 0, or -1 when rows were left out for want
 * of memory. */
int gt_callsites_write_json(gt_json *w, const gt_report *r);

#endif
