/* Kernel launches: the configuration is checked against the device's
 * limits, then the kernel occupies its simulated duration on the stream.
 * No device code runs. */
#include "emu_module.h"
#include "emu_stream.h"
#include "emu_trace.h"

#define GT_MAX_BLOCK_THREADS 1024u
#define GT_MAX_BLOCK_Z 64u
#define GT_MAX_GRID_X 2147483647u
#define GT_MAX_GRID_YZ 65535u
#define GT_SM_COUNT 132u
#define GT_MAX_SM_THREADS 2048u
#define GT_MAX_SM_BLOCKS 32u

struct launch {
    CUfunction f;
    unsigned grid[3], block[3];
    unsigned smem;
    CUstream stream;
    void **params, **extra;
    bool per_thread;
    bool cooperative;
};

static CUresult check_config(const struct launch *l, const struct gt_function *f)
{
    for (int i = 0; i < 3; i++)
        if (l->grid[i] == 0 || l->block[i] == 0) return CUDA_ERROR_INVALID_VALUE;
    unsigned long long threads = (unsigned long long)l->block[0] * l->block[1] * l->block[2];
    if (l->block[0] > GT_MAX_BLOCK_THREADS || l->block[1] > GT_MAX_BLOCK_THREADS ||
        l->block[2] > GT_MAX_BLOCK_Z || threads > GT_MAX_BLOCK_THREADS ||
        threads > (unsigned)f->attrs[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK])
        return CUDA_ERROR_INVALID_VALUE;
    if (l->grid[0] > GT_MAX_GRID_X || l->grid[1] > GT_MAX_GRID_YZ || l->grid[2] > GT_MAX_GRID_YZ)
        return CUDA_ERROR_INVALID_VALUE;
    if (l->smem > (unsigned)f->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES])
        return CUDA_ERROR_INVALID_VALUE;
    if (l->params && l->extra) return CUDA_ERROR_INVALID_VALUE;
    if (l->cooperative) {
        unsigned long long per_sm = GT_MAX_SM_THREADS / threads;
        if (per_sm > GT_MAX_SM_BLOCKS) per_sm = GT_MAX_SM_BLOCKS;
        unsigned long long blocks = (unsigned long long)l->grid[0] * l->grid[1] * l->grid[2];
        if (blocks > per_sm * GT_SM_COUNT) return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    }
    return CUDA_SUCCESS;
}

static CUresult launch(const struct launch *l)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(l->stream, l->per_thread, &s);
    if (r != CUDA_SUCCESS) return r;
    struct gt_function *f;
    r = gt_launch_function(l->f, s->ctx, &f);
    if (r == CUDA_SUCCESS) r = check_config(l, f);
    if (r == CUDA_SUCCESS) r = gt_capture_check_legacy(s);
    if (r != CUDA_SUCCESS) return r;
    if (gt_stream_capture(s)) {
        struct gt_node_params p = {.kind = GT_NODE_KERNEL, .ns = f->ns};
        p.u.kernel.fn = f;
        gt_trace_kernel_template(&p.work, f, l->grid, l->block, l->smem, l->cooperative);
        return gt_capture_add(s, &p);
    }
    struct gt_done done;
    gt_stream_submit(s, f->ns, NULL, false, &done);
    gt_count(&gt_counters.launches);
    if (gt_trace_attached()) {
        struct gtemu_work w;
        gt_trace_kernel_template(&w, f, l->grid, l->block, l->smem, l->cooperative);
        gt_trace_work_at(&w, s, done.start, done.end);
        gt_trace_work(&w);
    }
    return CUDA_SUCCESS;
}

static CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned smem, CUstream stream,
                              void **params, void **extra, bool per_thread, bool cooperative)
{
    struct launch l = {.f = f,
                       .grid = {gx, gy, gz},
                       .block = {bx, by, bz},
                       .smem = smem,
                       .stream = stream,
                       .params = params,
                       .extra = extra,
                       .per_thread = per_thread,
                       .cooperative = cooperative};
    return launch(&l);
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
                                void **extra)
{
    GT_API_ENTER_LAUNCH(cuLaunchKernel, f, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                        blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
    return GT_API_EXIT(launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                     blockDimZ, sharedMemBytes, hStream, kernelParams, extra, false,
                                     false));
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX,
                                     unsigned int blockDimY, unsigned int blockDimZ,
                                     unsigned int sharedMemBytes, CUstream hStream,
                                     void **kernelParams, void **extra)
{
    GT_API_ENTER_LAUNCH(cuLaunchKernel_ptsz, f, f, gridDimX, gridDimY, gridDimZ, blockDimX,
                        blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
    return GT_API_EXIT(launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                     blockDimZ, sharedMemBytes, hStream, kernelParams, extra, true,
                                     false));
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                           unsigned int gridDimY, unsigned int gridDimZ,
                                           unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes,
                                           CUstream hStream, void **kernelParams)
{
    GT_API_ENTER_LAUNCH(cuLaunchCooperativeKernel, f, f, gridDimX, gridDimY, gridDimZ, blockDimX,
                        blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams);
    return GT_API_EXIT(launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                     blockDimZ, sharedMemBytes, hStream, kernelParams, NULL, false,
                                     true));
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                                unsigned int gridDimY, unsigned int gridDimZ,
                                                unsigned int blockDimX, unsigned int blockDimY,
                                                unsigned int blockDimZ, unsigned int sharedMemBytes,
                                                CUstream hStream, void **kernelParams)
{
    GT_API_ENTER_LAUNCH(cuLaunchCooperativeKernel_ptsz, f, f, gridDimX, gridDimY, gridDimZ,
                        blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams);
    return GT_API_EXIT(launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                     blockDimZ, sharedMemBytes, hStream, kernelParams, NULL, true,
                                     true));
}

static CUresult launch_ex(const CUlaunchConfig *config, CUfunction f, void **params, void **extra,
                          bool per_thread)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!config || (config->numAttrs && !config->attrs)) return CUDA_ERROR_INVALID_VALUE;
    bool cooperative = false;
    for (unsigned i = 0; i < config->numAttrs; i++)
        if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
            cooperative = config->attrs[i].value.cooperative != 0;
    return launch_kernel(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                         config->blockDimY, config->blockDimZ, config->sharedMemBytes,
                         config->hStream, params, extra, per_thread, cooperative);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                  void **extra)
{
    GT_API_ENTER_LAUNCH(cuLaunchKernelEx, f, config, f, kernelParams, extra);
    return GT_API_EXIT(launch_ex(config, f, kernelParams, extra, false));
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                       void **kernelParams, void **extra)
{
    GT_API_ENTER_LAUNCH(cuLaunchKernelEx_ptsz, f, config, f, kernelParams, extra);
    return GT_API_EXIT(launch_ex(config, f, kernelParams, extra, true));
}
