/* Kernel launches: the <<<>>> glue (__cudaPush/PopCallConfiguration, __cudaLaunchKernel)
 * and cudaLaunchKernel/cudaLaunchKernelExC. Every launch reaches the driver's
 * cuLaunchKernel/cuLaunchKernelEx with a CUkernel and the caller's stream, after the
 * configuration checks the runtime makes itself. */
#include "rt_trace.h"

/* Deep enough for launches nested in the argument expressions of other launches. */
#define CONFIG_STACK_DEPTH 16

struct call_config {
    dim3 grid;
    dim3 block;
    size_t shared_mem;
    cudaStream_t stream;
};

static __thread struct {
    struct call_config stack[CONFIG_STACK_DEPTH];
    unsigned depth;
} configs;

RT_API unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                            struct CUstream_st *stream)
{
    if (configs.depth == CONFIG_STACK_DEPTH) return 1;
    configs.stack[configs.depth++] = (struct call_config){gridDim, blockDim, sharedMem, stream};
    return 0;
}

RT_API cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                              void *stream)
{
    if (configs.depth == 0) return cudaErrorMissingConfiguration;
    const struct call_config *c = &configs.stack[--configs.depth];
    *gridDim = c->grid;
    *blockDim = c->block;
    *sharedMem = c->shared_mem;
    *(cudaStream_t *)stream = c->stream;
    return cudaSuccess;
}

static bool dims_fit(dim3 d, const int max[3])
{
    return d.x != 0 && d.y != 0 && d.z != 0 && d.x <= (unsigned)max[0] && d.y <= (unsigned)max[1] &&
           d.z <= (unsigned)max[2];
}

/* The runtime rejects a configuration the device cannot run before calling the driver. */
static cudaError_t check_configuration(dim3 grid, dim3 block)
{
    const struct rt_launch_limits *limits = gt_rt_launch_limits();
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (!dims_fit(block, limits->max_block) || !dims_fit(grid, limits->max_grid) ||
        threads > (unsigned long long)limits->max_threads_per_block)
        return cudaErrorInvalidConfiguration;
    return cudaSuccess;
}

static cudaError_t launch(CUkernel kernel, dim3 grid, dim3 block, void **args, size_t shared_mem,
                          cudaStream_t stream, enum rt_stream_mode mode)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess && kernel == NULL) err = cudaErrorInvalidDeviceFunction;
    if (err == cudaSuccess) err = check_configuration(grid, block);
    if (err == cudaSuccess)
        err = RT_CALL(gt_rt_drv.launchKernel[mode], (CUfunction)kernel, grid.x, grid.y, grid.z,
                      block.x, block.y, block.z, (unsigned)shared_mem, stream, args, NULL);
    return err;
}

RT_API cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                      size_t sharedMem, cudaStream_t stream)
{
    RT_API_ENTER_LAUNCH(__cudaLaunchKernel, 13000, kernel, kernel, gridDim, blockDim, args,
                        sharedMem, stream);
    return RT_API_EXIT(
        gt_rt_result(launch(kernel, gridDim, blockDim, args, sharedMem, stream, RT_LEGACY)));
}

RT_API cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                           void **args, size_t sharedMem, cudaStream_t stream)
{
    RT_API_ENTER_LAUNCH(__cudaLaunchKernel_ptsz, 13000, kernel, kernel, gridDim, blockDim, args,
                        sharedMem, stream);
    return RT_API_EXIT(
        gt_rt_result(launch(kernel, gridDim, blockDim, args, sharedMem, stream, RT_PER_THREAD)));
}

/* A function that is no registered stub is taken to be a cudaKernel_t, as documented. */
static cudaError_t kernel_of(const void *func, CUkernel *kernel)
{
    if (func == NULL) return cudaErrorInvalidDeviceFunction;
    cudaError_t err = gt_rt_context();
    bool registered = false;
    if (err == cudaSuccess) err = gt_rt_kernel_for_stub(func, kernel, &registered);
    if (err == cudaSuccess && !registered) *kernel = (CUkernel)func;
    return err;
}

static cudaError_t launch_function(const void *func, dim3 grid, dim3 block, void **args,
                                   size_t shared_mem, cudaStream_t stream, enum rt_stream_mode mode)
{
    CUkernel kernel = NULL;
    cudaError_t err = kernel_of(func, &kernel);
    if (err == cudaSuccess) err = launch(kernel, grid, block, args, shared_mem, stream, mode);
    return err;
}

RT_API cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream)
{
    RT_API_ENTER_LAUNCH(cudaLaunchKernel, 7000, func, func, gridDim, blockDim, args, sharedMem,
                        stream);
    return RT_API_EXIT(
        gt_rt_result(launch_function(func, gridDim, blockDim, args, sharedMem, stream, RT_LEGACY)));
}

RT_API cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                         size_t sharedMem, cudaStream_t stream)
{
    RT_API_ENTER_LAUNCH(cudaLaunchKernel_ptsz, 7000, func, func, gridDim, blockDim, args, sharedMem,
                        stream);
    return RT_API_EXIT(gt_rt_result(
        launch_function(func, gridDim, blockDim, args, sharedMem, stream, RT_PER_THREAD)));
}

static cudaError_t launch_ex(const cudaLaunchConfig_t *config, const void *func, void **args,
                             enum rt_stream_mode mode)
{
    _Static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute),
                   "launch attribute layouts agree");
    if (config == NULL) return cudaErrorInvalidValue;
    CUkernel kernel = NULL;
    cudaError_t err = kernel_of(func, &kernel);
    if (err == cudaSuccess) err = check_configuration(config->gridDim, config->blockDim);
    if (err != cudaSuccess) return err;
    CUlaunchConfig cu = {
        .gridDimX = config->gridDim.x,
        .gridDimY = config->gridDim.y,
        .gridDimZ = config->gridDim.z,
        .blockDimX = config->blockDim.x,
        .blockDimY = config->blockDim.y,
        .blockDimZ = config->blockDim.z,
        .sharedMemBytes = (unsigned)config->dynamicSmemBytes,
        .hStream = config->stream,
        .attrs = (CUlaunchAttribute *)config->attrs,
        .numAttrs = config->numAttrs,
    };
    return RT_CALL(gt_rt_drv.launchKernelEx[mode], &cu, (CUfunction)kernel, args, NULL);
}

RT_API cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                       void **args)
{
    RT_API_ENTER_LAUNCH(cudaLaunchKernelExC, 11060, func, config, func, args);
    return RT_API_EXIT(gt_rt_result(launch_ex(config, func, args, RT_LEGACY)));
}

RT_API cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                            void **args)
{
    RT_API_ENTER_LAUNCH(cudaLaunchKernelExC_ptsz, 11060, func, config, func, args);
    return RT_API_EXIT(gt_rt_result(launch_ex(config, func, args, RT_PER_THREAD)));
}
