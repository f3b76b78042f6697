/* The consumer of the shim's pipeline (collect.c): ticks -> ns, the error
 * name, a debug line, then the report. Runs on the draining thread only. */
#ifndef GT_COLLECT_H
#define GT_COLLECT_H

#include <stdint.h>

#include "event.h"
#include "pipeline.h"
#include "report.h"
#include "strtab.h"

/* Names a non-zero result (e.g. "CUDA_ERROR_INVALID_VALUE"): set by the
 * interception code; returns a string id, 0 when unknown. */
typedef uint32_t (*gt_error_namer)(const gt_event *ev);
void gt_collect_set_error_namer(gt_error_namer fn);

/* Names a record's call site (callsite_table.h) from the stack id its
 * `site` holds: the label's string id (0 when none) and the site; set by
 * the call site code (shim/callsite). */
struct gt_site;
typedef uint32_t (*gt_site_namer)(uint32_t stack_id, const struct gt_site **site);
void gt_collect_set_site_namer(gt_site_namer fn);

void gt_collect_reset(void);   /* a fresh report; the old one is abandoned (fork child) */
void gt_collect_release(void); /* a fresh report; the old one is freed (no drain running) */
void gt_collect_records(gt_event *ev, uint32_t n, void *ctx); /* params.consume */
void gt_collect_flush_debug(void); /* debug lines are written in batches */

/* params.cut: records from now on are late (gt_report_add_after_cut). */
void gt_collect_cut(void *ctx);

/* A report (params.finished): the pipeline's counts, the report's end,
 * then the summary and files (gt_emit). */
void gt_collect_finish(const gt_pipeline_totals *t, const gt_process_info *p);
gt_report *gt_collect_report(void); /* created on first use; NULL without memory */


#endif
