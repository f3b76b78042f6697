/* Driver launches: kernels (a CUfunction, or a CUkernel passed as one) and
 * graphs, with their per-thread-default-stream variants. The kernel's name
 * is found from its handle when the launch is recorded
 * (intercept/kernel_names.c). */
#include "hook.h"

static void launch(gt_call *c, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                   unsigned by, unsigned bz, unsigned shmem, CUstream s)
{
    c->stream = s;
    c->u.kernel.func = (uint64_t)(uintptr_t)f;
    c->u.kernel.grid[0] = gx, c->u.kernel.grid[1] = gy, c->u.kernel.grid[2] = gz;
    c->u.kernel.block[0] = bx, c->u.kernel.block[1] = by, c->u.kernel.block[2] = bz;
    c->u.kernel.shmem = shmem;
}

static void launch_ex(gt_call *c, const CUlaunchConfig *config, CUfunction f)
{
    if (!config) {
        c->u.kernel.func = (uint64_t)(uintptr_t)f;
        return;
    }
    launch(c, f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
           config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream);
}

#define KERNEL(sym, base, params, args, ...)                                                       \
    GT_DRIVER_WRAPPER(sym, base, GT_CAT_KERNEL, GT_EV_KERNEL, params, args, __VA_ARGS__)

#define LAUNCH_KERNEL(sym)                                                                         \
    KERNEL(sym, cuLaunchKernel,                                                                    \
           (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,         \
            unsigned bz, unsigned shmem, CUstream s, void **params, void **extra),                 \
           (f, gx, gy, gz, bx, by, bz, shmem, s, params, extra),                                   \
           launch(&c, f, gx, gy, gz, bx, by, bz, shmem, s))
#define LAUNCH_COOPERATIVE(sym)                                                                    \
    KERNEL(sym, cuLaunchCooperativeKernel,                                                         \
           (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,         \
            unsigned bz, unsigned shmem, CUstream s, void **params),                               \
           (f, gx, gy, gz, bx, by, bz, shmem, s, params),                                          \
           launch(&c, f, gx, gy, gz, bx, by, bz, shmem, s))
#define LAUNCH_EX(sym)                                                                             \
    KERNEL(sym, cuLaunchKernelEx,                                                                  \
           (const CUlaunchConfig *config, CUfunction f, void **params, void **extra),              \
           (config, f, params, extra), launch_ex(&c, config, f))

LAUNCH_KERNEL(cuLaunchKernel)
LAUNCH_KERNEL(cuLaunchKernel_ptsz)
LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel)
LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel_ptsz)
LAUNCH_EX(cuLaunchKernelEx)
LAUNCH_EX(cuLaunchKernelEx_ptsz)

#define GRAPH_LAUNCH(sym)                                                                          \
    GT_DRIVER_WRAPPER(sym, cuGraphLaunch, GT_CAT_KERNEL, GT_EV_GRAPH,                              \
                      (CUgraphExec exec, CUstream s), (exec, s), gt_call_graph(&c, exec, s))

GRAPH_LAUNCH(cuGraphLaunch)
GRAPH_LAUNCH(cuGraphLaunch_ptsz)
