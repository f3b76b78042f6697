/* Context management entry points, including primary contexts. */
#include "emu_stream.h"

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!pctx || (flags & ~(unsigned)CU_CTX_FLAGS_MASK)) return CUDA_ERROR_INVALID_VALUE;
    struct gt_device *d;
    r = gt_device_get(dev, &d);
    if (r != CUDA_SUCCESS) return r;
    struct gt_context *ctx;
    r = gt_ctx_new(d, flags, false, &ctx);
    if (r != CUDA_SUCCESS) return r;
    gt_ctx_push(ctx);
    *pctx = (CUcontext)ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                unsigned int flags, CUdevice dev)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (numParams < 0 || (numParams > 0 && !paramsArray)) return CUDA_ERROR_INVALID_VALUE;
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                unsigned int flags, CUdevice dev)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (ctxCreateParams && ctxCreateParams->cigParams) return CUDA_ERROR_NOT_SUPPORTED;
    return ctx_create(pctx, flags, dev);
}

static CUresult ctx_destroy(CUcontext h)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(h, GT_KIND_CONTEXT)) return CUDA_ERROR_INVALID_CONTEXT;
    struct gt_context *ctx = (struct gt_context *)h;
    if (ctx->is_primary) return CUDA_ERROR_INVALID_CONTEXT;
    gt_ctx_destroy(ctx);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
    return ctx_destroy(ctx);
}

CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
    return ctx_destroy(ctx);
}

static CUresult ctx_push(CUcontext h)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(h, GT_KIND_CONTEXT)) return CUDA_ERROR_INVALID_CONTEXT;
    gt_ctx_push((struct gt_context *)h);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
    return ctx_push(ctx);
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
    return ctx_push(ctx);
}

static CUresult ctx_pop(CUcontext *pctx)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_ctx_current()) return CUDA_ERROR_INVALID_CONTEXT;
    struct gt_context *ctx = gt_ctx_pop();
    if (pctx) *pctx = (CUcontext)ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
    return ctx_pop(pctx);
}

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
    return ctx_pop(pctx);
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (ctx && !gt_object_is(ctx, GT_KIND_CONTEXT)) return CUDA_ERROR_INVALID_CONTEXT;
    gt_ctx_set_top((struct gt_context *)ctx);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)gt_ctx_current();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    *device = ctx->dev->ordinal;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext hctx)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_check(hctx, &ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    *device = ctx->dev->ordinal;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    *flags = ctx->flags;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetFlags(unsigned int flags)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (flags & ~(unsigned)CU_CTX_FLAGS_MASK) return CUDA_ERROR_INVALID_VALUE;
    ctx->flags = flags;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetId(CUcontext hctx, unsigned long long *ctxId)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_check(hctx, &ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!ctxId) return CUDA_ERROR_INVALID_VALUE;
    *ctxId = gt_ctx_id(ctx);
    return CUDA_SUCCESS;
}

static CUresult ctx_sync(struct gt_context *ctx)
{
    CUresult r = gt_capture_check_unsafe();
    if (r != CUDA_SUCCESS) return r;
    return gt_ctx_synchronize(ctx);
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    return r != CUDA_SUCCESS ? r : ctx_sync(ctx);
}

CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext hctx)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_check(hctx, &ctx);
    return r != CUDA_SUCCESS ? r : ctx_sync(ctx);
}

CUresult CUDAAPI cuCtxGetApiVersion(CUcontext hctx, unsigned int *version)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_check(hctx, &ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = 3020; /* contexts created through the _v2 ABI and later */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!pvalue) return CUDA_ERROR_INVALID_VALUE;
    if ((unsigned)limit >= CU_LIMIT_MAX) return CUDA_ERROR_UNSUPPORTED_LIMIT;
    *pvalue = ctx->limits[limit];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if ((unsigned)limit >= CU_LIMIT_MAX || limit == CU_LIMIT_SHMEM_SIZE ||
        limit == CU_LIMIT_CIG_ENABLED)
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    ctx->limits[limit] = value;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!pconfig) return CUDA_ERROR_INVALID_VALUE;
    *pconfig = ctx->cache_config;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache config)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if ((unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
    ctx->cache_config = config;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (leastPriority) *leastPriority = 0;
    if (greatestPriority) *greatestPriority = -5;
    return CUDA_SUCCESS;
}

static CUresult peer_check(CUcontext peer, struct gt_context **self, struct gt_context **other)
{
    CUresult r = gt_ctx_require(self);
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(peer, GT_KIND_CONTEXT)) return CUDA_ERROR_INVALID_HANDLE;
    *other = (struct gt_context *)peer;
    if ((*other)->dev == (*self)->dev) return CUDA_ERROR_INVALID_DEVICE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
    struct gt_context *self, *other;
    CUresult r = peer_check(peerContext, &self, &other);
    if (r != CUDA_SUCCESS) return r;
    return Flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peerContext)
{
    struct gt_context *self, *other;
    return peer_check(peerContext, &self, &other);
}

/* ---- primary contexts ---- */

static CUresult primary_device(CUdevice dev, struct gt_device **d)
{
    CUresult r = gt_ready();
    return r != CUDA_SUCCESS ? r : gt_device_get(dev, d);
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    struct gt_device *d;
    CUresult r = primary_device(dev, &d);
    if (r != CUDA_SUCCESS) return r;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&d->lock);
    if (!d->primary) r = gt_ctx_new(d, d->primary_flags, true, &d->primary);
    if (r == CUDA_SUCCESS) {
        d->primary_refs++;
        *pctx = (CUcontext)d->primary;
    }
    pthread_mutex_unlock(&d->lock);
    return r;
}

static CUresult primary_release(CUdevice dev)
{
    struct gt_device *d;
    CUresult r = primary_device(dev, &d);
    if (r != CUDA_SUCCESS) return r;
    pthread_mutex_lock(&d->lock);
    struct gt_context *dead = NULL;
    if (d->primary_refs == 0) {
        r = CUDA_ERROR_INVALID_CONTEXT;
    } else if (--d->primary_refs == 0) {
        dead = d->primary;
        d->primary = NULL;
    }
    pthread_mutex_unlock(&d->lock);
    if (dead) gt_ctx_destroy(dead);
    return r;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return primary_release(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    return primary_release(dev);
}

static CUresult primary_set_flags(CUdevice dev, unsigned flags)
{
    struct gt_device *d;
    CUresult r = primary_device(dev, &d);
    if (r != CUDA_SUCCESS) return r;
    if (flags & ~(unsigned)CU_CTX_FLAGS_MASK) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&d->lock);
    d->primary_flags = flags;
    if (d->primary) d->primary->flags = flags;
    pthread_mutex_unlock(&d->lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    return primary_set_flags(dev, flags);
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    return primary_set_flags(dev, flags);
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    struct gt_device *d;
    CUresult r = primary_device(dev, &d);
    if (r != CUDA_SUCCESS) return r;
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&d->lock);
    *flags = d->primary_flags;
    *active = d->primary != NULL;
    pthread_mutex_unlock(&d->lock);
    return CUDA_SUCCESS;
}

static CUresult primary_reset(CUdevice dev)
{
    struct gt_device *d;
    CUresult r = primary_device(dev, &d);
    if (r != CUDA_SUCCESS) return r;
    pthread_mutex_lock(&d->lock);
    if (d->primary) r = gt_ctx_reset(d->primary);
    d->primary_flags = 0;
    pthread_mutex_unlock(&d->lock);
    return r;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
    return primary_reset(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    return primary_reset(dev);
}
