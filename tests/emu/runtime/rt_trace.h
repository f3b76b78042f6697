/* The runtime's work-submitting calls (launches, copies, memsets, graph
 * launches), reported to a tracing tool through the emulated driver
 * (gtemu_trace.h), so that the tool sees the runtime call around the driver
 * call it makes, as CUPTI does on a GPU. */
#ifndef GT_RT_TRACE_H
#define GT_RT_TRACE_H

#include "rt_internal.h"

#include "gtemu_trace.h"

#include <cupti_runtime_cbid.h>
#include <generated_cuda_runtime_api_meta.h>

/* CUPTI's headers declare no parameter struct for the launch entry point of
 * nvcc 13's <<<>>> code; these follow its signature, as the others do. */
typedef struct {
    cudaKernel_t kernel;
    dim3 gridDim;
    dim3 blockDim;
    void **args;
    size_t sharedMem;
    cudaStream_t stream;
} __cudaLaunchKernel_v13000_params, __cudaLaunchKernel_ptsz_v13000_params;

/* A traced call in progress: `entered` when a tool saw its enter. */
struct rt_api {
    struct gtemu_api_call call;
    const void *launched; /* a launch's host stub or cudaKernel_t */
    bool entered;
};

void gt_rt_trace_enter(struct rt_api *api);
cudaError_t gt_rt_trace_exit(struct rt_api *api, cudaError_t result);

/* The body of a traced entry point:
 *
 *     RT_API_ENTER(cudaMemcpy, 3020, dst, src, count, kind);
 *     return RT_API_EXIT(gt_rt_result(...));
 *
 * `name` and `version` name its CUPTI callback id
 * (CUPTI_RUNTIME_TRACE_CBID_<name>_v<version>) and its parameter struct; the
 * arguments are the function's, in order. */
#define RT_API_CALL(name, version, launch_target, ...)                                             \
    name##_v##version##_params rt_api_params_ = {__VA_ARGS__};                                     \
    struct rt_api rt_api_ = {.call = {.domain = GTEMU_DOMAIN_RUNTIME,                              \
                                      .cbid = CUPTI_RUNTIME_TRACE_CBID_##name##_v##version,        \
                                      .function = #name "_v" #version,                             \
                                      .params = &rt_api_params_},                                  \
                             .launched = (launch_target)};                                         \
    gt_rt_trace_enter(&rt_api_)
#define RT_API_ENTER(name, version, ...) RT_API_CALL(name, version, NULL, __VA_ARGS__)
/* A launch of `func`: a registered host stub or a cudaKernel_t. */
#define RT_API_ENTER_LAUNCH(name, version, func, ...)                                              \
    RT_API_CALL(name, version, (func), __VA_ARGS__)
#define RT_API_EXIT(result) gt_rt_trace_exit(&rt_api_, (result))

#endif
