/* The report's outputs at the end: the summary on the log (SPEC §5) and
 * the files of GPUTRACE_OUTPUT x GPUTRACE_FORMAT (SPEC §3). Text, JSON
 * and CSV are written whole from the report through `writers`; the
 * Chrome and Perfetto traces have been streamed all along and are
 * completed here. */
#include "emit.h"

#include "aggregate.h"
#include "chrome.h"
#include "collect.h"
#include "config.h"
#include "event.h"
#include "fd_guard.h"
#include "log.h"
#include "memory_table.h"
#include "nvtx_table.h"
#include "output_path.h"
#include "pftrace.h"
#include "report.h"
#include "safe_file.h"
#include "settings.h"
#include "stream_file.h"
#include "strtab.h"
#include "timeline.h"
#include "utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*report_writer)(const gt_report *r, const gt_process_info *p, FILE *out);

/* The text file is the summary at default verbosity or more, whatever
 * the log gets (verbosity none keeps the log quiet, not the file). */
static int write_text(const gt_report *r, const gt_process_info *p, FILE *out)
{
    enum gt_verbosity v = r->opt.verbosity > GT_VERB_DEFAULT ? r->opt.verbosity : GT_VERB_DEFAULT;
    return gt_report_write_summary_at(r, p, v, out);
}

static const report_writer writers[GT_OUTPUT_FORMAT_COUNT] = {
    [GT_OUTPUT_TEXT] = write_text,
    [GT_OUTPUT_JSON] = gt_report_write_json,
    [GT_OUTPUT_CSV] = gt_report_write_csv,
};

typedef struct file_job {
    report_writer write;
    const gt_report *r;
    const gt_process_info *p;
} file_job;

static int run_job(FILE *out, void *arg)
{
    const file_job *job = arg;
    return job->write(job->r, job->p, out);
}

/* why ("<path>: <reason>") escaped for the terminal, cut to a sane length. */
static void warn_not_written(const char *why)
{
    char shown[GT_SHOWN_VALUE_MAX * 8 + 8];
    gt_escape(shown, sizeof shown, why, strlen(why), 2 * GT_SHOWN_VALUE_MAX);
    gt_warn("cannot write the report: %s", shown);
}

/* %n: the number of this process's files, chosen at their first naming;
 * 0 until then. */
static unsigned run_number;
#define RUN_NUMBER_MAX 100000u

/* Whether every file of base's formats could be made new; each is made,
 * empty, so that no other process takes the number meanwhile (the report
 * replaces it). When one exists, those made here go again. */
static bool claim_files(const gt_config *cfg, const char *base)
{
    char path[GT_PATH_MAX];
    int made = 0;
    for (int f = 0; f < GT_OUTPUT_FORMAT_COUNT; f++) {
        if (!(cfg->formats & GT_FMT_BIT(f))) continue;
        if (gt_output_file_name(base, (enum gt_output_format)f, path, sizeof path) != 0) continue;
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, GT_FILE_MODE);
        if (fd >= 0) {
            close(fd);
            made |= 1 << f;
        } else if (errno == EEXIST) {
            for (int g = 0; g < f; g++)
                if ((made & (1 << g)) &&
                    gt_output_file_name(base, (enum gt_output_format)g, path, sizeof path) == 0)
                    unlink(path);
            return false;
        }
    }
    return true;
}

static int expand_numbered(const gt_config *cfg, int pid, const char *host, char base[GT_PATH_MAX])
{
    if (run_number || !gt_output_numbered(cfg->output))
        return gt_output_expand_numbered(cfg->output, pid, host, NULL, run_number, base,
                                         GT_PATH_MAX);
    int saved_errno = errno;
    for (unsigned n = 1; n <= RUN_NUMBER_MAX; n++) {
        if (gt_output_expand_numbered(cfg->output, pid, host, NULL, n, base, GT_PATH_MAX) != 0)
            break;
        if (claim_files(cfg, base)) {
            run_number = n;
            errno = saved_errno;
            return 0;
        }
    }
    errno = saved_errno;
    return -1;
}

static int expand_base(const gt_config *cfg, int pid, const char *host, char base[GT_PATH_MAX])
{
    if (expand_numbered(cfg, pid, host, base) == 0) return 0;
    char shown[GT_SHOWN_VALUE_MAX * 4 + 8];
    gt_escape(shown, sizeof shown, cfg->output, strlen(cfg->output), GT_SHOWN_VALUE_MAX);
    gt_warn("GPUTRACE_OUTPUT '%s': the expanded path is too long; no report file written", shown);
    return -1;
}

static int file_path(const char *base, enum gt_output_format f, char *path, size_t cap)
{
    if (gt_output_file_name(base, f, path, cap) == 0) return 0;
    char shown[GT_SHOWN_VALUE_MAX * 4 + 8];
    gt_escape(shown, sizeof shown, base, strlen(base), GT_SHOWN_VALUE_MAX);
    gt_warn("'%s%s': path too long; not written", shown, gt_output_extension(f));
    return -1;
}

static const char *env_value(const char *name)
{
    return getenv(name);
}

void gt_emit_settle_output(gt_config *cfg)
{
    char host[256] = "", cwd[GT_PATH_MAX], anchored[GT_PATH_MAX];
    if (!cfg->output[0]) return;
    char shown[GT_SHOWN_VALUE_MAX * 4 + 8];
    gt_escape(shown, sizeof shown, cfg->output, strlen(cfg->output), GT_SHOWN_VALUE_MAX);
    /* The values now, on the thread that loads: later, on the drain thread,
     * getenv would race with a program's setenv (which may free the array
     * it reads) and could give other values than the ones checked here. */
    if (gt_output_expand_vars(cfg->output, env_value, anchored, sizeof anchored) != 0) {
        gt_warn("GPUTRACE_OUTPUT '%s': the expanded path is too long; no report file written",
                shown);
        cfg->output[0] = '\0';
        return;
    }
    memcpy(cfg->output, anchored, strlen(anchored) + 1);
    gethostname(host, sizeof host - 1);
    if (!gt_output_relative(cfg->output, getpid(), host, NULL)) return;
    if (!getcwd(cwd, sizeof cwd)) {
        gt_warn("GPUTRACE_OUTPUT '%s' is relative and the working directory is unknown (%s): "
                "the files go to the working directory at exit",
                shown, strerror(errno));
    } else if (gt_output_anchor(cfg->output, cwd, anchored, sizeof anchored) != 0) {
        gt_warn("GPUTRACE_OUTPUT '%s' made absolute is too long: the files go to the working "
                "directory at exit",
                shown);
    } else {
        memcpy(cfg->output, anchored, strlen(anchored) + 1);
    }
}

void gt_emit_prepare_trace(const gt_config *cfg)
{
    if (cfg->output[0] &&
        (cfg->formats & (GT_FMT_BIT(GT_OUTPUT_CHROME) | GT_FMT_BIT(GT_OUTPUT_PERFETTO))))
        gt_fd_grow_table();
}

void gt_trace_reset(gt_trace *t)
{
    *t = (gt_trace)GT_TRACE_NONE;
}

static bool streamed_asked(const gt_config *cfg)
{
    for (int i = 0; i < GT_TRACE_FORMAT_COUNT; i++)
        if (cfg->formats & GT_FMT_BIT(gt_trace_formats[i].format)) return true;
    return false;
}

void gt_emit_start_trace(gt_trace *trace, const gt_config *cfg, const gt_strtab *names,
                         uint64_t origin_ns, gt_memory *m)
{
    if (!cfg->output[0] || !streamed_asked(cfg)) return;
    char host[256] = "", base[GT_PATH_MAX], path[GT_PATH_MAX], why[GT_PATH_MAX + 128];
    gethostname(host, sizeof host - 1);
    int pid = getpid();
    if (expand_base(cfg, pid, host, base) != 0) return;
    for (int i = 0; i < GT_TRACE_FORMAT_COUNT; i++) {
        const gt_trace_format *f = &gt_trace_formats[i];
        if (!(cfg->formats & GT_FMT_BIT(f->format)) ||
            file_path(base, f->format, path, sizeof path) != 0)
            continue;
        if (gt_stream_file_open(&trace->files[i], path, why, sizeof why) != 0) {
            warn_not_written(why);
            continue;
        }
        trace->writer[i] = f->create(trace->files[i].fd, names, pid, origin_ns, cfg->categories);
        if (!trace->writer[i]) {
            gt_warn("no memory for the trace: no %s file", gt_output_extension(f->format));
            gt_stream_file_discard(&trace->files[i]);
        } else if (m) {
            f->follow_memory(trace->writer[i], m);
        }
    }
}

static void destroy_writer(gt_trace *t, int i)
{
    if (t->writer[i]) gt_trace_formats[i].destroy(t->writer[i]);
    t->writer[i] = NULL;
}

void gt_trace_discard(gt_trace *t)
{
    for (int i = 0; i < GT_TRACE_FORMAT_COUNT; i++) {
        destroy_writer(t, i);
        gt_stream_file_discard(&t->files[i]);
    }
}

typedef struct cause_list {
    char text[512];
    size_t len;
} cause_list;

static void add_cause(cause_list *c, uint64_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends ", N <cause>" when n is not 0. */
static void add_cause(cause_list *c, uint64_t n, const char *fmt, ...)
{
    if (!n || c->len >= sizeof c->text) return;
    c->len += (size_t)snprintf(c->text + c->len, sizeof c->text - c->len, "%s%llu ",
                               c->len ? ", " : "", (unsigned long long)n);
    if (c->len >= sizeof c->text) return;
    va_list ap;
    va_start(ap, fmt);
    c->len += (size_t)vsnprintf(c->text + c->len, sizeof c->text - c->len, fmt, ap);
    va_end(ap);
}

/* Why a trace left events out. */
static void warn_lost(const gt_trace_format *f, const gt_timeline_losses *l)
{
    cause_list c = {.len = 0};
    add_cause(&c, l->too_deep, "NVTX ranges nested deeper than %u", GT_NVTX_MAX_DEPTH);
    add_cause(&c, l->ranges,
              "NVTX ranges past %u start/end ranges open at once or %u (thread, domain) stacks",
              GT_TIMELINE_MAX_RANGES, GT_TIMELINE_MAX_STACKS);
    add_cause(&c, l->tracks, "pieces of GPU work on streams past the %uth", GT_TIMELINE_MAX_TRACKS);
    add_cause(&c, l->lanes, "pieces of GPU work overlapping %u others on their stream",
              GT_PFTRACE_MAX_LANES);
    add_cause(&c, l->range_lanes, "NVTX start/end ranges overlapping %u others",
              GT_PFTRACE_MAX_LANES);
    add_cause(&c, l->threads, "%s past the %uth", f->threads_cap, GT_TIMELINE_MAX_THREADS);
    add_cause(&c, l->no_memory, "events for want of memory");
    gt_warn("%s left out %llu events: %s", f->what, (unsigned long long)gt_timeline_losses_total(l),
            c.text);
}

/* Ends streamed trace i and puts it at path (NULL: it is dropped);
 * whether it was written there. */
static bool complete_trace(gt_trace *trace, int i, const gt_process_info *p, const char *path)
{
    const gt_trace_format *f = &gt_trace_formats[i];
    if (!trace || !trace->writer[i]) return false;
    char why[GT_PATH_MAX + 128];
    int rc = f->finish(trace->writer[i], p);
    int failure = errno;
    gt_timeline_losses lost = *gt_trace_losses(trace->writer[i]);
    destroy_writer(trace, i);
    if (!path) {
        gt_stream_file_discard(&trace->files[i]);
    } else if (rc != 0) {
        gt_stream_file_discard(&trace->files[i]);
        if (failure == EBADF) /* the outbuf's word for a descriptor no longer the file */
            snprintf(why, sizeof why, "%s: %s", path, GT_STREAM_FILE_TAKEN);
        else
            snprintf(why, sizeof why, "%s: write failed: %s", path, strerror(failure));
        warn_not_written(why);
    } else if (gt_stream_file_commit(&trace->files[i], path, why, sizeof why) != 0) {
        warn_not_written(why);
    } else {
        if (gt_timeline_losses_total(&lost)) warn_lost(f, &lost);
        return true;
    }
    return false;
}

/* "gputrace: wrote run.json, run.csv in /dir\n" as files are written. */
typedef struct written {
    char line[GT_PATH_MAX + 256];
    size_t len;
    char dir[GT_PATH_MAX];
} written;

static void note_written(written *w, const char *path)
{
    if (!w) return;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (!w->len) {
        size_t dir_len = slash ? (size_t)(slash - path) : 0;
        if (dir_len >= sizeof w->dir) dir_len = sizeof w->dir - 1;
        memcpy(w->dir, path, dir_len);
        w->dir[dir_len] = '\0';
        if (!slash) snprintf(w->dir, sizeof w->dir, ".");
        if (slash == path) snprintf(w->dir, sizeof w->dir, "/");
    }
    if (w->len < sizeof w->line)
        w->len += (size_t)snprintf(w->line + w->len, sizeof w->line - w->len, "%s%s",
                                   w->len ? ", " : "gputrace: wrote ", name);
}

/* The files of the report, each noted in w (NULL: not noted) once written. */
static void emit_files(const gt_report *r, const gt_process_info *p, const gt_config *cfg,
                       gt_trace *trace, written *w)
{
    if (!cfg->output[0]) return;
    char base[GT_PATH_MAX], path[GT_PATH_MAX], why[GT_PATH_MAX + 128];
    if (expand_base(cfg, p->pid, p->hostname, base) != 0) return;
    for (int i = 0; i < GT_TRACE_FORMAT_COUNT; i++) {
        enum gt_output_format format = gt_trace_formats[i].format;
        if (!(cfg->formats & GT_FMT_BIT(format))) continue;
        bool named = file_path(base, format, path, sizeof path) == 0;
        if (complete_trace(trace, i, p, named ? path : NULL)) note_written(w, path);
    }
    for (int f = 0; f < GT_OUTPUT_FORMAT_COUNT; f++) {
        if (!(cfg->formats & GT_FMT_BIT(f)) || !writers[f]) continue;
        enum gt_output_format format = (enum gt_output_format)f;
        if (file_path(base, format, path, sizeof path) != 0) continue;
        file_job job = {writers[format], r, p};
        if (gt_output_write(path, run_job, &job, why, sizeof why) != 0)
            warn_not_written(why);
        else
            note_written(w, path);
    }
}

void gt_emit_files(const gt_report *r, const gt_process_info *p, const gt_config *cfg,
                   gt_trace *trace)
{
    emit_files(r, p, cfg, trace, NULL);
}

/* The line that names the files written, safe for a terminal; "" when
 * none was. */
static void written_line(const written *w, char *out, size_t cap)
{
    char raw[sizeof w->line + sizeof w->dir + 8];
    out[0] = '\0';
    if (!w->len || snprintf(raw, sizeof raw, "%s in %s", w->line, w->dir) <= 0) return;
    size_t n = gt_text_safe_copy(out, cap - 1, raw, strlen(raw));
    out[n] = '\n';
    out[n + 1] = '\0';
}

static void write_summary(const gt_report *r, const gt_process_info *p)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        gt_warn("no memory for the summary");
        return;
    }
    int rc = gt_report_write_summary_fit(r, p, gt_report_get_options(r).verbosity, gt_log_columns(),
                                         mem);
    if (fclose(mem) == 0 && rc == 0 && text) gt_log_write(text, len);
    free(text);
}

void gt_emit(const gt_report *r, const gt_process_info *p, const gt_config *cfg, gt_trace *trace,
             int last)
{
    /* The files first, so that the summary can end with the line naming
     * them, as a user reads it last. */
    written w = {.len = 0};
    char wrote[3 * sizeof w.line + 3 * sizeof w.dir];
    if (cfg->output[0]) emit_files(r, p, cfg, trace, &w);
    written_line(&w, wrote, sizeof wrote);
    if (cfg->verbosity != GT_VERB_NONE && (!last || gt_command_summary_write(r, p, wrote) != 0)) {
        write_summary(r, p);
        gt_log_write(wrote, strlen(wrote));
    }
    for (int i = 0; i < GT_TRACE_FORMAT_COUNT; i++)
        complete_trace(trace, i, p, NULL); /* a trace no file asks for any more */
}
