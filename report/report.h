/* The report: aggregation of event records into the SPEC §5 tables, and
 * the writers. Pure code: no CUDA, no globals, no threads of its own.
 * gt_report_add is called by one thread at a time (the shim's drain thread);
 * the writers run after the last add. */
#ifndef GT_REPORT_H
#define GT_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "strtab.h"

enum gt_verbosity { GT_VERB_NONE, GT_VERB_DEFAULT, GT_VERB_VERBOSE, GT_VERB_DEBUG };
enum gt_gpu_timing { GT_GPU_TIMING_EVENTS, GT_GPU_TIMING_OFF };

typedef struct gt_report_options {
    unsigned categories; /* GT_CAT_BIT mask of enabled categories */
    enum gt_verbosity verbosity;
    enum gt_gpu_timing gpu_timing;
} gt_report_options;

/* What the report says about the process (SPEC §6 "process"). */
typedef struct gt_process_info {
    int pid;
    int ppid;
    const char *hostname;
    const char *command; /* the command line, arguments separated by spaces */
    uint64_t start_ns;   /* CLOCK_MONOTONIC */
    uint64_t end_ns;
} gt_process_info;

typedef struct gt_report gt_report;

/* opt NULL: every category, default verbosity, event timing. names may be
 * NULL (every name is then empty) and must outlive the report. NULL when
 * out of memory. */
gt_report *gt_report_create(const gt_report_options *opt, const gt_strtab *names);
void gt_report_destroy(gt_report *r);

/* Folds one record (times already in ns) into the tables of the enabled
 * categories. Records of one thread must come in that thread's order. */
void gt_report_add(gt_report *r, const gt_event *ev);

/* What the recorder counted beside the tables (SPEC §10, §11: nothing is
 * lost silently): records that could not be stored (before the cut),
 * records made after the report's cut (`late`; of them, kernel launches,
 * copies and memsets: `late_gpu_work`), and GPU work reported without GPU
 * time because it was still pending when the report stopped waiting for
 * it. Each report made sets them anew. */
typedef struct gt_report_counts {
    uint64_t dropped;
    uint64_t late;
    uint64_t late_gpu_work;
    uint64_t gpu_pending;
} gt_report_counts;
void gt_report_set_counts(gt_report *r, const gt_report_counts *c);

/* A record made after the report's cut, when the tables are final: the
 * tables skip it, except the memory category, which follows every
 * allocation to its end (freed at any time, released with its context, or
 * still held when the process ends). It counts in `late` (set with
 * gt_report_set_counts), not in events. */
void gt_report_add_after_cut(gt_report *r, const gt_event *ev);

uint64_t gt_report_event_count(const gt_report *r);

/* GPU timing was configured on but could not work (reason: a short
 * phrase, "the driver has no cuEventQuery"; copied, cut at 255 bytes).
 * The header says so, the JSON config gives the reason, the GPU tables
 * say their work was not timed. NULL or "" clears it. */
void gt_report_set_gpu_timing_off(gt_report *r, const char *reason);

/* Call once after the last add and before the writers: closes the NVTX
 * ranges still open at end_ns (the process end time; counted as open at
 * exit) and settles records still waiting for their counterpart. Adds
 * after it start afresh; calling it again only closes what opened since. */
void gt_report_finish(gt_report *r, uint64_t end_ns);

/* The options a report was made with; a report read back can be shown
 * with fewer categories or another verbosity by setting them again. */
gt_report_options gt_report_get_options(const gt_report *r);
void gt_report_set_options(gt_report *r, const gt_report_options *opt);

/* The process a report read back from a file (load.h) or merged
 * describes; NULL for a report aggregated from records. */
const gt_process_info *gt_report_process(const gt_report *r);

/* "none", "default", "verbose", "debug"; "events", "off". */
const char *gt_verbosity_name(enum gt_verbosity v);
const char *gt_gpu_timing_name(enum gt_gpu_timing t);

/* SPEC §6. Returns 0, or -1 after a write error or when rows had to be
 * left out for want of memory (what was written is still valid JSON). */
int gt_report_write_json(const gt_report *r, const gt_process_info *p, FILE *out);

/* The terminal summary (SPEC §5) at verbosity v: nothing at none; a
 * header, the tables (top rows, names cut to fit 120 columns) and the
 * advice at default; every row, whole names, the NVTX tree and the
 * largest leaks at verbose; also the report's own diagnostics at debug.
 * Returns 0, or -1 after a write error or when rows had to be left out
 * for want of memory. */
int gt_report_write_summary_at(const gt_report *r, const gt_process_info *p, enum gt_verbosity v,
                               FILE *out);

/* The summary at the report's verbosity. */
int gt_report_write_summary(const gt_report *r, const gt_process_info *p, FILE *out);

/* SPEC §7 CSV (see csv.c for the fields of each category); p gives the
 * process start the NVTX marks' times count from (NULL: 0). Returns 0 or
 * -1 as the JSON writer. */
int gt_report_write_csv(const gt_report *r, const gt_process_info *p, FILE *out);

#endif
