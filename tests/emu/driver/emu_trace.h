/* The driver's side of the tracing interface (gtemu_trace.h): traced entry
 * points report their enter and exit, and the work they submit, to the
 * attached tool. With no tool attached a traced call costs one atomic load. */
#ifndef GTEMU_EMU_TRACE_H
#define GTEMU_EMU_TRACE_H

#include "emu_stream.h"
#include "gtemu_trace.h"

#include <cupti_driver_cbid.h>
#include <generated_cuda_meta.h>

/* Acquire at each load: pairs with the release in gtemu_trace_attach, so the
 * tool's state set up before attaching is visible to its callbacks. */
extern _Atomic(const struct gtemu_trace_ops *) gt_trace_ops;

static inline const struct gtemu_trace_ops *gt_trace_attached(void)
{
    return atomic_load_explicit(&gt_trace_ops, memory_order_acquire);
}

/* A traced call in progress; `ops` is the tool that saw its enter, NULL when
 * none did (then its exit is not reported either). */
struct gt_api {
    struct gtemu_api_call call;
    const struct gtemu_trace_ops *ops;
};

void gt_trace_enter(struct gt_api *api, const struct gtemu_trace_ops *ops);
void gt_trace_exit(struct gt_api *api, CUresult result);

static inline void gt_api_enter(struct gt_api *api)
{
    const struct gtemu_trace_ops *ops = gt_trace_attached();
    if (ops) gt_trace_enter(api, ops);
}

static inline CUresult gt_api_exit(struct gt_api *api, CUresult result)
{
    if (api->ops) gt_trace_exit(api, result);
    return result;
}

/* The body of a traced entry point:
 *
 *     GT_API_ENTER(cuMemcpyHtoD_v2, dstDevice, srcHost, ByteCount);
 *     return GT_API_EXIT(copy(...));
 *
 * `name` is the exported function, which is also the name of its CUPTI
 * callback id and of its parameter struct in generated_cuda_meta.h; the
 * arguments are the function's, in order. */
#define GT_API_CALL(name, handle, ...)                                                             \
    name##_params gt_api_params_ = {__VA_ARGS__};                                                  \
    struct gt_api gt_api_ = {.call = {.domain = GTEMU_DOMAIN_DRIVER,                               \
                                      .cbid = CUPTI_DRIVER_TRACE_CBID_##name,                      \
                                      .function = #name,                                           \
                                      .params = &gt_api_params_,                                   \
                                      .function_handle = (handle)}};                               \
    gt_api_enter(&gt_api_)
#define GT_API_ENTER(name, ...) GT_API_CALL(name, NULL, __VA_ARGS__)
/* A launch: `f` is the CUfunction or CUkernel, whose name the tool is given. */
#define GT_API_ENTER_LAUNCH(name, f, ...) GT_API_CALL(name, (f), __VA_ARGS__)
#define GT_API_EXIT(result) gt_api_exit(&gt_api_, (result))

/* Work for the tool: a template filled when the work is submitted or
 * captured (kind and what it moves or runs), completed with where and when
 * it runs by gt_trace_work_at and reported by gt_trace_work. */
struct gt_function;
void gt_trace_kernel_template(struct gtemu_work *w, const struct gt_function *f,
                              const unsigned grid[3], const unsigned block[3], unsigned smem,
                              bool cooperative);
void gt_trace_work_at(struct gtemu_work *w, const struct gt_stream *s, uint64_t start,
                      uint64_t end);
void gt_trace_work(const struct gtemu_work *w);

#endif
