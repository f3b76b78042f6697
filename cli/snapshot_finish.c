/* The command's part in snapshots (GPUTRACE_INTERVAL): it sees how its
 * child ended, which the child cannot report when a signal kills it.
 *
 * Before the run a private directory is made, where the child leaves its
 * final summary (child_summary.c) and, named in its
 * GPUTRACE_SNAPSHOT_SUMMARY, each snapshot's summary
 * (shim/sink/snapshot_summary.c). When the child dies of a signal and made
 * no report of its own (its last snapshot stands), the command marks the
 * snapshot's files final, naming the signal (JSON "final": true, "signal":
 * N; the text's snapshot line), and prints the summary from that snapshot
 * with the same line. Then the directory goes, even while processes
 * started under the command still run: the command ends when its program
 * does, and cannot know when, if ever, every descendant will. They write
 * there only while the directory is still the one made here (mkdtemp:
 * 0700, the user's), which the library checks at each write (see
 * shim/sink/snapshot_summary.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "output_path.h"
#include "report.h"

/* "" when it could not be made; short enough for any name in it. */
static char dir[PATH_MAX - 64];

const char *gt_cli_private_dir(void)
{
    return dir;
}

/* The summary's path for pid. */
static void summary_file(char path[PATH_MAX], const char *pid)
{
    snprintf(path, PATH_MAX, "%s/summary.%s.txt", dir, pid);
}

void gt_cli_snapshots_begin(const gt_config *cfg)
{
    dir[0] = '\0';
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !tmp[0]) tmp = "/tmp";
    char path[PATH_MAX];
    /* Without it the child's summaries go to the log at its exit, and a
     * signal's end after a snapshot goes unsaid. */
    if (snprintf(dir, sizeof dir, "%s/gputrace.XXXXXX", tmp) >= (int)sizeof dir || !mkdtemp(dir)) {
        dir[0] = '\0';
        return;
    }
    /* Absolute: the child may change directory. */
    if (!realpath(dir, path) || strlen(path) >= sizeof dir) {
        rmdir(dir);
        dir[0] = '\0';
        return;
    }
    strcpy(dir, path);
    if (!cfg->interval_ns) return;
    /* A template the library expands: a % in the directory's name (one
     * TMPDIR may hold) stays itself. */
    if (gt_output_anchor("summary.%p.txt", dir, path, sizeof path) == 0)
        setenv(GT_SNAPSHOT_SUMMARY_VAR, path, 1);
}

/* The whole file, NUL-terminated (its length in *len); NULL when none.
 * Only a regular file of the user's, not through a link: what is written
 * back in its place must be the report, not a file someone pointed to. */
static char *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return NULL;
    struct stat st;
    bool own = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid();
    char *buf = own && st.st_size >= 0 ? malloc((size_t)st.st_size + 1) : NULL;
    size_t n = 0;
    while (buf && n < (size_t)st.st_size) {
        ssize_t got = read(fd, buf + n, (size_t)st.st_size - n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        n += (size_t)got;
    }
    close(fd);
    if (buf) buf[n] = '\0';
    *len = n;
    return buf;
}

typedef struct text {
    const char *s;
    size_t len;
} text;

static int write_text(FILE *out, void *arg)
{
    const text *t = arg;
    return fwrite(t->s, 1, t->len, out) == t->len ? 0 : -1;
}

typedef char *(*finisher)(const char *in, size_t len, int pid, int sig, size_t *out_len);

/* Rewrites the file at path with `finish` (atomically); 1 when done. */
static int finish_file(const char *path, finisher finish, int pid, int sig)
{
    size_t len = 0, out_len = 0;
    char *in = read_all(path, &len);
    char *out = in ? finish(in, len, pid, sig, &out_len) : NULL;
    char why[PATH_MAX + 128];
    int done = 0;
    if (out) {
        text t = {out, out_len};
        done = gt_output_write(path, write_text, &t, why, sizeof why) == 0;
        if (!done) gt_cli_error("cannot finish the report: %s", why);
    }
    free(in);
    free(out);
    return done;
}

static const char *env_value(const char *name)
{
    return getenv(name);
}

static void finish_report_files(const gt_config *cfg, int pid, int sig)
{
    char host[256] = "", base[PATH_MAX], path[PATH_MAX];
    gethostname(host, sizeof host - 1);
    if (!cfg->output[0] ||
        gt_output_expand(cfg->output, pid, host, env_value, base, sizeof base) != 0)
        return;
    if ((cfg->formats & GT_FMT_BIT(GT_OUTPUT_JSON)) &&
        gt_output_file_name(base, GT_OUTPUT_JSON, path, sizeof path) == 0)
        finish_file(path, gt_snapshot_json_finish, pid, sig);
    if ((cfg->formats & GT_FMT_BIT(GT_OUTPUT_TEXT)) &&
        gt_output_file_name(base, GT_OUTPUT_TEXT, path, sizeof path) == 0)
        finish_file(path, gt_snapshot_text_finish, pid, sig);
}

/* The summary of the last snapshot, with the line that says how it ended. */
static void print_summary(int pid, int sig)
{
    char path[PATH_MAX], id[16];
    snprintf(id, sizeof id, "%d", pid);
    summary_file(path, id);
    size_t len = 0, out_len = 0;
    char *in = read_all(path, &len);
    char *out = in ? gt_snapshot_text_finish(in, len, pid, sig, &out_len) : NULL;
    if (out) gt_log_write(out, out_len);
    free(in);
    free(out);
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        unlinkat(dirfd(d), e->d_name, 0);
    }
    if (d) closedir(d);
    rmdir(dir);
}

void gt_cli_snapshots_end(const gt_config *cfg, pid_t pid, int status)
{
    if (!dir[0]) return;
    if (cfg->interval_ns && pid > 0 && WIFSIGNALED(status)) {
        /* Only a child that died after a snapshot, with no report of its
         * own, left its summary here (shim/sink/snapshot_summary.c). */
        char path[PATH_MAX], id[16];
        snprintf(id, sizeof id, "%d", (int)pid);
        summary_file(path, id);
        if (access(path, F_OK) == 0) {
            finish_report_files(cfg, (int)pid, WTERMSIG(status));
            if (cfg->verbosity != GT_VERB_NONE) print_summary((int)pid, WTERMSIG(status));
        }
    }
    remove_dir();
}
