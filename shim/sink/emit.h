/* The report's outputs (emit.c): the summary on the log and the files of
 * GPUTRACE_OUTPUT x GPUTRACE_FORMAT; and the snapshots' summary for the
 * gputrace command (snapshot_summary.c). */
#ifndef GT_EMIT_H
#define GT_EMIT_H

#include <stdint.h>

#include "config.h"
#include "event.h"
#include "memory_table.h"
#include "report.h"
#include "stream_file.h"
#include "strtab.h"
#include "trace_format.h"

/* The traces streamed while the program runs, the Chrome trace and the
 * Perfetto trace (collect.c starts them with the report): the drain
 * appends each record's events to their temporary files, gt_emit
 * completes them. */
typedef struct gt_trace {
    /* By gt_trace_formats[] index; NULL: none (not asked for, or it could
     * not start: warned). */
    void *writer[GT_TRACE_FORMAT_COUNT];
    gt_stream_file files[GT_TRACE_FORMAT_COUNT];
} gt_trace;

/* No trace, no file (a GNU range initializer: one entry per format). */
#define GT_TRACE_NONE                                                                              \
    {                                                                                              \
        .files = { [0 ... GT_TRACE_FORMAT_COUNT - 1] = {.fd = -1} }                                \
    }
void gt_trace_reset(gt_trace *t); /* back to GT_TRACE_NONE */

/* Feeds a record to the traces there are. */
static inline void gt_trace_add(const gt_trace *t, const gt_event *ev)
{
    for (int i = 0; i < GT_TRACE_FORMAT_COUNT; i++)
        if (t->writer[i]) gt_trace_formats[i].add(t->writer[i], ev);
}

/* Frees the traces and removes their temporary files. */
void gt_trace_discard(gt_trace *t);

/* Writes the summary to the log and the report files, as the configuration
 * says, completing the trace (which is left empty); a file that cannot be
 * written gives a warning. The process's last report (`last`: not one made
 * before an exec) gives its summary to the gputrace command when the
 * command asked for it (command_summary.c). */
void gt_emit(const gt_report *r, const gt_process_info *p, const gt_config *cfg, gt_trace *trace,
             int last);

/* The report files alone (as gt_emit writes them); with trace NULL the
 * Chrome trace is left as it is (a snapshot: see snapshot_summary.c). */
void gt_emit_files(const gt_report *r, const gt_process_info *p, const gt_config *cfg,
                   gt_trace *trace);

/* snapshot_summary.c. A snapshot: the report files but the trace, which is
 * completed at the end only (it is streamed: valid only once closed), and
 * the summary the gputrace command asked for, if it did. */
void gt_emit_snapshot(const gt_report *r, const gt_process_info *p, const gt_config *cfg);
/* At load: the command's path template for the snapshots' summary
 * (GT_SNAPSHOT_SUMMARY_VAR, config.h; NULL: none). */
void gt_snapshot_summary_init(const char *tmpl);
int gt_emit_snapshot_summary_asked(void);
/* A report made at an end step: the command has no summary to print. */
void gt_snapshot_summary_remove(const gt_process_info *p);
/* The summary at the log's verbosity, then trailer (NULL: none), into the file at path (replaced
 * whole, mode 0600), only while path's directory is still the command's
 * private one (snapshot_summary.c); 0, else -1 with the reason in why. */
int gt_summary_file_write(const char *path, const gt_report *r, const gt_process_info *p,
                          const char *trailer, char *why, size_t why_size);

/* command_summary.c. At load: the command's GT_CHILD_SUMMARY_VAR (NULL:
 * none). Whether process `pid` is the one the command named, whose final
 * summary goes to the command; and writing it there (0, else -1: it goes
 * to the log). */
void gt_command_summary_init(const char *value);
int gt_command_summary_asked(int pid);
int gt_command_summary_write(const gt_report *r, const gt_process_info *p, const char *trailer);
/* The first CUDA call of a process under the command: GT_CUDA_MARK_NAME
 * in the command's directory, for the command to know that something was
 * recorded. errno is left as it was. */
void gt_command_note_cuda(void);

/* At load: the GPUTRACE_OUTPUT template's %q{VAR} replaced by the values
 * the variables have now (the files of every report of the process are
 * named with them), and a template that expands to a relative path made
 * absolute against the working directory, so that a program that changes
 * directory still writes every file where the user pointed. */
void gt_emit_settle_output(gt_config *cfg);

/* With chrome or perfetto among the formats, while the process has one thread (load,
 * a forked child): readies the descriptor table for the traces' high
 * number (fd_guard.h), so that the drain never waits on the kernel for it. */
void gt_emit_prepare_trace(const gt_config *cfg);

/* For each streamed format among the formats (trace_format.h): opens the
 * trace's temporary file beside its final path and starts it, times
 * counting from origin_ns where the format counts from an origin, its
 * memory counter following m when m is not NULL (a file that cannot be
 * created is warned about now, and that trace is left out). */
void gt_emit_start_trace(gt_trace *trace, const gt_config *cfg, const gt_strtab *names,
                         uint64_t origin_ns, gt_memory *m);

#endif
