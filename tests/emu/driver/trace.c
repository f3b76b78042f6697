/* The tracing interface (gtemu_trace.h): the attached tool, the enter and
 * exit of traced calls, work reports, and the ids a tool asks for. */
#include "emu_module.h"
#include "emu_trace.h"

_Atomic(const struct gtemu_trace_ops *) gt_trace_ops;

GT_EXPORT int gtemu_trace_attach(const struct gtemu_trace_ops *ops)
{
    if (ops && ops->abi != GTEMU_TRACE_ABI) return -1;
    atomic_store_explicit(&gt_trace_ops, ops, memory_order_release);
    return 0;
}

GT_EXPORT int gtemu_trace_is_attached(void)
{
    return gt_trace_attached() != NULL;
}

/* The mangled name of a launched CUfunction or CUkernel; NULL for a handle
 * that is neither (the launch then fails). */
static const char *launched_name(const void *handle)
{
    if (gt_object_is(handle, GT_KIND_FUNCTION)) return ((const struct gt_function *)handle)->name;
    if (gt_object_is(handle, GT_KIND_KERNEL)) return ((const struct gt_kernel *)handle)->name;
    return NULL;
}

static void fill_enter(struct gtemu_api_call *call)
{
    call->context = (CUcontext)gt_ctx_current();
    if (call->function_handle && !call->symbol) call->symbol = launched_name(call->function_handle);
}

void gt_trace_enter(struct gt_api *api, const struct gtemu_trace_ops *ops)
{
    api->ops = ops;
    fill_enter(&api->call);
    ops->api_enter(&api->call);
}

void gt_trace_exit(struct gt_api *api, CUresult result)
{
    api->call.context = (CUcontext)gt_ctx_current();
    api->call.result = (int)result;
    api->call.return_value = &result;
    api->ops->api_exit(&api->call);
    api->call.return_value = NULL;
}

GT_EXPORT void gtemu_trace_api_enter(struct gtemu_api_call *call)
{
    const struct gtemu_trace_ops *ops = gt_trace_attached();
    if (!ops || !call) return;
    fill_enter(call);
    ops->api_enter(call);
}

GT_EXPORT void gtemu_trace_api_exit(struct gtemu_api_call *call)
{
    const struct gtemu_trace_ops *ops = gt_trace_attached();
    if (!ops || !call) return;
    call->context = (CUcontext)gt_ctx_current();
    ops->api_exit(call);
}

void gt_trace_kernel_template(struct gtemu_work *w, const struct gt_function *f,
                              const unsigned grid[3], const unsigned block[3], unsigned smem,
                              bool cooperative)
{
    *w = (struct gtemu_work){.kind = GTEMU_WORK_KERNEL, .name = f->name};
    for (int i = 0; i < 3; i++) {
        w->grid[i] = grid[i];
        w->block[i] = block[i];
    }
    w->dynamic_shared_bytes = smem;
    w->static_shared_bytes = (unsigned)f->attrs[CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES];
    w->registers_per_thread = (unsigned)f->attrs[CU_FUNC_ATTRIBUTE_NUM_REGS];
    w->local_bytes_per_thread = (unsigned)f->attrs[CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES];
    w->cooperative = cooperative;
}

void gt_trace_work_at(struct gtemu_work *w, const struct gt_stream *s, uint64_t start, uint64_t end)
{
    w->start = start;
    w->end = end;
    w->stream_id = (uint32_t)atomic_load_explicit(&s->id, memory_order_relaxed);
    w->context_id = (uint32_t)gt_ctx_id(s->ctx);
    w->device = (uint32_t)s->ctx->dev->ordinal;
}

void gt_trace_work(const struct gtemu_work *w)
{
    const struct gtemu_trace_ops *ops = gt_trace_attached();
    if (ops) ops->work(w);
}

GT_EXPORT int gtemu_trace_context(CUcontext context, uint32_t *id, uint32_t *device)
{
    struct gt_context *ctx = context ? NULL : gt_ctx_current();
    if (context && gt_ctx_check(context, &ctx) != CUDA_SUCCESS) return -1;
    if (!ctx) return -1;
    if (id) *id = (uint32_t)gt_ctx_id(ctx);
    if (device) *device = (uint32_t)ctx->dev->ordinal;
    return 0;
}

GT_EXPORT int gtemu_trace_stream(CUcontext context, CUstream stream, int per_thread, uint32_t *id)
{
    struct gt_context *ctx = NULL;
    if (context && gt_ctx_check(context, &ctx) != CUDA_SUCCESS) return -1;
    struct gt_stream *s;
    bool default_stream =
        stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
    if (default_stream && ctx && ctx != gt_ctx_current()) {
        /* Another context's default streams: resolve them in that context. */
        if (stream == CU_STREAM_PER_THREAD || (stream == NULL && per_thread)) {
            if (gt_ctx_per_thread_stream(ctx, &s) != CUDA_SUCCESS) return -1;
        } else {
            s = ctx->legacy;
        }
    } else if (gt_stream_resolve(stream, per_thread != 0, &s) != CUDA_SUCCESS) {
        return -1;
    }
    if (ctx && s->ctx != ctx) return -1;
    if (id) *id = (uint32_t)atomic_load_explicit(&s->id, memory_order_relaxed);
    return 0;
}
