/* Host cost of the emulated driver's hot calls, in ns per call:
 *   gtemu_bench [iterations]
 * Run with GPUTRACE_EMU_KERNEL_NS=*=0 so that no launch waits for the
 * launch queue. Not a test: the numbers depend on the machine. */
#include <cuda.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry k()\n{\n ret;\n}\n";

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define MEASURE(label, n, call)                                                   \
    do {                                                                          \
        double t0_ = now_ns();                                                    \
        for (long i_ = 0; i_ < (n); i_++)                                         \
            call;                                                                 \
        printf("%-40s %8.1f ns\n", label, (now_ns() - t0_) / (double)(n));       \
    } while (0)

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUstream s, nb;
    CUevent ev;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) ||
        cuModuleLoadData(&mod, ptx) || cuModuleGetFunction(&f, mod, "k") ||
        cuStreamCreate(&s, 0) || cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING) ||
        cuEventCreate(&ev, 0)) {
        fprintf(stderr, "gtemu_bench: setup failed\n");
        return 1;
    }
    MEASURE("cuLaunchKernel, blocking stream", n,
            cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    MEASURE("cuLaunchKernel, non-blocking stream", n,
            cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nb, NULL, NULL));
    MEASURE("cuLaunchKernel, legacy stream", n,
            cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    MEASURE("cuEventRecord", n, cuEventRecord(ev, s));
    MEASURE("cuEventRecord + cuLaunchKernel + cuEventRecord", n / 3, {
        cuEventRecord(ev, s);
        cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
        cuEventRecord(ev, s);
    });
    MEASURE("cuEventQuery", n, cuEventQuery(ev));
    MEASURE("cuStreamSynchronize (idle)", n / 10, cuStreamSynchronize(s));
    void *pfn;
    MEASURE("cuGetProcAddress", n / 10, cuGetProcAddress("cuLaunchKernel", &pfn, 12000, 0, NULL));
    cuCtxSynchronize();
    return 0;
}
