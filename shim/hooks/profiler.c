/* The profiler control API: with GPUTRACE_CAPTURE=profiler-api a start
 * opens the capture window and a stop closes it (capture.h). The window
 * opens before a start call and closes after a stop call returns, so both
 * calls are recorded inside it (in `api`); it opens and closes whatever
 * the calls return, as the program meant it to. A runtime start and the
 * driver start under it open it twice, which changes nothing; under a
 * runtime stop the runtime wrapper closes it, after its own record. */
#include <cuda_profiler_api.h>
#include <cudaProfiler.h>

#include "hook.h"

/* errno stays the program's. */
static void profiler(int on)
{
    int saved = errno;
    gt_capture_profiler(on);
    errno = saved;
}

#define PASSES(sym) (!(gt_hook_mode(&GT_HOOK(sym)) & gt_capture_mask()) || gt_tls.guard)

GT_DRIVER_HOOK(cuProfilerStart, cuProfilerStart, GT_CAT_API)
GT_EXPORT CUresult CUDAAPI cuProfilerStart(void)
{
    GT_ENTER_ANY(cuProfilerStart, CUDA_ERROR_NOT_FOUND, ());
    profiler(1);
    if (PASSES(cuProfilerStart)) return real_();
    gt_call c;
    gt_call_init(&c, &GT_HOOK(cuProfilerStart), GT_EV_API);
    GT_DRIVER_CALL(&c, ());
}

GT_DRIVER_HOOK(cuProfilerStop, cuProfilerStop, GT_CAT_API)
GT_EXPORT CUresult CUDAAPI cuProfilerStop(void)
{
    GT_ENTER_ANY(cuProfilerStop, CUDA_ERROR_NOT_FOUND, ());
    int closes = !gt_rt_current;
    if (PASSES(cuProfilerStop)) {
        CUresult r = real_();
        if (closes) profiler(0);
        return r;
    }
    gt_call c;
    gt_call_init(&c, &GT_HOOK(cuProfilerStop), GT_EV_API);
    gt_driver_before(&c);
    CUresult r = real_();
    gt_driver_after(&c, r);
    if (closes) profiler(0);
    return r;
}

GT_RUNTIME_HOOK(cudaProfilerStart, cudaProfilerStart, GT_CAT_API)
GT_EXPORT cudaError_t CUDARTAPI cudaProfilerStart(void)
{
    GT_ENTER_ANY(cudaProfilerStart, cudaErrorSymbolNotFound, ());
    profiler(1);
    if (PASSES(cudaProfilerStart) || gt_rt_current) return real_();
    gt_call c;
    gt_call_init(&c, &GT_HOOK(cudaProfilerStart), GT_EV_API);
    GT_RUNTIME_CALL(&c, ());
}

GT_RUNTIME_HOOK(cudaProfilerStop, cudaProfilerStop, GT_CAT_API)
GT_EXPORT cudaError_t CUDARTAPI cudaProfilerStop(void)
{
    GT_ENTER_ANY(cudaProfilerStop, cudaErrorSymbolNotFound, ());
    if (PASSES(cudaProfilerStop) || gt_rt_current) {
        cudaError_t r = real_();
        profiler(0);
        return r;
    }
    gt_call c;
    gt_call_init(&c, &GT_HOOK(cudaProfilerStop), GT_EV_API);
    gt_rt_detail d;
    gt_runtime_before(&c, &d);
    cudaError_t r = real_();
    gt_runtime_after(&c, &d, r);
    profiler(0);
    return r;
}
