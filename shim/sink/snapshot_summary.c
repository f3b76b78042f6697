/* Snapshots (GPUTRACE_INTERVAL) as the gputrace command needs them.
 *
 * The report files of a snapshot are written by gt_emit_snapshot. The
 * command also wants the summary, to print it if its child dies of a
 * signal without a report of its own: it names, in GPUTRACE_SNAPSHOT_SUMMARY,
 * a path template (with %p) in a directory of its own, where each snapshot
 * leaves the summary at the log's verbosity. The report made at the end
 * removes it: the process has said all it had to say itself.
 *
 * The directory goes when the command ends, while processes started under
 * it may go on (`gputrace bash -c 'prog &'`), and its name is no secret:
 * anyone may then make a directory of that name and plant links in it. The
 * command cannot wait for every descendant (it ends when its program
 * does, and a daemon never ends), so it is the library that checks: the
 * directory is used only through a descriptor taken without following a
 * link, and only while it is the user's own and closed to everyone else
 * (safe_file.h), as the command made it; the file goes in under a new
 * random name and is renamed into place. Otherwise nothing is written: no
 * one reads it any more. The final summary the command prints for its
 * program (command_summary.c) goes into the same directory by the same
 * rules. */
#include "config.h"
#include "emit.h"
#include "log.h"
#include "output_path.h"
#include "report.h"
#include "safe_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Set at load: the path template (a % in the command's directory comes
 * escaped); "" when the command asked for no summary. */
static char summary_template[GT_PATH_MAX];

void gt_snapshot_summary_init(const char *tmpl)
{
    summary_template[0] = '\0';
    const char *slash = tmpl ? strrchr(tmpl, '/') : NULL;
    if (!slash || slash == tmpl || !slash[1] || strlen(tmpl) >= sizeof summary_template) return;
    strcpy(summary_template, tmpl);
}

int gt_emit_snapshot_summary_asked(void)
{
    return summary_template[0] != '\0';
}

/* dir while it is still what the command made (its own, closed to
 * everyone else): a descriptor, or -1 with the reason in *why. */
static int open_command_dir(const char *dir, const char **why)
{
    int fd = gt_file_open_private_dir(dir, why);
    if (fd < 0) gt_debug("the gputrace command's directory %s: %s", dir, *why);
    return fd;
}

static int summary_path_of(const gt_process_info *p, char path[GT_PATH_MAX])
{
    return gt_output_expand(summary_template, p->pid, p->hostname, NULL, path, GT_PATH_MAX);
}

/* path's directory into dir_path and its file name; -1 when path is not
 * a file in a directory. */
static int split_path(const char *path, char dir_path[GT_PATH_MAX], const char **name)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path || !slash[1] || (size_t)(slash - path) >= GT_PATH_MAX) return -1;
    memcpy(dir_path, path, (size_t)(slash - path));
    dir_path[slash - path] = '\0';
    *name = slash + 1;
    return 0;
}

typedef struct summary_job {
    const gt_report *r;
    const gt_process_info *p;
    const char *trailer;
} summary_job;

static int write_summary(FILE *out, void *arg)
{
    const summary_job *job = arg;
    /* The command prints it on the terminal the log would go to. */
    int rc = gt_report_write_summary_fit(job->r, job->p, gt_report_get_options(job->r).verbosity,
                                         gt_log_columns(), out);
    if (rc == 0 && job->trailer) fputs(job->trailer, out);
    return rc;
}

int gt_summary_file_write(const char *path, const gt_report *r, const gt_process_info *p,
                          const char *trailer, char *why, size_t why_size)
{
    char dir_path[GT_PATH_MAX];
    const char *name;
    if (split_path(path, dir_path, &name) != 0) {
        snprintf(why, why_size, "%s: not a file in a directory", path);
        return -1;
    }
    const char *dir_why = "";
    int dir = open_command_dir(dir_path, &dir_why);
    if (dir < 0) {
        snprintf(why, why_size, "%s: %s", dir_path, dir_why);
        return -1;
    }
    summary_job job = {r, p, trailer};
    int rc =
        gt_output_write_at(dir, name, GT_FILE_PRIVATE_MODE, write_summary, &job, why, why_size);
    close(dir);
    return rc;
}

void gt_emit_snapshot(const gt_report *r, const gt_process_info *p, const gt_config *cfg)
{
    gt_emit_files(r, p, cfg, NULL);
    char path[GT_PATH_MAX], why[GT_PATH_MAX + 128];
    /* Even at verbosity none (then empty): the command finishes the files
     * of a process that left one. */
    if (!summary_template[0] || summary_path_of(p, path) != 0) return;
    if (gt_summary_file_write(path, r, p, NULL, why, sizeof why) != 0)
        gt_debug("the snapshot's summary for the gputrace command: %s", why);
}

void gt_snapshot_summary_remove(const gt_process_info *p)
{
    char path[GT_PATH_MAX], dir_path[GT_PATH_MAX];
    const char *name, *why = "";
    if (!summary_template[0] || summary_path_of(p, path) != 0 ||
        split_path(path, dir_path, &name) != 0)
        return;
    int dir = open_command_dir(dir_path, &why);
    if (dir < 0) return;
    unlinkat(dir, name, 0);
    close(dir);
}
