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

static volatile sig_atomic_t child_pid;
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_FORWARDED (sizeof forwarded / sizeof forwarded[0])
static bool installed[N_FORWARDED];

/* A signal sent to gputrace goes on to the program. One the terminal
 * sent (Ctrl-C, Ctrl-\, a hang-up) already reached the program, which is
 * in the same process group: it is not sent twice. */
static void forward(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    if (child_pid > 0 && info->si_code != SI_KERNEL) kill((pid_t)child_pid, sig);
}

/* Installed before the fork with the signals blocked, so that one sent
 * while the program starts is held, then forwarded once its pid is known. */
static void install_forwarding(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_FORWARDED; i++) {
        struct sigaction old;
        /* A signal gputrace was started ignoring stays ignored (nohup). */
        if (sigaction(forwarded[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        installed[i] = sigaction(forwarded[i], &sa, NULL) == 0;
    }
}

/* Child: the dispositions and mask gputrace was started with, then exec;
 * or errno into the pipe (closed by a successful exec). */
static void exec_child(char *const argv[], int report_fd, const sigset_t *mask)
{
    for (size_t i = 0; i < N_FORWARDED; i++)
        if (installed[i]) signal(forwarded[i], SIG_DFL);
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvp(argv[0], argv);
    int err = errno;
    ssize_t unused = write(report_fd, &err, sizeof err);
    (void)unused;
    _exit(127);
}

static int wait_child(pid_t pid, int *out)
{
    int status = 0;
    *out = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            gt_cli_error("waiting for the program: %s", strerror(errno));
            return GT_CLI_USAGE_ERROR;
        }
    *out = status;
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
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
    sigset_t block, old_mask;
    sigemptyset(&block);
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaddset(&block, forwarded[i]);
    sigprocmask(SIG_BLOCK, &block, &old_mask);
    install_forwarding();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        exec_child(argv, fds[1], &old_mask);
    }
    int fork_error = errno;
    child_pid = pid;
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
    int status = wait_child(pid, child_status);
    *child = pid;
    if (n == (ssize_t)sizeof err) {
        char shown[GT_CLI_SHOWN_SIZE];
        gt_cli_error("cannot run %s: %s", gt_cli_shown(shown, sizeof shown, argv[0]),
                     strerror(err));
        return GT_CLI_USAGE_ERROR;
    }
    return status;
}
