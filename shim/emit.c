/* The report's outputs at the end: the summary on the log (SPEC §5) and
 * the files of GPUTRACE_OUTPUT x GPUTRACE_FORMAT (SPEC §3). Text, JSON
 * and CSV are written whole from the report through `writers`; the
 * Chrome trace has been streamed all along and is completed here. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

static const char *env_value(const char *name)
{
    return getenv(name);
}

/* why ("<path>: <reason>") escaped for the terminal, cut to a sane length. */
static void warn_not_written(const char *why)
{
    char shown[GT_SHOWN_VALUE_MAX * 8 + 8];
    gt_escape(shown, sizeof shown, why, strlen(why), 2 * GT_SHOWN_VALUE_MAX);
    gt_warn("cannot write the report: %s", shown);
}

static int expand_base(const gt_config *cfg, int pid, const char *host, char base[GT_PATH_MAX])
{
    if (gt_output_expand(cfg->output, pid, host, env_value, base, GT_PATH_MAX) == 0) return 0;
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

void gt_emit_start_trace(gt_trace *trace, const gt_config *cfg, const gt_strtab *names,
                         uint64_t origin_ns)
{
    if (!cfg->output[0] || !(cfg->formats & GT_FMT_BIT(GT_OUTPUT_CHROME))) return;
    char host[256] = "", base[GT_PATH_MAX], path[GT_PATH_MAX], why[GT_PATH_MAX + 128];
    gethostname(host, sizeof host - 1);
    int pid = getpid();
    if (expand_base(cfg, pid, host, base) != 0 ||
        file_path(base, GT_OUTPUT_CHROME, path, sizeof path) != 0)
        return;
    if (gt_stream_file_open(&trace->file, path, why, sizeof why) != 0) {
        warn_not_written(why);
        return;
    }
    trace->timeline = gt_timeline_create(trace->file.fd, names, pid, origin_ns, cfg->categories);
    if (!trace->timeline) {
        gt_warn("no memory for the trace: no %s file", gt_output_extension(GT_OUTPUT_CHROME));
        gt_stream_file_discard(&trace->file);
    }
}

/* Ends the streamed trace and puts it at path (NULL: it is dropped). */
static void complete_trace(gt_trace *trace, const gt_process_info *p, const char *path)
{
    if (!trace || !trace->timeline) return;
    char why[GT_PATH_MAX + 128];
    int rc = gt_timeline_finish(trace->timeline, p);
    int failure = errno;
    uint64_t lost = gt_timeline_lost(trace->timeline);
    gt_timeline_destroy(trace->timeline);
    trace->timeline = NULL;
    if (!path) {
        gt_stream_file_discard(&trace->file);
        return;
    }
    if (rc != 0) {
        gt_stream_file_discard(&trace->file);
        snprintf(why, sizeof why, "%s: write failed: %s", path, strerror(failure));
        warn_not_written(why);
        return;
    }
    if (gt_stream_file_commit(&trace->file, path, why, sizeof why) != 0)
        warn_not_written(why);
    else if (lost)
        gt_warn("the trace left out %llu events (too many streams, named threads or open "
                "ranges)",
                (unsigned long long)lost);
}

static void write_files(const gt_report *r, const gt_process_info *p, const gt_config *cfg,
                        gt_trace *trace)
{
    char base[GT_PATH_MAX], path[GT_PATH_MAX], why[GT_PATH_MAX + 128];
    if (expand_base(cfg, p->pid, p->hostname, base) != 0) return;
    for (int f = 0; f < GT_OUTPUT_FORMAT_COUNT; f++) {
        if (!(cfg->formats & GT_FMT_BIT(f))) continue;
        enum gt_output_format format = (enum gt_output_format)f;
        bool named = file_path(base, format, path, sizeof path) == 0;
        if (format == GT_OUTPUT_CHROME) {
            complete_trace(trace, p, named ? path : NULL);
            continue;
        }
        if (!named) continue;
        file_job job = {writers[format], r, p};
        if (gt_output_write(path, run_job, &job, why, sizeof why) != 0) warn_not_written(why);
    }
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
    int rc = gt_report_write_summary(r, p, mem);
    if (fclose(mem) == 0 && rc == 0 && text) gt_log_write(text, len);
    free(text);
}

void gt_emit(const gt_report *r, const gt_process_info *p, const gt_config *cfg, gt_trace *trace)
{
    if (cfg->verbosity != GT_VERB_NONE) write_summary(r, p);
    if (cfg->output[0]) write_files(r, p, cfg, trace);
    complete_trace(trace, p, NULL); /* a trace no file asks for any more */
}
