/* Snapshots (GPUTRACE_INTERVAL) as the gputrace command needs them.
 *
 * The report files of a snapshot are written by gt_emit_snapshot. The
 * command also wants the summary, to print it if its child dies of a
 * signal without a report of its own: it names, in GPUTRACE_SNAPSHOT_SUMMARY,
 * a path template (with %p) in a directory of its own, where each snapshot
 * leaves the summary at the log's verbosity. The report made at the end
 * removes it: the process has said all it had to say itself. */
#include "config.h"
#include "emit.h"
#include "log.h"
#include "output_path.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char summary_template[GT_PATH_MAX]; /* "" when the command asked for none; set at load */

void gt_snapshot_summary_init(const char *tmpl)
{
    summary_template[0] = '\0';
    if (tmpl && strlen(tmpl) < sizeof summary_template) strcpy(summary_template, tmpl);
}

int gt_emit_snapshot_summary_asked(void)
{
    return summary_template[0] != '\0';
}

static const char *env_value(const char *name)
{
    return getenv(name);
}

static int summary_path(const gt_process_info *p, char path[GT_PATH_MAX])
{
    return gt_output_expand(summary_template, p->pid, p->hostname, env_value, path, GT_PATH_MAX);
}

typedef struct summary_job {
    const gt_report *r;
    const gt_process_info *p;
} summary_job;

static int write_summary(FILE *out, void *arg)
{
    const summary_job *job = arg;
    return gt_report_write_summary(job->r, job->p, out);
}

int gt_summary_file_write(const char *path, const gt_report *r, const gt_process_info *p, char *why,
                          size_t why_size)
{
    summary_job job = {r, p};
    return gt_output_write(path, write_summary, &job, why, why_size);
}

void gt_emit_snapshot(const gt_report *r, const gt_process_info *p, const gt_config *cfg)
{
    gt_emit_files(r, p, cfg, NULL);
    char path[GT_PATH_MAX], why[GT_PATH_MAX + 128];
    /* Even at verbosity none (then empty): the command finishes the files
     * of a process that left one. */
    if (!summary_template[0] || summary_path(p, path) != 0) return;
    if (gt_summary_file_write(path, r, p, why, sizeof why) != 0)
        gt_debug("the snapshot's summary for the gputrace command: %s", why);
}

void gt_snapshot_summary_remove(const gt_process_info *p)
{
    char path[GT_PATH_MAX];
    if (summary_template[0] && summary_path(p, path) == 0) unlink(path);
}
