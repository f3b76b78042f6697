/* Runtime launches (shared libcudart only: a static runtime has no symbols
 * to interpose, and its launches are seen at the driver level). nvcc 13's
 * <<<>>> calls __cudaLaunchKernel; programs call cudaLaunchKernel and
 * cudaLaunchKernelExC. The kernel's handle and name come from the driver
 * launch under the runtime call; the handle given here (a host stub or a
 * runtime kernel handle) names it only when no driver launch was seen. */
#include "hook.h"
#include "rt_decls.h"

static void launch(gt_call *c, const void *func, dim3 grid, dim3 block, size_t shmem,
                   cudaStream_t s)
{
    c->stream = s;
    c->func_is_stub = 1;
    c->u.kernel.func = (uint64_t)(uintptr_t)func;
    c->u.kernel.grid[0] = grid.x, c->u.kernel.grid[1] = grid.y, c->u.kernel.grid[2] = grid.z;
    c->u.kernel.block[0] = block.x, c->u.kernel.block[1] = block.y, c->u.kernel.block[2] = block.z;
    c->u.kernel.shmem = (uint32_t)shmem;
}

static void launch_ex(gt_call *c, const cudaLaunchConfig_t *config, const void *func)
{
    if (!config) {
        c->func_is_stub = 1;
        c->u.kernel.func = (uint64_t)(uintptr_t)func;
        return;
    }
    launch(c, func, config->gridDim, config->blockDim, config->dynamicSmemBytes, config->stream);
}

#define KERNEL(sym, base, params, args, ...)                                                       \
    GT_RUNTIME_WRAPPER(sym, base, GT_CAT_KERNEL, GT_EV_KERNEL, params, args, __VA_ARGS__)

#define LAUNCH(sym, base, func_t)                                                                  \
    KERNEL(sym, base,                                                                              \
           (func_t func, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t s),        \
           (func, grid, block, args, shmem, s), launch(&c, func, grid, block, shmem, s))
#define LAUNCH_EX(sym)                                                                             \
    KERNEL(sym, cudaLaunchKernelExC,                                                               \
           (const cudaLaunchConfig_t *config, const void *func, void **args),                      \
           (config, func, args), launch_ex(&c, config, func))

LAUNCH(cudaLaunchKernel, cudaLaunchKernel, const void *)
LAUNCH(cudaLaunchKernel_ptsz, cudaLaunchKernel, const void *)
LAUNCH(__cudaLaunchKernel, __cudaLaunchKernel, cudaKernel_t)
LAUNCH(__cudaLaunchKernel_ptsz, __cudaLaunchKernel, cudaKernel_t)
LAUNCH(cudaLaunchCooperativeKernel, cudaLaunchCooperativeKernel, const void *)
LAUNCH(cudaLaunchCooperativeKernel_ptsz, cudaLaunchCooperativeKernel, const void *)
LAUNCH_EX(cudaLaunchKernelExC)
LAUNCH_EX(cudaLaunchKernelExC_ptsz)

#define GRAPH_LAUNCH(sym)                                                                          \
    GT_RUNTIME_WRAPPER(sym, cudaGraphLaunch, GT_CAT_KERNEL, GT_EV_GRAPH,                           \
                       (cudaGraphExec_t exec, cudaStream_t s), (exec, s),                          \
                       gt_call_graph(&c, exec, s))

GRAPH_LAUNCH(cudaGraphLaunch)
GRAPH_LAUNCH(cudaGraphLaunch_ptsz)

/* Registration: a host stub's device name, for the launches above that
 * never reach the driver. Not a call of the program's own: not recorded. */
GT_RUNTIME_HOOK(__cudaRegisterFunction, __cudaRegisterFunction, GT_CAT_KERNEL)
GT_EXPORT void CUDARTAPI __cudaRegisterFunction(void **handle, const char *host_fun,
                                                char *device_fun, const char *device_name,
                                                int thread_limit, uint3 *tid, uint3 *bid,
                                                dim3 *block, dim3 *grid, int *warp_size)
{
    __typeof__(&__cudaRegisterFunction) real_ = (__typeof__(&__cudaRegisterFunction))gt_hook_real(
        &GT_HOOK(__cudaRegisterFunction), __builtin_return_address(0));
    if (!real_) return;
    real_(handle, host_fun, device_fun, device_name, thread_limit, tid, bid, block, grid,
          warp_size);
    if (!(gt_hook_mode(&GT_HOOK(__cudaRegisterFunction)) & GT_HOOK_WORK) || gt_tls.guard) return;
    int saved = errno;
    GT_SHIM_WORK(gt_kernel_name_note_stub((uint64_t)(uintptr_t)host_fun, device_name));
    errno = saved;
}
