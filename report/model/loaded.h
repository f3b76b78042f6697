/* What a report read back from a JSON file (load.c), or merged from
 * several (merge.c), carries beyond what aggregation keeps. The shim's
 * reports never have it (gt_report.loaded is NULL); the writers look here
 * for what they would otherwise work out from the records:
 *   - the process, as the file gives it;
 *   - the advice as written (its rules need the records themselves);
 *   - each row's statistics summary (gt_stats.preset points into
 *     `summaries`);
 *   - for a merged report, its inputs and each row's spread across them;
 *   - totals the reader does not know, kept so that they are written again
 *     (a newer writer's keys), and, for a single report, the top-level
 *     members it does not know, as JSON text. */
#ifndef GT_LOADED_H
#define GT_LOADED_H

#include <stdint.h>

#include "advice.h"
#include "event.h"
#include "report.h"
#include "stats.h"
#include "strtab.h"
#include "table.h"

/* A merged row's totals across the inputs: min, median and max of each
 * input's total (0 for an input without the row), which input has the
 * largest, and how many have the row at all. */
typedef struct gt_row_spread {
    uint64_t min;
    uint64_t med;
    uint64_t max;
    uint32_t max_input; /* index into gt_loaded.inputs */
    uint32_t inputs;
} gt_row_spread;

/* One report that went into a merge. */
typedef struct gt_report_input {
    char *file;
    char *hostname;
    char *command;
    int pid;
    uint64_t wall_ns;
    uint64_t gpu_busy_ns;
    uint64_t events;
} gt_report_input;

/* A key and its value, both as read. */
typedef struct gt_loaded_member {
    char *key;
    uint64_t value; /* extra totals */
    char *json;     /* extra top-level members: the value as compact JSON */
} gt_loaded_member;

typedef struct gt_loaded {
    gt_process_info process; /* hostname and command point at the strings below */
    char *hostname;
    char *command;
    gt_advice advice[GT_ADVICE_RULES]; /* rule names are interned in the report's names */
    uint32_t nadvice;
    gt_stats_summary *summaries[GT_CAT_COUNT]; /* by row number */
    gt_row_spread *spread[GT_CAT_COUNT];       /* merged reports only: by row number */
    gt_report_input *inputs;                   /* merged reports only */
    uint32_t ninputs;
    gt_loaded_member *totals; /* totals this reader does not know */
    uint32_t ntotals;
    gt_loaded_member *members; /* top-level members this reader does not know */
    uint32_t nmembers;
} gt_loaded;

/* A report with `loaded` attached (zeroed, owned by the report). names
 * must outlive the report. NULL when out of memory. */
gt_report *gt_loaded_report_create(const gt_report_options *opt, const gt_strtab *names);

/* The spread of a row of a merged report, NULL otherwise. */
const gt_row_spread *gt_report_row_spread(const gt_report *r, enum gt_category c,
                                          const gt_row *row);

/* Frees what the loaded part owns. */
void gt_loaded_free(gt_loaded *l);

#endif
