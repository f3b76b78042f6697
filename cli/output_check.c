/* The report files' directory, checked before the program starts: a run
 * of an hour whose files cannot be written is better refused at once than
 * warned about at its end. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "output_path.h"

static const char *env_value(const char *name)
{
    return getenv(name);
}

int gt_cli_check_output_dir(const char *tmpl, int quiet)
{
    const char *slash = strrchr(tmpl, '/');
    char dir_tmpl[PATH_MAX], dir[PATH_MAX], host[256] = "";
    /* A directory named by the program's pid or by the run's number is
     * known only once the program runs. */
    if (!slash || (size_t)(slash - tmpl) >= sizeof dir_tmpl) return 0;
    memcpy(dir_tmpl, tmpl, (size_t)(slash - tmpl));
    dir_tmpl[slash - tmpl] = '\0';
    if (!dir_tmpl[0] || strstr(dir_tmpl, "%p") || strstr(dir_tmpl, "%n")) return 0;
    gethostname(host, sizeof host - 1);
    if (gt_output_expand(dir_tmpl, (int)getpid(), host, env_value, dir, sizeof dir) != 0) return 0;
    struct stat st;
    const char *why = NULL;
    if (stat(dir, &st) != 0)
        why = strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        why = "not a directory";
    else if (access(dir, W_OK | X_OK) != 0)
        why = strerror(errno);
    if (!why) return 0;
    if (!quiet) gt_cli_error("cannot write report files in %s/: %s", dir, why);
    return -1;
}
