/* How a traced program ends, on the driver API (the emulated driver, or a
 * GPU): the ways out of a process the report must survive, each a mode.
 *
 *   exitpath_prog signal              8 threads launching `tick` without end
 *                                     and one `hold` kernel pending; prints
 *                                     "ready" and waits for SIGINT/SIGTERM
 *   exitpath_prog return-pending      a `hold` kernel still running when main
 *                                     returns
 *   exitpath_prog late THREADS        THREADS threads launching `tick` until
 *                                     the process ends; an atexit handler
 *                                     registered before CUDA's first use (so
 *                                     it runs after the tracer's exit work)
 *                                     stops them and prints "launches N"
 *   exitpath_prog exec VARIANT PATH   N launches, then the exec VARIANT
 *                                     (execve execv execvp execvpe execl
 *                                     execlp execle fexecve) of PATH with the
 *                                     arguments after it; when it fails,
 *                                     prints "exec failed: rc R errno E" and
 *                                     launches M more
 *   exitpath_prog _exit | _Exit       N launches, then _exit(5) / _Exit(5)
 *   exitpath_prog vfork PATH...       N launches, a vfork child that execs
 *                                     PATH (or _exits 127), M more launches
 *   exitpath_prog vfork-exit          the same with a child that only _exits
 *   exitpath_prog spawn PATH...       N launches, posix_spawn of PATH, M more
 *   exitpath_prog memory              allocations that end every way there is
 *                                     (see memory_endings)
 *   exitpath_prog primary-reset       an allocation in the primary context,
 *                                     which an atexit handler resets
 *
 * N and M are LAUNCHES_BEFORE and LAUNCHES_AFTER; the program prints
 * "launches N" for what it launched in all. Kernel durations come from
 * GPUTRACE_EMU_KERNEL_NS (tick, hold), set by check_exitpath.py. */
#define _GNU_SOURCE /* execvpe */
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app_driver.h"
#include "app_util.h"

#define LAUNCHERS 8
#define LAUNCHES_BEFORE 40
#define LAUNCHES_AFTER 25
#define MIB (1024ull * 1024)

extern char **environ;

static const char ptx[] = ".version 8.0\n"
                          ".target sm_90\n"
                          ".address_size 64\n"
                          ".visible .entry tick()\n{\n\tret;\n}\n"
                          ".visible .entry hold()\n{\n\tret;\n}\n";

static CUcontext ctx;
static CUfunction tick, hold;
static _Atomic int stop;               /* relaxed: a flag the launchers poll */
static _Atomic unsigned long launched; /* relaxed: summed once they stopped */
static pthread_t launchers[64];
static int n_launchers;
/* Every launcher set up before any launches: whatever the tracer cannot
 * store or report is then a launch, which the program counts. */
static pthread_barrier_t set_up;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A line on stdout at once, whatever buffering stdio has. */
static void say(const char *fmt, ...)
{
    char line[128];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (len > 0 && write(STDOUT_FILENO, line, (size_t)len) < 0) app_wrong("write");
}

static void say_launched(void)
{
    say("launches %lu\n", atomic_load_explicit(&launched, memory_order_relaxed));
}

static void start_cuda(void)
{
    CUmodule module;
    ctx = app_primary_context();
    app_check(cuModuleLoadData(&module, ptx), "cuModuleLoadData");
    app_check(cuModuleGetFunction(&tick, module, "tick"), "cuModuleGetFunction(tick)");
    app_check(cuModuleGetFunction(&hold, module, "hold"), "cuModuleGetFunction(hold)");
}

static void launch(CUfunction f, CUstream s)
{
    app_check(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL), "cuLaunchKernel");
    atomic_fetch_add_explicit(&launched, 1, memory_order_relaxed);
}

static void launch_ticks(int n)
{
    for (int i = 0; i < n; i++)
        launch(tick, NULL);
}

/* ---------------------------------------------------------------- launchers */

static void *launcher(void *arg)
{
    (void)arg;
    CUstream s;
    app_check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    app_check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    pthread_barrier_wait(&set_up);
    while (!atomic_load_explicit(&stop, memory_order_relaxed))
        launch(tick, s);
    return NULL;
}

static void start_launchers(int n)
{
    n_launchers = n;
    pthread_barrier_init(&set_up, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        if (pthread_create(&launchers[i], NULL, launcher, NULL) != 0) app_wrong("pthread_create");
    /* Every launcher under way before the program goes on. */
    while (atomic_load_explicit(&launched, memory_order_relaxed) < (unsigned long)n * 1000)
        usleep(1000);
}

/* After the tracer's exit work (registered later, so run earlier): the
 * launchers have run on past the tracer's cut. */
static void stop_and_count(void)
{
    atomic_store_explicit(&stop, 1, memory_order_relaxed);
    for (int i = 0; i < n_launchers; i++)
        pthread_join(launchers[i], NULL);
    say_launched();
}

static __attribute__((noreturn)) int run_signal(void)
{
    start_cuda();
    CUstream s;
    app_check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    launch(hold, s);
    start_launchers(LAUNCHERS);
    say("ready\n");
    for (;;)
        pause();
}

static int run_return_pending(void)
{
    start_cuda();
    CUstream s;
    app_check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    launch_ticks(LAUNCHES_BEFORE);
    launch(hold, s);
    say_launched();
    return 0;
}

static int run_late(int argc, char **argv)
{
    int n = (int)app_arg(argc, argv, 2, "threads", LAUNCHERS, 1);
    if (n > 64) n = 64;
    atexit(stop_and_count);
    start_cuda();
    start_launchers(n);
    return 0;
}

/* ---------------------------------------------------------------- exec */

/* argv for the exec: PATH and what follows it on the command line. */
static int exec_variant(const char *variant, char **args)
{
    const char *path = args[0];
    char *const *av = args;
    if (!strcmp(variant, "execve")) return execve(path, av, environ);
    if (!strcmp(variant, "execv")) return execv(path, av);
    if (!strcmp(variant, "execvp")) return execvp(path, av);
    if (!strcmp(variant, "execvpe")) return execvpe(path, av, environ);
    /* The list forms take the command line's first three words at most. */
    const char *a1 = args[1], *a2 = a1 ? args[2] : NULL;
    if (!strcmp(variant, "execl")) return execl(path, path, a1, a2, (char *)NULL);
    if (!strcmp(variant, "execlp")) return execlp(path, path, a1, a2, (char *)NULL);
    if (!strcmp(variant, "execle")) return execle(path, path, a1, a2, (char *)NULL, environ);
    if (!strcmp(variant, "fexecve")) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return fexecve(-1, av, environ);
        return fexecve(fd, av, environ);
    }
    app_wrong("unknown exec variant");
    return -1;
}

static int run_exec(int argc, char **argv)
{
    if (argc < 4) app_wrong("usage: exec VARIANT PATH [ARGS...]");
    start_cuda();
    launch_ticks(LAUNCHES_BEFORE);
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    errno = 0;
    int rc = exec_variant(argv[2], &argv[3]);
    int e = errno;
    say("exec failed: rc %d errno %d\n", rc, e);
    launch_ticks(LAUNCHES_AFTER);
    say_launched();
    return 0;
}

static int run_exit(const char *how)
{
    start_cuda();
    launch_ticks(LAUNCHES_BEFORE);
    say_launched();
    if (!strcmp(how, "_Exit")) _Exit(5);
    _exit(5);
}

/* ---------------------------------------------------------------- children */

static void finish_parent(pid_t child)
{
    int status = 0;
    if (waitpid(child, &status, 0) != child) app_wrong("waitpid");
    say("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    launch_ticks(LAUNCHES_AFTER);
    say_launched();
}

static int run_vfork(int argc, char **argv, int exec)
{
    if (exec && argc < 3) app_wrong("usage: vfork PATH [ARGS...]");
    start_cuda();
    launch_ticks(LAUNCHES_BEFORE);
    pid_t child = vfork();
    if (child < 0) app_wrong("vfork");
    if (child == 0) {
        if (exec) execv(argv[2], &argv[2]);
        _exit(exec ? 127 : 3);
    }
    finish_parent(child);
    return 0;
}

static int run_spawn(int argc, char **argv)
{
    if (argc < 3) app_wrong("usage: spawn PATH [ARGS...]");
    start_cuda();
    launch_ticks(LAUNCHES_BEFORE);
    pid_t child;
    if (posix_spawn(&child, argv[2], NULL, NULL, &argv[2], environ) != 0) app_wrong("posix_spawn");
    finish_parent(child);
    return 0;
}

/* ---------------------------------------------------------------- memory */

static CUdeviceptr freed_at_exit, freed_in_destructor;
static CUcontext doomed; /* destroyed in the destructor, 3 MiB still in it */

static void free_at_exit(void)
{
    app_check(cuMemFree(freed_at_exit), "cuMemFree(at exit)");
}

/* Runs after every atexit handler, the tracer's included. */
__attribute__((destructor)) static void free_in_destructor(void)
{
    if (freed_in_destructor) app_check(cuMemFree(freed_in_destructor), "cuMemFree(destructor)");
    if (doomed) app_check(cuCtxDestroy(doomed), "cuCtxDestroy");
}

/* Frees p from a C++ static object's destructor (static_holder.cpp). */
void hold_in_static(CUdeviceptr p);

/* On device 0, one row: 1 MiB freed at once; 2 MiB freed by an atexit
 * handler; 4 MiB freed by the program's destructor; 7 MiB by a C++ static
 * object's destructor; 3 MiB (1 + 2) left in a context the destructor
 * destroys; 5 MiB never freed, in the primary context, which nothing
 * releases. */
static int run_memory(void)
{
    CUdeviceptr now, in_doomed[2], kept, in_static;
    /* Registered before the first GPU work, so run after the tracer's
     * exit work. */
    atexit(free_at_exit);
    start_cuda();
    app_check(cuMemAlloc(&now, 1 * MIB), "cuMemAlloc");
    app_check(cuMemAlloc(&freed_at_exit, 2 * MIB), "cuMemAlloc");
    app_check(cuMemAlloc(&freed_in_destructor, 4 * MIB), "cuMemAlloc");
    app_check(cuMemAlloc(&kept, 5 * MIB), "cuMemAlloc");
    app_check(cuMemAlloc(&in_static, 7 * MIB), "cuMemAlloc");
    hold_in_static(in_static);
    CUdevice dev;
    app_check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    app_check(cuCtxCreate(&doomed, NULL, 0, dev), "cuCtxCreate");
    app_check(cuMemAlloc(&in_doomed[0], 1 * MIB), "cuMemAlloc");
    app_check(cuMemAlloc(&in_doomed[1], 2 * MIB), "cuMemAlloc");
    app_check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    app_check(cuMemFree(now), "cuMemFree");
    launch_ticks(LAUNCHES_BEFORE);
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    return 0;
}

static CUdevice reset_dev;

static void reset_primary(void)
{
    app_check(cuDevicePrimaryCtxReset(reset_dev), "cuDevicePrimaryCtxReset");
}

/* 6 MiB in the primary context, reset by an atexit handler. */
static int run_primary_reset(void)
{
    CUdeviceptr p;
    atexit(reset_primary);
    start_cuda();
    app_check(cuCtxGetDevice(&reset_dev), "cuCtxGetDevice");
    app_check(cuMemAlloc(&p, 6 * MIB), "cuMemAlloc");
    launch_ticks(LAUNCHES_BEFORE);
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    return 0;
}

int main(int argc, char **argv)
{
    app_program = "exitpath_prog";
    if (argc < 2) app_wrong("usage: exitpath_prog MODE [ARGS...]");
    const char *mode = argv[1];
    if (!strcmp(mode, "signal")) return run_signal();
    if (!strcmp(mode, "return-pending")) return run_return_pending();
    if (!strcmp(mode, "late")) return run_late(argc, argv);
    if (!strcmp(mode, "exec")) return run_exec(argc, argv);
    if (!strcmp(mode, "_exit") || !strcmp(mode, "_Exit")) return run_exit(mode);
    if (!strcmp(mode, "vfork")) return run_vfork(argc, argv, 1);
    if (!strcmp(mode, "vfork-exit")) return run_vfork(argc, argv, 0);
    if (!strcmp(mode, "spawn")) return run_spawn(argc, argv);
    if (!strcmp(mode, "memory")) return run_memory();
    if (!strcmp(mode, "primary-reset")) return run_primary_reset();
    app_wrong("unknown mode");
    return APP_EXIT_USAGE;
}
