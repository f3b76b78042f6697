/* exec and _exit: a process image that ends without exit() still gets its
 * report.
 *
 * Before an exec (execve, execv, execvp, execvpe, execl, execlp, execle,
 * fexecve) the report of everything so far is made and its files written
 * (gt_exec_report); recording goes on, so when the exec fails the final
 * report covers the whole run, each record once. An exec certain to fail
 * (no such file anywhere the call would look, a directory, a file with no
 * execute bit at all) makes no report before it: the program goes on, and
 * its one report is the final one. Where it might succeed, the report is
 * made: a lost report costs more than one made twice. _exit and _Exit make the
 * final report first, within the same bounds as exit(). glibc's exit()
 * and posix_spawn reach the kernel through glibc's own internal calls,
 * never these exports, so nothing runs twice.
 *
 * A vfork child (and any process made without fork(), e.g. by clone)
 * shares or copies the parent's memory without the shim's fork handler
 * having run: it is not the process the shim records for, so its exec and
 * _exit go straight to the real function, touching nothing of the shim's
 * (in a vfork child, that would be the parent's state). It is told by its
 * pid, asked of the kernel, against the one the shim knows (set at load
 * and by the fork handler in a forked child).
 *
 * The real functions are looked up once at load (the next definition
 * after this copy, glibc's or another interposer's, past any other copy of
 * the library), never in a vfork child.
 * errno and return values are the real function's: the report keeps
 * errno. */
#include "compiler.h"
#include "init.h"
#include "process.h"
#include "intercept.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARGS_MAX 65536 /* arguments an execl* call may pass (more: E2BIG) */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef void (*exit_fn)(int) __attribute__((noreturn));

enum real_fn { R_EXECVE, R_EXECVPE, R_EXECV, R_EXECVP, R_FEXECVE, R_EXIT, R_EXIT_UPPER, R_COUNT };
static const char *const real_names[R_COUNT] = {"execve",  "execvpe", "execv", "execvp",
                                                "fexecve", "_exit",   "_Exit"};
/* Found at load; looked up again only when called before that (another
 * library's constructor). Relaxed: every finder stores the same value. */
static _Atomic(void *) real[R_COUNT];

static void *find(enum real_fn f)
{
    void *fn = atomic_load_explicit(&real[f], memory_order_relaxed);
    if (GT_LIKELY(fn != NULL)) return fn;
    int saved = errno;
    fn = gt_next_symbol(real_names[f]);
    errno = saved;
    atomic_store_explicit(&real[f], fn, memory_order_relaxed);
    return fn;
}

__attribute__((constructor)) static void exec_load(void)
{
    for (int f = 0; f < R_COUNT; f++)
        find((enum real_fn)f);
}

/* Whether an exec of the file with this status might succeed: the kernel
 * runs only regular files with an execute bit (for root too). Permissions
 * beyond that (owner, ACLs, mounts) are left to the exec itself. */
static int may_run(const struct stat *st)
{
    return S_ISREG(st->st_mode) && (st->st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) != 0;
}

static int may_run_path(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && may_run(&st);
}

/* As the C library's p variants look for a name without a slash: each
 * PATH entry (an empty one is the current directory; no PATH: /bin and
 * /usr/bin). */
static int may_run_searched(const char *file)
{
    if (!file || !*file) return 0;
    if (strchr(file, '/')) return may_run_path(file);
    const char *dirs = getenv("PATH");
    if (!dirs) dirs = "/bin:/usr/bin";
    size_t len = strlen(file);
    char candidate[PATH_MAX];
    for (const char *d = dirs;; ) {
        const char *end = strchrnul(d, ':');
        size_t dlen = (size_t)(end - d);
        if (dlen + 1 + len < sizeof candidate) {
            size_t at = 0;
            if (dlen) {
                memcpy(candidate, d, dlen);
                candidate[dlen] = '/';
                at = dlen + 1;
            }
            memcpy(candidate + at, file, len + 1);
            if (may_run_path(candidate)) return 1;
        }
        if (!*end) return 0;
        d = end + 1;
    }
}

/* The report before the image goes, in the process the shim records for,
 * unless the exec cannot succeed. errno kept. */
static void before_exec_file(enum real_fn f, const char *file)
{
    if (!gt_own_process()) return;
    int saved = errno;
    int run = f == R_EXECVP || f == R_EXECVPE ? may_run_searched(file) : may_run_path(file);
    errno = saved;
    if (run) gt_exec_report();
}

/* fexecve's file is open already: its status is asked through it. */
static void before_exec_fd(int fd)
{
    if (!gt_own_process()) return;
    int saved = errno;
    struct stat st;
    int run = fstat(fd, &st) == 0 && may_run(&st);
    errno = saved;
    if (run) gt_exec_report();
}

static int missing(void)
{
    errno = ENOSYS;
    return -1;
}

static int run_execve(enum real_fn f, const char *path, char *const argv[], char *const envp[])
{
    before_exec_file(f, path);
    execve_fn fn = (execve_fn)find(f);
    return fn ? fn(path, argv, envp) : missing();
}

static int run_execv(enum real_fn f, const char *path, char *const argv[])
{
    before_exec_file(f, path);
    execv_fn fn = (execv_fn)find(f);
    return fn ? fn(path, argv) : missing();
}

GT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    return run_execve(R_EXECVE, path, argv, envp);
}

GT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return run_execve(R_EXECVPE, file, argv, envp);
}

GT_EXPORT int execv(const char *path, char *const argv[])
{
    return run_execv(R_EXECV, path, argv);
}

GT_EXPORT int execvp(const char *file, char *const argv[])
{
    return run_execv(R_EXECVP, file, argv);
}

GT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    before_exec_fd(fd);
    fexecve_fn fn = (fexecve_fn)find(R_FEXECVE);
    return fn ? fn(fd, argv, envp) : missing();
}

/* The execl* forms pass their arguments as a list ending in NULL (execle
 * then the environment): counted, then copied into an array on the stack
 * (a vfork child must not allocate), as the C library does. */
static size_t count_args(const char *first, va_list ap)
{
    size_t n = 0;
    for (const char *a = first; a && n <= ARGS_MAX; a = va_arg(ap, const char *))
        n++;
    return n;
}

/* argv[0..n]: the n arguments and the list's NULL; then, with `env`, the
 * environment after it (execle). */
static char *const *fill_args(char **argv, size_t n, const char *first, int env, va_list ap)
{
    argv[0] = (char *)first;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(ap, char *);
    return env ? va_arg(ap, char *const *) : NULL;
}

#define EXEC_LIST(first, argv, env, envp)                                                          \
    va_list ap_;                                                                                   \
    va_start(ap_, first);                                                                          \
    size_t n_ = count_args(first, ap_);                                                            \
    va_end(ap_);                                                                                   \
    if (n_ > ARGS_MAX) {                                                                           \
        errno = E2BIG;                                                                             \
        return -1;                                                                                 \
    }                                                                                              \
    char *argv[n_ + 1];                                                                            \
    va_start(ap_, first);                                                                          \
    char *const *envp = fill_args(argv, n_, first, env, ap_);                                      \
    va_end(ap_)

GT_EXPORT int execl(const char *path, const char *arg, ...)
{
    EXEC_LIST(arg, argv, 0, envp);
    (void)envp;
    return run_execv(R_EXECV, path, argv);
}

GT_EXPORT int execlp(const char *file, const char *arg, ...)
{
    EXEC_LIST(arg, argv, 0, envp);
    (void)envp;
    return run_execv(R_EXECVP, file, argv);
}

GT_EXPORT int execle(const char *path, const char *arg, ...)
{
    EXEC_LIST(arg, argv, 1, envp);
    return run_execve(R_EXECVE, path, argv, envp);
}

/* ------------------------------------------------------------ _exit */

static __attribute__((noreturn)) void end_now(enum real_fn f, int status)
{
    if (gt_own_process()) gt_exit_final();
    exit_fn fn = (exit_fn)find(f);
    if (!fn) fn = (exit_fn)find(R_EXIT);
    if (fn) fn(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

GT_EXPORT void _exit(int status)
{
    end_now(R_EXIT, status);
}

GT_EXPORT void _Exit(int status)
{
    end_now(R_EXIT_UPPER, status);
}
