/* Finding the shim, preparing the environment, running the program. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "utf8.h"

#define LIBRARY_NAME "libgputrace.so"

void gt_cli_error(const char *fmt, ...)
{
    char *text = NULL, *safe = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    /* Messages quote file names and what a report holds (its host name in
     * a path): made safe on a terminal as the summary's names are. */
    if (n >= 0 && (safe = malloc((size_t)n * 3 + 1)) != NULL)
        gt_text_safe_copy(safe, (size_t)n * 3 + 1, text, (size_t)n);
    fprintf(stderr, "gputrace: %s\n", safe ? safe : "(no memory for the message)");
    free(safe);
    if (n >= 0) free(text);
}

static bool is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* realpath of dir + "/" + rel when that is a regular file, else NULL. */
static char *existing(const char *dir, const char *rel)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path) return NULL;
    return is_regular(path) ? realpath(path, NULL) : NULL;
}

char *gt_cli_find_library(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        gt_cli_error("cannot find my own executable (/proc/self/exe): %s", strerror(errno));
        return NULL;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) *slash = '\0';
    char *lib = existing(self, LIBRARY_NAME);
    if (!lib) lib = existing(self, "../lib/" LIBRARY_NAME);
    if (!lib)
        gt_cli_error("cannot find " LIBRARY_NAME " in %s or %s/../lib: is gputrace installed "
                     "whole?",
                     self, self);
    return lib;
}

/* Whether the colon- or space-separated list holds item. */
static bool list_has(const char *list, const char *item)
{
    size_t len = strlen(item);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ": ");
        if (n == len && strncmp(p, item, len) == 0) return true;
        p += n;
        p += strspn(p, ": ");
    }
    return false;
}

int gt_cli_set_preload(const char *lib, const char *runtime, int no_nvtx)
{
    if (strpbrk(lib, ": ")) {
        gt_cli_error("cannot preload '%s': LD_PRELOAD cannot hold a path with a colon or a space",
                     lib);
        return -1;
    }
    const char *old = getenv("LD_PRELOAD");
    if (!old) old = "";
    /* The sanitizer runtime first, then the library (unless the list has
     * it already), then what was there. */
    const char *mine = list_has(old, lib) ? "" : lib;
    const char *first = runtime ? runtime : "";
    char *list = NULL;
    if (asprintf(&list, "%s%s%s%s%s", first, first[0] && (mine[0] || old[0]) ? ":" : "", mine,
                 mine[0] && old[0] ? ":" : "", old) < 0) {
        gt_cli_error("out of memory");
        return -1;
    }
    if (list[0]) setenv("LD_PRELOAD", list, 1);
    free(list);
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if (!no_nvtx && (!nvtx || !nvtx[0])) setenv("NVTX_INJECTION64_PATH", lib, 1);
    return 0;
}

const char *gt_cli_shown(char *buf, size_t size, const char *value)
{
    gt_escape(buf, size, value, strlen(value), GT_SHOWN_VALUE_MAX);
    return buf;
}

static char *check_file(const char *program, const char *path)
{
    struct stat st;
    char shown[GT_CLI_SHOWN_SIZE];
    gt_cli_shown(shown, sizeof shown, program);
    if (stat(path, &st) != 0) {
        gt_cli_error("%s: %s", shown, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        gt_cli_error("%s: not a program (%s)", shown,
                     S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
        return NULL;
    }
    if (access(path, X_OK) != 0) {
        gt_cli_error("%s: %s", shown, strerror(errno));
        return NULL;
    }
    char *copy = strdup(path);
    if (!copy) gt_cli_error("out of memory");
    return copy;
}

char *gt_cli_find_program(const char *program)
{
    if (!program[0]) {
        gt_cli_error("no program given (see gputrace --help)");
        return NULL;
    }
    if (strchr(program, '/')) return check_file(program, program);
    const char *path = getenv("PATH");
    if (!path || !path[0]) path = "/usr/local/bin:/usr/bin:/bin";
    bool denied = false;
    for (const char *p = path;; p++) {
        size_t n = strcspn(p, ":");
        char full[PATH_MAX];
        /* an empty entry is the current directory */
        int len = n ? snprintf(full, sizeof full, "%.*s/%s", (int)n, p, program)
                    : snprintf(full, sizeof full, "./%s", program);
        if (len > 0 && (size_t)len < sizeof full && is_regular(full)) {
            if (access(full, X_OK) == 0) return check_file(program, full);
            denied = true;
        }
        p += n;
        if (!*p) break;
    }
    char shown[GT_CLI_SHOWN_SIZE];
    gt_cli_error("%s: %s", gt_cli_shown(shown, sizeof shown, program),
                 denied ? strerror(EACCES) : "command not found");
    return NULL;
}

/* Child: the dispositions gputrace was started with, its death signal,
 * where its summary goes, the mask gputrace was started with, then exec;
 * or errno into the pipe (closed by a successful exec). */
static void exec_child(char *const argv[], int report_fd, const sigset_t *mask, pid_t parent)
{
    if (gt_cli_relay_child(parent) != 0) _exit(127);
    gt_cli_child_summary_name();
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvp(argv[0], argv);
    int err = errno;
    ssize_t unused = write(report_fd, &err, sizeof err);
    (void)unused;
    _exit(127);
}

int gt_cli_run(char *const argv[], pid_t *child, int *child_status)
{
    *child = -1;
    *child_status = 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        char shown[GT_CLI_SHOWN_SIZE];
        gt_cli_error("cannot start %s: %s", gt_cli_shown(shown, sizeof shown, argv[0]),
                     strerror(errno));
        return GT_CLI_USAGE_ERROR;
    }
    /* Every signal is held from before the handlers are installed until the
     * program's pid is known: one sent meanwhile is passed on then. */
    sigset_t all, old_mask, relayed;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old_mask);
    gt_cli_relay_install(&relayed);
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        exec_child(argv, fds[1], &old_mask, parent);
    }
    int fork_error = errno;
    gt_cli_relay_to(pid);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (pid < 0) {
        char shown[GT_CLI_SHOWN_SIZE];
        gt_cli_error("cannot start %s: %s", gt_cli_shown(shown, sizeof shown, argv[0]),
                     strerror(fork_error));
        return GT_CLI_USAGE_ERROR;
    }
    close(fds[1]);
    int err = 0;
    ssize_t n;
    while ((n = read(fds[0], &err, sizeof err)) < 0 && errno == EINTR)
        ;
    close(fds[0]);
    int status = 0;
    int waited = gt_cli_relay_wait(pid, &status);
    *child = pid;
    *child_status = status;
    if (n == (ssize_t)sizeof err) {
        char shown[GT_CLI_SHOWN_SIZE];
        gt_cli_error("cannot run %s: %s", gt_cli_shown(shown, sizeof shown, argv[0]),
                     strerror(err));
        return GT_CLI_USAGE_ERROR;
    }
    if (waited != 0) return GT_CLI_USAGE_ERROR;
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
