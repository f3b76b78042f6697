/* What the benchmarks that launch on the emulated driver share: a
 * zero-duration kernel (GPUTRACE_EMU_KERNEL_NS=k_zero=0), a clock, and the
 * driver set-up that gets a launchable function on a stream. */
#ifndef GT_BENCH_EMU_H
#define GT_BENCH_EMU_H

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char bench_module_ptx[] = ".version 8.0\n"
                                       ".target sm_90\n"
                                       ".address_size 64\n"
                                       ".visible .entry k_zero()\n{\n ret;\n}\n";

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 0, or -1 after "<program>: <what> failed (<code>)" on stderr. */
static inline int bench_check(const char *program, CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS) return 0;
    fprintf(stderr, "%s: %s failed (%d)\n", program, what, (int)r);
    return -1;
}

/* k_zero loaded in device 0's primary context, current, and a
 * non-blocking stream: 0, or -1 after a line on stderr. */
static inline int bench_driver_setup(const char *program, CUfunction *f, CUstream *s)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    return bench_check(program, cuInit(0), "cuInit") ||
                   bench_check(program, cuDeviceGet(&dev, 0), "cuDeviceGet") ||
                   bench_check(program, cuDevicePrimaryCtxRetain(&ctx, dev),
                               "cuDevicePrimaryCtxRetain") ||
                   bench_check(program, cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
                   bench_check(program, cuModuleLoadData(&mod, bench_module_ptx),
                               "cuModuleLoadData") ||
                   bench_check(program, cuModuleGetFunction(f, mod, "k_zero"),
                               "cuModuleGetFunction") ||
                   bench_check(program, cuStreamCreate(s, CU_STREAM_NON_BLOCKING), "cuStreamCreate")
               ? -1
               : 0;
}

/* Forks a child of the benchmark: in it (0 returned) its stdout is the
 * pipe, `marker` is set in its environment and k_zero takes no time; in
 * the parent the child's pid, and *in reads what it prints. -1 when it
 * cannot be made. */
static inline pid_t bench_fork_child(const char *marker, FILE **in)
{
    int fd[2];
    if (pipe(fd) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], STDOUT_FILENO);
        setenv(marker, "1", 1);
        setenv("GPUTRACE_EMU_KERNEL_NS", "k_zero=0", 1);
        return 0;
    }
    close(fd[1]);
    *in = fdopen(fd[0], "r");
    if (!*in) close(fd[0]);
    return pid;
}

#endif
