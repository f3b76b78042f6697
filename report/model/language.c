#include "language.h"

#include <string.h>

#include "aggregate.h"
#include "display_name.h"
#include "strtab.h"
#include "table.h"

/* The library a kernel's name says it is from; GT_LANG_NATIVE: none. */
static enum gt_language kernel_library(const char *name)
{
    if (gt_name_is_numba(name)) return GT_LANG_NUMBA;
    /* CuPy's elementwise and reduction kernels; PyTorch's ATen and c10. */
    if (!strncmp(name, "cupy_", 5) || strstr(name, " cupy_") || strstr(name, "cupy::"))
        return GT_LANG_CUPY;
    if (strstr(name, "at::native::") || strstr(name, "at::cuda::") || strstr(name, "c10::"))
        return GT_LANG_TORCH;
    return GT_LANG_NATIVE;
}

static bool python_command(const gt_process_info *p)
{
    if (!p || !p->command) return false;
    size_t len = strcspn(p->command, " ");
    const char *base = p->command;
    for (size_t i = 0; i < len; i++)
        if (p->command[i] == '/') base = p->command + i + 1;
    return !strncmp(base, "python", 6);
}

enum gt_language gt_report_language(const gt_report *r, const gt_process_info *p)
{
    uint64_t ns[GT_LANG_COUNT] = {0};
    const gt_table *k = &r->tables[GT_CAT_KERNEL];
    for (uint32_t i = 0; i < k->nrows; i++)
        ns[kernel_library(gt_strtab_get(r->names, k->rows[i].key.f[0]))] +=
            k->rows[i].time.total + 1; /* + 1: an untimed launch still says whose it is */
    enum gt_language best = GT_LANG_NATIVE;
    for (int l = GT_LANG_NUMBA; l < GT_LANG_COUNT; l++)
        if (ns[l] > ns[best] || (best == GT_LANG_NATIVE && ns[l])) best = (enum gt_language)l;
    if (best != GT_LANG_NATIVE) return best;
    const gt_table *c = &r->tables[GT_CAT_COMPILE];
    for (uint32_t i = 0; i < c->nrows; i++)
        if (!strncmp(gt_strtab_get(r->names, c->rows[i].key.f[0]), "nvvm", 4)) return GT_LANG_NUMBA;
    return python_command(p) ? GT_LANG_PYTHON : GT_LANG_NATIVE;
}

/* Python clients other than these three use the runtime's names through
 * their bindings: the native phrases serve them. */
static const char *const fixes[GT_FIX_COUNT][GT_LANG_PYTHON] = {
    [GT_FIX_PINNED] =
        {
            [GT_LANG_NATIVE] = "allocate those host buffers pinned (cudaMallocHost, "
                               "cuMemHostAlloc) or pin them with cudaHostRegister",
            [GT_LANG_NUMBA] = "allocate those host arrays pinned (numba.cuda.pinned_array) or pin "
                              "them for the copies (with numba.cuda.pinned(arr):)",
            [GT_LANG_CUPY] = "allocate those host arrays pinned (cupyx.empty_pinned, "
                             "cupyx.zeros_pinned)",
            [GT_LANG_TORCH] = "pin those host tensors (tensor.pin_memory(), "
                              "DataLoader(pin_memory=True))",
        },
    [GT_FIX_ASYNC_COPY] =
        {
            [GT_LANG_NATIVE] = "use async copies from pinned memory on a stream so that they "
                               "overlap with GPU work",
            [GT_LANG_NUMBA] = "copy from pinned arrays on a stream (s = numba.cuda.stream(); "
                              "cuda.to_device(arr, stream=s), d_arr.copy_to_host(out, stream=s)) "
                              "so that the copies overlap with kernels",
            [GT_LANG_CUPY] = "copy from pinned arrays on a stream (d.set(host, stream=s), "
                             "d.get(stream=s, out=pinned)) so that the copies overlap with "
                             "kernels",
            [GT_LANG_TORCH] = "copy pinned tensors with .to(\"cuda\", non_blocking=True) so that "
                              "the copies overlap with kernels",
        },
    [GT_FIX_GRAPH] =
        {
            [GT_LANG_NATIVE] = "fuse kernels or give each more work, or capture the sequence "
                               "into a CUDA graph once and launch the graph "
                               "(cudaStreamBeginCapture, cudaGraphLaunch)",
            [GT_LANG_NUMBA] = "fuse them into fewer @cuda.jit kernels, or give each thread more "
                              "work (a grid-stride loop)",
            [GT_LANG_CUPY] = "fuse them (cupy.fuse, one ElementwiseKernel or RawKernel), or "
                             "capture the sequence into a CUDA graph once "
                             "(stream.begin_capture(), stream.end_capture(), graph.launch())",
            [GT_LANG_TORCH] = "capture the step into a CUDA graph (torch.cuda.graph, "
                              "torch.cuda.CUDAGraph) or let torch.compile(mode="
                              "\"reduce-overhead\") fuse and capture it",
        },
    [GT_FIX_SYNC] =
        {
            [GT_LANG_NATIVE] = "synchronize only where the host needs the results, and order "
                               "work with streams and events instead",
            [GT_LANG_NUMBA] = "synchronize (numba.cuda.synchronize(), stream.synchronize(), "
                              "copy_to_host() without a stream) only where the host needs the "
                              "results",
            [GT_LANG_CUPY] = "synchronize (stream.synchronize(), .get(), .item(), printing an "
                             "array) only where the host needs the results",
            [GT_LANG_TORCH] = "keep .item(), .cpu(), .tolist(), printing tensors and "
                              "torch.cuda.synchronize() out of the loop: each waits for the GPU",
        },
    [GT_FIX_OVERLAP] =
        {
            [GT_LANG_NATIVE] = "keep work queued, overlapping host work and copies with kernels "
                               "on streams",
            [GT_LANG_NUMBA] = "keep work queued: launch kernels (kernel[grid, block, stream]) "
                              "and copies on numba.cuda.stream()s so that host work and copies "
                              "overlap with kernels",
            [GT_LANG_CUPY] = "keep work queued on cupy.cuda.Stream(non_blocking=True) streams "
                             "(with stream:), copies from pinned arrays overlapping kernels",
            [GT_LANG_TORCH] = "keep work queued: no host synchronization in the loop, data "
                              "loaded ahead (DataLoader(num_workers=..., pin_memory=True)), "
                              "copies with non_blocking=True",
        },
};

const char *gt_advice_fix(enum gt_fix fix, enum gt_language lang)
{
    if ((unsigned)fix >= GT_FIX_COUNT) return "";
    if ((unsigned)lang >= GT_LANG_PYTHON) lang = GT_LANG_NATIVE;
    return fixes[fix][lang];
}
