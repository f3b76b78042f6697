/* The profiler control API (cudaProfiler.h): accepted, it has nothing to
 * start or stop here. */
#include "emu.h"

CUresult CUDAAPI cuProfilerInitialize(const char *configFile, const char *outputFile,
                                      CUoutput_mode outputMode)
{
    (void)configFile;
    (void)outputFile;
    (void)outputMode;
    return CUDA_ERROR_NOT_SUPPORTED; /* removed from current drivers */
}

CUresult CUDAAPI cuProfilerStart(void)
{
    struct gt_context *ctx;
    return gt_ctx_require(&ctx);
}

CUresult CUDAAPI cuProfilerStop(void)
{
    struct gt_context *ctx;
    return gt_ctx_require(&ctx);
}
