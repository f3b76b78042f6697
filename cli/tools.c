/* What report, diff and merge share, but the reading of reports
 * (tools_load.c, with cJSON); the command's option checking uses it too. */
#include "tools.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "output_path.h"
#include "terminal_width.h"

typedef struct lookup {
    const char *name;
    const char *value;
} lookup;

static const char *only_this(const char *name, void *ctx)
{
    const lookup *l = ctx;
    return strcmp(name, l->name) == 0 ? l->value : NULL;
}

/* A value of blanks only is no value: the shim takes it as unset, so the
 * command refuses it rather than pass on what would silently mean the
 * default (`-o "   "` would write nothing). */
static int blank(const char *v)
{
    while (*v == ' ' || *v == '\t')
        v++;
    return *v == '\0';
}

int gt_cli_parse_setting(const char *option, enum gt_config_var var, const char *value,
                         gt_config *cfg)
{
    if (blank(value)) {
        gt_cli_error("%s needs a value (see gputrace --help)", option);
        return -1;
    }
    lookup l = {gt_config_var_name(var), value};
    gt_config_parse(cfg, only_this, &l);
    if (cfg->n_warnings == 0) return 0;
    const char *expected = strstr(cfg->warnings[0], "expected ");
    char shown[GT_CLI_SHOWN_SIZE];
    gt_cli_error("invalid %s '%s': %s", option, gt_cli_shown(shown, sizeof shown, value),
                 expected ? expected : "see gputrace --help");
    return -1;
}

int gt_cli_parse_formats(const char *value, unsigned *formats)
{
    static gt_config cfg; /* large (paths): not on the stack */
    if (gt_cli_parse_setting("--format", GT_VAR_FORMAT, value, &cfg) != 0) return -1;
    unsigned allowed =
        GT_FMT_BIT(GT_OUTPUT_TEXT) | GT_FMT_BIT(GT_OUTPUT_JSON) | GT_FMT_BIT(GT_OUTPUT_CSV);
    if (cfg.formats & ~allowed) {
        gt_cli_error("invalid --format '%s': a report file has no events for a trace; expected "
                     "a comma list of text, json, csv",
                     value);
        return -1;
    }
    *formats = cfg.formats;
    return 0;
}

/* 2^18 buckets: about one per name in a report of 100,000 rows. */
#define NAME_BUCKET_BITS 18u

gt_strtab *gt_cli_names(void)
{
    return gt_strtab_create_sized(NAME_BUCKET_BITS);
}

typedef struct write_job {
    const gt_report *r;
    enum gt_output_format format;
    enum gt_verbosity v;
    unsigned width; /* of the text: 0 for a file's */
} write_job;

static int write_format(FILE *out, void *arg)
{
    const write_job *job = arg;
    const gt_process_info *p = gt_report_process(job->r);
    switch (job->format) {
    case GT_OUTPUT_TEXT:
        return gt_report_write_summary_fit(job->r, p, job->v, job->width, out);
    case GT_OUTPUT_JSON:
        return gt_report_write_json(job->r, p, out);
    case GT_OUTPUT_CSV:
        return gt_report_write_csv(job->r, p, out);
    default:
        return -1;
    }
}

static const char *env_value(const char *name)
{
    return getenv(name);
}

static int write_files(const gt_report *r, const char *tmpl, unsigned formats, enum gt_verbosity v)
{
    const gt_process_info *p = gt_report_process(r);
    char base[GT_PATH_MAX], path[GT_PATH_MAX], why[GT_PATH_MAX + 128];
    if (gt_output_expand(tmpl, p->pid, p->hostname, env_value, base, sizeof base) != 0) {
        gt_cli_error("--output '%s': the expanded path is too long", tmpl);
        return -1;
    }
    for (int f = 0; f < GT_OUTPUT_FORMAT_COUNT; f++) {
        if (!(formats & GT_FMT_BIT(f))) continue;
        if (gt_output_file_name(base, (enum gt_output_format)f, path, sizeof path) != 0) {
            gt_cli_error("'%s%s': path too long", base, gt_output_extension(f));
            return -1;
        }
        write_job job = {r, (enum gt_output_format)f, v, 0};
        if (gt_output_write(path, write_format, &job, why, sizeof why) != 0) {
            gt_cli_error("cannot write %s", why);
            return -1;
        }
    }
    return 0;
}

int gt_cli_write_report(const gt_report *r, const char *tmpl, unsigned formats, enum gt_verbosity v)
{
    if (tmpl) return write_files(r, tmpl, formats, v);
    if (formats & (formats - 1)) {
        gt_cli_error("--format lists several formats: give --output TEMPLATE to write them to "
                     "files");
        return -1;
    }
    for (int f = 0; f < GT_OUTPUT_FORMAT_COUNT; f++) {
        if (!(formats & GT_FMT_BIT(f))) continue;
        write_job job = {r, (enum gt_output_format)f, v, gt_cli_columns()};
        if (write_format(stdout, &job) != 0 || fflush(stdout) != 0) {
            gt_cli_error("cannot write the report to standard output");
            return -1;
        }
    }
    return 0;
}

unsigned gt_cli_columns(void)
{
    return gt_terminal_width(getenv("COLUMNS"), STDOUT_FILENO);
}

int gt_cli_usage_error(const char *command, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    gt_cli_error("%s (see gputrace %s --help)", n >= 0 ? text : "bad usage", command);
    if (n >= 0) free(text);
    return GT_TOOL_BAD_INPUT;
}

int gt_cli_option_error(const char *command, char **argv, int opt)
{
    const char *arg = argv[optind - 1];
    if (opt == ':') return gt_cli_usage_error(command, "option '%s' needs a value", arg);
    if (optopt && optopt < 256) return gt_cli_usage_error(command, "unknown option '-%c'", optopt);
    return gt_cli_usage_error(command, "unknown option '%s'", arg);
}
