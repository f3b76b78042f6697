/* The report's outputs at the end: the summary on the log (SPEC §5) and
 * the files of GPUTRACE_OUTPUT x GPUTRACE_FORMAT (SPEC §3). Each format is
 * one entry of `writers`; a format listed there gets its file. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

typedef int (*report_writer)(const gt_report *r, const gt_process_info *p, FILE *out);

static const struct {
    enum gt_output_format format;
    report_writer write;
} writers[] = {
    /* The text file is the summary at default verbosity or more (the
     * report is made at that verbosity when a text file is asked for). */
    {GT_OUTPUT_TEXT, gt_report_write_summary},
    {GT_OUTPUT_JSON, gt_report_write_json},
};

static report_writer writer_of(enum gt_output_format f)
{
    for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++)
        if (writers[i].format == f) return writers[i].write;
    return NULL;
}

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

static void write_files(const gt_report *r, const gt_process_info *p, const gt_config *cfg)
{
    char base[GT_PATH_MAX], path[GT_PATH_MAX], why[GT_PATH_MAX + 128];
    char shown[GT_SHOWN_VALUE_MAX * 4 + 8];
    if (gt_output_expand(cfg->output, p->pid, p->hostname, env_value, base, sizeof base) != 0) {
        gt_escape(shown, sizeof shown, cfg->output, strlen(cfg->output), GT_SHOWN_VALUE_MAX);
        gt_warn("GPUTRACE_OUTPUT '%s': the expanded path is too long; no report file written",
                shown);
        return;
    }
    for (int f = 0; f < GT_OUTPUT_FORMAT_COUNT; f++) {
        if (!(cfg->formats & GT_FMT_BIT(f))) continue;
        enum gt_output_format format = (enum gt_output_format)f;
        report_writer write = writer_of(format);
        if (gt_output_file_name(base, format, path, sizeof path) != 0) {
            gt_escape(shown, sizeof shown, base, strlen(base), GT_SHOWN_VALUE_MAX);
            gt_warn("'%s%s': path too long; not written", shown, gt_output_extension(format));
            continue;
        }
        if (!write) {
            gt_escape(shown, sizeof shown, path, strlen(path), GT_SHOWN_VALUE_MAX);
            gt_warn("%s reports are not available in this version: '%s' not written",
                    gt_output_format_name(format), shown);
            continue;
        }
        file_job job = {write, r, p};
        if (gt_output_write(path, run_job, &job, why, sizeof why) != 0) {
            gt_escape(shown, sizeof shown, why, strlen(why), 2 * GT_SHOWN_VALUE_MAX);
            gt_warn("cannot write the report: %s", shown);
        }
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

void gt_emit(const gt_report *r, const gt_process_info *p, const gt_config *cfg)
{
    if (cfg->verbosity != GT_VERB_NONE) write_summary(r, p);
    if (cfg->output[0]) write_files(r, p, cfg);
}
