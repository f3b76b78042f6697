/* The report: aggregation of event records into the SPEC §5 tables, and
 * the writers. Pure code: no CUDA, no globals, no threads of its own.
 * gt_report_add is called by one thread at a time (the shim's drain thread);
 * the writers run after the last add. */
#ifndef GT_REPORT_H
#define GT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "checksum_mode.h"
#include "event.h"
#include "settings.h"
#include "strtab.h"


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

/* When the report's records were captured (GPUTRACE_CAPTURE, _DELAY,
 * _DURATION; shim/capture_window.h). */
#define GT_CAPTURE_MODE_MAX 2064u /* "nvtx:" NAME "@" DOMAIN, NUL included */

typedef struct gt_capture_info {
    enum gt_capture_mode kind;
    char mode[GT_CAPTURE_MODE_MAX]; /* as the user wrote it: "profiler-api", "nvtx:step@app" */
    uint64_t delay_ns, duration_ns; /* duration 0: unlimited */
    uint64_t windows;               /* stretches of time with recording on */
    uint64_t captured_ns;           /* their total length (up to the report's end) */
    /* How often the mode's own condition began to hold (a profiler start,
     * a matching range opening), within the time limits or not: with no
     * window, it tells why. */
    uint64_t mode_opens;
} gt_capture_info;

/* opt NULL: every category, default verbosity, event timing. names may be
 * NULL (every name is then empty) and must outlive the report. NULL when
 * out of memory. */
gt_report *gt_report_create(const gt_report_options *opt, const gt_strtab *names);
void gt_report_destroy(gt_report *r);

/* Folds one record (times already in ns) into the tables of the enabled
 * categories. Records of one thread must come in that thread's order. */
void gt_report_add(gt_report *r, const gt_event *ev);

/* A call site (callsite_table.h), named by its label's string id, before
 * the first record whose `site` is that id. Telling it again does nothing. */
struct gt_site;
void gt_report_add_site(gt_report *r, uint32_t label, const struct gt_site *site);

/* GPUTRACE_CALLSITES as configured (JSON config.callsites); auto until set. */
void gt_report_set_callsites_mode(gt_report *r, enum gt_callsites mode);

/* What the recorder counted beside the tables (SPEC §10, §11: nothing is
 * lost silently): records that could not be stored (before the cut),
 * records made after the report's cut (`late`; of them, kernel launches,
 * copies and memsets: `late_gpu_work`), and GPU work reported without GPU
 * time because it was still pending when the report stopped waiting for
 * it. Each report made sets them anew. */
typedef struct gt_report_counts {
    uint64_t dropped;
    const char *dropped_why; /* why they were dropped ("because ..."); NULL: not known */
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

/* The GPUTRACE_CHECKSUM mode the run hashed its copies in: the report
 * then has a checksum list (GT_EV_CHECKSUM records; JSON checksums). */
void gt_report_set_checksum_mode(gt_report *r, gt_checksum_mode m);

/* What was captured. A report never told records everything: one window
 * as long as the process. */
void gt_report_set_capture(gt_report *r, const gt_capture_info *c);

/* Snapshots (GPUTRACE_INTERVAL; snapshot.c): a report made while the
 * process runs (final false, at_ns its moment), the report made at the
 * end (final true; signal: the one that ended the process, 0 at a normal
 * exit). A report never told is final at the process's end. */
typedef struct gt_snapshot_info {
    uint64_t at_ns; /* CLOCK_MONOTONIC */
    bool final;
    int signal;
    bool set;
} gt_snapshot_info;
void gt_report_set_snapshot(gt_report *r, uint64_t at_ns, bool final, int signal);
void gt_report_snapshot(const gt_report *r, const gt_process_info *p, gt_snapshot_info *out);

/* Before the writers of a snapshot, in place of gt_report_finish: the
 * memory's peak in time order. NVTX ranges still open stay open (not in
 * the tables yet), and records may still be added. */
void gt_report_settle(gt_report *r);

/* "SIGSEGV"; "a signal" for one without a name here. */
const char *gt_signal_name(int sig);

/* The text report's line after the header for a snapshot of pid taken
 * since_start_ns after the process started; with died_of, the line that
 * says the process died of that signal after it. snprintf's result. */
int gt_snapshot_line(char *buf, size_t cap, int pid, uint64_t since_start_ns, int died_of);

/* What the gputrace command does to the last snapshot of its child pid,
 * which died of sig: the JSON marked final with the signal, the text's
 * snapshot line replaced by the one saying so. A new string (its length
 * in *out_len), or NULL when the input is not a snapshot of that pid as
 * these writers make it (a final report is left as it is). */
char *gt_snapshot_json_finish(const char *json, size_t len, int pid, int sig, size_t *out_len);
char *gt_snapshot_text_finish(const char *text, size_t len, int pid, int sig, size_t *out_len);

/* A capture window opened at time_ns (CLOCK_MONOTONIC): the memory in
 * use then is a level inside it (memory.h), and the GPU's time before it
 * was not seen (no idle gap across it, gpu_busy.h). */
void gt_report_window_open(gt_report *r, uint64_t time_ns);

/* Whether recording was limited (a mode other than all, or a delay or
 * duration): the summary then says what was captured. */
int gt_capture_limited(const gt_capture_info *c);

/* The report's capture, as set or (never set) everything in one window
 * of wall_ns. */
void gt_report_capture(const gt_report *r, uint64_t wall_ns, gt_capture_info *out);

/* The time the report saw: the captured time when recording was limited
 * (*captured set), else wall_ns. */
uint64_t gt_report_observed_ns(const gt_report *r, uint64_t wall_ns, int *captured);

/* The GPU-work categories recorded when -c left some out, in words
 * ("memcpy", "kernel and memset"); "" when all are recorded. GPU busy
 * time and idle gaps are of this work only. */
void gt_report_work_recorded(const gt_report *r, char *buf, size_t cap);

/* In words, without the "capture: " the summary puts before it:
 * "profiler-api, 3 windows, 1.24 s of 9.87 s", the delay and duration
 * after the mode, or with no window why nothing was recorded. Holds the
 * mode as given (the summary makes it safe for a terminal). */
void gt_capture_describe(const gt_capture_info *c, uint64_t wall_ns, char *buf, size_t cap);
#define GT_CAPTURE_TEXT_MAX (GT_CAPTURE_MODE_MAX + 256u)

/* Where the GPU times came from (SPEC §12, JSON gpu_timing): the source
 * that ran and, in words, which libcupti it used, or why it was not CUPTI,
 * or when the source changed (detail; copied, cut to fit). */
#define GT_GPU_DETAIL_MAX 512u
void gt_report_set_gpu_source(gt_report *r, enum gt_gpu_source source, const char *detail);
enum gt_gpu_source gt_report_gpu_source(const gt_report *r);
const char *gt_report_gpu_source_detail(const gt_report *r);

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

/* SPEC §6. Returns 0, or -1 after a write error or when rows had to be
 * left out for want of memory (what was written is still valid JSON). */
int gt_report_write_json(const gt_report *r, const gt_process_info *p, FILE *out);

/* The terminal summary (SPEC §5) at verbosity v: nothing at none; a
 * header, the tables (top rows, lines fit `width` columns: the StdDev,
 * Min and Max columns left out, then names cut, as far as needed) and the
 * advice at default; every row and column, whole names, the NVTX tree and
 * the largest leaks at verbose; also the report's own diagnostics at
 * debug. width 0: 120 (a file's, or a terminal's of unknown width);
 * under 40 counts as 40. Returns 0, or -1 after a write error or when
 * rows had to be left out for want of memory. */
int gt_report_write_summary_fit(const gt_report *r, const gt_process_info *p, enum gt_verbosity v,
                                unsigned width, FILE *out);

/* The same, 120 columns wide. */
int gt_report_write_summary_at(const gt_report *r, const gt_process_info *p, enum gt_verbosity v,
                               FILE *out);

/* The summary at the report's verbosity. */
int gt_report_write_summary(const gt_report *r, const gt_process_info *p, FILE *out);

/* SPEC §7 CSV (see csv.c for the fields of each category); p gives the
 * process start the NVTX marks' times count from (NULL: 0). Returns 0 or
 * -1 as the JSON writer. */
int gt_report_write_csv(const gt_report *r, const gt_process_info *p, FILE *out);

#endif
