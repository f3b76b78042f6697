/* Stream-ordered allocation: memory pools, cuMemAllocAsync and
 * cuMemFreeAsync. An allocation is usable as soon as the call returns; a
 * free takes effect when the stream reaches it. Allocations made during
 * stream capture are made at once and are not graph nodes; frees during
 * capture become memory-free nodes. */
#include "emu_stream.h"

#include <stdlib.h>

struct gt_mempool {
    struct gt_object obj;
    struct gt_device *dev;
    pthread_mutex_t lock;
    int reuse[3]; /* the three REUSE_* attributes */
    cuuint64_t release_threshold, used, used_high;
    bool is_default;
};

static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gt_mempool *default_pools[GT_MAX_DEVICES];
static struct gt_mempool *current_pools[GT_MAX_DEVICES];
/* Destroyed pools, kept: allocations made from them still point at them. */
static struct gt_mempool *destroyed_pools;

static struct gt_mempool *pool_new(struct gt_device *dev, bool is_default)
{
    struct gt_mempool *p =
        gt_object_new(GT_KIND_MEMPOOL, sizeof *p, sizeof(struct gt_object), NULL);
    if (!p) return NULL;
    pthread_mutex_init(&p->lock, NULL);
    p->dev = dev;
    p->is_default = is_default;
    for (int i = 0; i < 3; i++)
        p->reuse[i] = 1;
    return p;
}

static struct gt_mempool *default_pool(struct gt_device *dev)
{
    pthread_mutex_lock(&pools_lock);
    if (!default_pools[dev->ordinal]) default_pools[dev->ordinal] = pool_new(dev, true);
    struct gt_mempool *p = default_pools[dev->ordinal];
    pthread_mutex_unlock(&pools_lock);
    return p;
}

static struct gt_mempool *current_pool(struct gt_device *dev)
{
    pthread_mutex_lock(&pools_lock);
    struct gt_mempool *p = current_pools[dev->ordinal];
    pthread_mutex_unlock(&pools_lock);
    return p ? p : default_pool(dev);
}

void gt_mempool_release(void *pool, size_t size)
{
    struct gt_mempool *p = pool;
    pthread_mutex_lock(&p->lock);
    p->used -= size < p->used ? size : p->used;
    pthread_mutex_unlock(&p->lock);
}

static CUresult pool_check(CUmemoryPool h, struct gt_mempool **out)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(h, GT_KIND_MEMPOOL)) return CUDA_ERROR_INVALID_VALUE;
    *out = (struct gt_mempool *)h;
    return CUDA_SUCCESS;
}

static CUresult device_pool_prologue(const void *out, CUdevice dev, struct gt_device **d)
{
    CUresult r = gt_ready();
    if (r == CUDA_SUCCESS) r = gt_device_get(dev, d);
    if (r == CUDA_SUCCESS && !out) r = CUDA_ERROR_INVALID_VALUE;
    return r;
}

CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    struct gt_device *d;
    CUresult r = device_pool_prologue(pool_out, dev, &d);
    if (r != CUDA_SUCCESS) return r;
    struct gt_mempool *p = default_pool(d);
    *pool_out = (CUmemoryPool)p;
    return p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    struct gt_device *d;
    CUresult r = device_pool_prologue(pool, dev, &d);
    if (r != CUDA_SUCCESS) return r;
    struct gt_mempool *p = current_pool(d);
    *pool = (CUmemoryPool)p;
    return p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    struct gt_device *d;
    CUresult r = device_pool_prologue(pool, dev, &d);
    struct gt_mempool *p;
    if (r == CUDA_SUCCESS) r = pool_check(pool, &p);
    if (r != CUDA_SUCCESS) return r;
    if (p->dev != d) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&pools_lock);
    current_pools[d->ordinal] = p;
    pthread_mutex_unlock(&pools_lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    struct gt_device *d;
    if (!pool || !poolProps || poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        gt_device_get(poolProps->location.id, &d) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_VALUE;
    struct gt_mempool *p = pool_new(d, false);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    *pool = (CUmemoryPool)p;
    return CUDA_SUCCESS;
}

/* Pools are never reused: allocations still point at theirs. */
CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool)
{
    struct gt_mempool *p;
    CUresult r = pool_check(pool, &p);
    if (r != CUDA_SUCCESS) return r;
    if (p->is_default) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&pools_lock);
    if (current_pools[p->dev->ordinal] == p) current_pools[p->dev->ordinal] = NULL;
    bool first = gt_object_kill(p, GT_KIND_MEMPOOL);
    if (first) {
        p->obj.pool_next = (struct gt_object *)destroyed_pools;
        destroyed_pools = p;
    }
    pthread_mutex_unlock(&pools_lock);
    return first ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    struct gt_mempool *p;
    CUresult r = pool_check(pool, &p);
    if (r != CUDA_SUCCESS) return r;
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    r = CUDA_SUCCESS;
    pthread_mutex_lock(&p->lock);
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *(int *)value;
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        p->release_threshold = *(cuuint64_t *)value;
        break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (*(cuuint64_t *)value != 0)
            r = CUDA_ERROR_INVALID_VALUE; /* high watermarks can only be reset */
        else
            p->used_high = p->used;
        break;
    default:
        r = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&p->lock);
    return r;
}

CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    struct gt_mempool *p;
    CUresult r = pool_check(pool, &p);
    if (r != CUDA_SUCCESS) return r;
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&p->lock);
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *(int *)value = p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        *(cuuint64_t *)value = p->release_threshold;
        break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
        *(cuuint64_t *)value = p->used;
        break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        *(cuuint64_t *)value = p->used_high;
        break;
    default:
        r = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&p->lock);
    return r;
}

CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    struct gt_mempool *p;
    (void)minBytesToKeep;
    return pool_check(pool, &p); /* freed memory is returned at once */
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t size, CUmemoryPool hpool, CUstream hStream,
                            bool per_thread)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    if (r != CUDA_SUCCESS) return r;
    if (!dptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
    r = gt_capture_check_legacy(s);
    if (r != CUDA_SUCCESS) return r;
    struct gt_mempool *pool;
    if (hpool) {
        r = pool_check(hpool, &pool);
        if (r != CUDA_SUCCESS) return r;
    } else {
        pool = current_pool(s->ctx->dev);
        if (!pool) return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (pool->dev != s->ctx->dev) return CUDA_ERROR_INVALID_VALUE;
    r = gt_device_alloc(s->ctx, size, GT_MEM_DEVICE, 0, dptr);
    if (r != CUDA_SUCCESS) return r;
    gt_mem_set_pool((uintptr_t)*dptr, pool);
    pthread_mutex_lock(&pool->lock);
    pool->used += size;
    if (pool->used > pool->used_high) pool->used_high = pool->used;
    pthread_mutex_unlock(&pool->lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return alloc_async(dptr, bytesize, NULL, hStream, false);
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return alloc_async(dptr, bytesize, NULL, hStream, true);
}

static CUresult alloc_from_pool(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream hStream,
                                bool per_thread)
{
    CUresult r = gt_ready();
    if (r == CUDA_SUCCESS && !pool) r = CUDA_ERROR_INVALID_VALUE;
    return r != CUDA_SUCCESS ? r : alloc_async(dptr, size, pool, hStream, per_thread);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                         CUstream hStream)
{
    return alloc_from_pool(dptr, bytesize, pool, hStream, false);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                              CUstream hStream)
{
    return alloc_from_pool(dptr, bytesize, pool, hStream, true);
}

static CUresult free_async(CUdeviceptr dptr, CUstream hStream, bool per_thread)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    if (r == CUDA_SUCCESS) r = gt_capture_check_legacy(s);
    if (r != CUDA_SUCCESS) return r;
    unsigned mask = GT_MEM_MASK(GT_MEM_DEVICE) | GT_MEM_MASK(GT_MEM_MANAGED);
    if (!gt_mem_mark_freeing((uintptr_t)dptr, mask)) return CUDA_ERROR_INVALID_VALUE;
    if (gt_stream_capture(s)) {
        struct gt_node_params p = {.kind = GT_NODE_MEM_FREE};
        p.u.free_ptr = dptr;
        return gt_capture_add(s, &p);
    }
    struct gt_op op = {.kind = GT_OP_FREE_DEVICE};
    op.u.free_ptr = dptr;
    gt_stream_submit_step(s, &op, true);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    return free_async(dptr, hStream, false);
}

CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    return free_async(dptr, hStream, true);
}

/* The CUDA 13 forms name the pool by location and allocation type. */
static CUresult location_device(const CUmemLocation *location, CUmemAllocationType type,
                                struct gt_device **d)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!location || type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        location->type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE; /* only device pools are emulated */
    return gt_device_get(location->id, d);
}

CUresult CUDAAPI cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location,
                                        CUmemAllocationType type)
{
    struct gt_device *d;
    CUresult r = location_device(location, type, &d);
    if (r != CUDA_SUCCESS) return r;
    return cuDeviceGetDefaultMemPool(pool_out, d->ordinal);
}

CUresult CUDAAPI cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location,
                                 CUmemAllocationType type)
{
    struct gt_device *d;
    CUresult r = location_device(location, type, &d);
    if (r != CUDA_SUCCESS) return r;
    return cuDeviceGetMemPool(pool, d->ordinal);
}

CUresult CUDAAPI cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type,
                                 CUmemoryPool pool)
{
    struct gt_device *d;
    CUresult r = location_device(location, type, &d);
    if (r != CUDA_SUCCESS) return r;
    return cuDeviceSetMemPool(d->ordinal, pool);
}
