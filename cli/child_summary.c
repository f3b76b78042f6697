/* The final summary of the program the command started, printed by the
 * command once the program has ended: after everything the program wrote,
 * its stdio buffers flushed at its exit included, and before the command
 * ends as the program did (a summary written by the program itself came
 * first, and a reader that stopped at it made the program's own flush die
 * of SIGPIPE). The child, before its exec, names in GT_CHILD_SUMMARY_VAR
 * the file in the command's private directory (snapshot_finish.c) where
 * the library leaves that process's summary (shim/sink/command_summary.c);
 * processes it starts print their own. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"

static void summary_file(char path[PATH_MAX], pid_t pid)
{
    snprintf(path, PATH_MAX, "%s/final.%d.txt", gt_cli_private_dir(), (int)pid);
}

void gt_cli_child_summary_name(void)
{
    if (!gt_cli_private_dir()[0]) return;
    pid_t self = getpid();
    char path[PATH_MAX], value[PATH_MAX + 16];
    summary_file(path, self);
    snprintf(value, sizeof value, "%d:%s", (int)self, path);
    setenv(GT_CHILD_SUMMARY_VAR, value, 1);
}

void gt_cli_child_summary_print(pid_t pid)
{
    if (pid <= 0 || !gt_cli_private_dir()[0]) return;
    char path[PATH_MAX], buf[65536];
    summary_file(path, pid);
    /* Only the user's own regular file, not through a link. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        close(fd);
        return;
    }
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        gt_log_write(buf, (size_t)n);
    }
    close(fd);
    unlink(path);
}

void gt_cli_say_if_no_cuda(const char *program, pid_t pid)
{
    if (pid <= 0 || !gt_cli_private_dir()[0]) return;
    char mark[PATH_MAX];
    struct stat st;
    snprintf(mark, sizeof mark, "%s/%s", gt_cli_private_dir(), GT_CUDA_MARK_NAME);
    if (lstat(mark, &st) == 0) return;
    const char *slash = strrchr(program, '/');
    gt_cli_error("%s (pid %d) made no CUDA calls; nothing recorded", slash ? slash + 1 : program,
                 (int)pid);
}
