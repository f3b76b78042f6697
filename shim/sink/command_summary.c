/* The final summary of the process the gputrace command started, for the
 * command to print once that process has ended.
 *
 * The library's last exit point comes before the C library flushes the
 * program's stdio buffers, so a summary written there came before the
 * output the program still held: with `prog 2>&1 | head -c 10` the summary
 * filled the pipe, `head` left, and the program's own flush then died of
 * SIGPIPE (init.c flushes standard output first where it can; see there).
 * Under the command nothing is left to chance: it names, in
 * GT_CHILD_SUMMARY_VAR, a file for the summary of the one process it
 * started (that pid: not the processes that one starts, whose summaries go
 * to the log), whose final report puts the summary there; the command
 * prints it after the process has ended, after everything it wrote. */
#include "config.h"
#include "emit.h"
#include "log.h"
#include "output_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safe_file.h"

static char path[GT_PATH_MAX]; /* set at load */
static int owner;              /* the pid whose summary goes there */

void gt_command_summary_init(const char *value)
{
    path[0] = '\0';
    owner = 0;
    if (!value) return;
    char *end;
    long pid = strtol(value, &end, 10);
    if (pid <= 0 || pid > 0x7fffffff || *end != ':' || end[1] != '/' ||
        strlen(end + 1) >= sizeof path)
        return;
    strcpy(path, end + 1);
    owner = (int)pid;
}

int gt_command_summary_asked(int pid)
{
    return path[0] && pid == owner;
}

int gt_command_summary_write(const gt_report *r, const gt_process_info *p, const char *trailer)
{
    if (!gt_command_summary_asked(p->pid)) return -1;
    char why[GT_PATH_MAX + 128];
    if (gt_summary_file_write(path, r, p, trailer, why, sizeof why) == 0) return 0;
    gt_debug("the summary for the gputrace command: %s", why);
    return -1;
}

void gt_command_note_cuda(void)
{
    /* Every process under the command has the variable, whatever its pid;
     * the directory is used only while it is the command's (safe_file.h). */
    const char *slash = strrchr(path, '/');
    char dir_path[GT_PATH_MAX];
    if (!path[0] || !slash || slash == path) return;
    int saved_errno = errno;
    memcpy(dir_path, path, (size_t)(slash - path));
    dir_path[slash - path] = '\0';
    const char *why = "";
    int dir = gt_file_open_private_dir(dir_path, &why);
    if (dir >= 0) {
        int fd = openat(dir, GT_CUDA_MARK_NAME,
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, GT_FILE_PRIVATE_MODE);
        if (fd >= 0) close(fd);
        close(dir);
    }
    errno = saved_errno;
}
