/* Virtual memory management: physical allocations made with cuMemCreate.
 *
 * Their bytes are in use from cuMemCreate until the driver really frees
 * the memory: at cuMemRelease when nothing maps it, else at the cuMemUnmap
 * that removes its last mapping (mapped memory outlives its handle, and
 * releasing the handle right after mapping is the usual pattern).
 * cuMemRetainAllocationHandle adds a reference that needs a release of its
 * own. Address reservations hold no memory and are not counted; mapping
 * and unmapping change nothing else in the counts.
 *
 * The allocation is the ALLOC record of cuMemCreate, keyed by its handle;
 * the moment it is freed is a FREE record of its own, with no api name (it
 * is not a call: cuMemRelease and cuMemUnmap are recorded as the calls). */
#include "alloc_hook.h"
#include "handles.h"

/* Handle -> bytes, device, options = references, count = mappings. */
static gt_handle_table allocations;
/* Mapped address -> bytes = size, other = the allocation's handle. */
static gt_handle_table mappings;

/* Unmapped at most this many mappings at a time (an unmap may span several). */
#define UNMAP_BATCH 64

static void record_free(uint64_t handle, uint16_t device)
{
    gt_event *ev = gt_ev_begin();
    if (!ev) return;
    ev->kind = GT_EV_FREE;
    ev->device = device;
    ev->host_start = ev->host_end = gt_clock_ticks();
    ev->u.mem.addr = handle;
    ev->u.mem.mem_kind = GT_MEM_VMM;
    if (!gt_capture_open()) ev->flags |= GT_EVF_UNCAPTURED;
    gt_ev_commit(ev);
}

/* What an edit of an allocation found: whether it is now freed. */
typedef struct vmm_change {
    int freed;
    uint16_t device;
} vmm_change;

static int still_held(gt_handle_info *a, vmm_change *ch)
{
    ch->device = a->device;
    ch->freed = a->options == 0 && a->count == 0;
    return !ch->freed;
}

static int released(gt_handle_info *a, void *ctx)
{
    if (a->options) a->options--;
    return still_held(a, ctx);
}

static int retained(gt_handle_info *a, void *ctx)
{
    (void)ctx;
    a->options++;
    return 1;
}

static int mapped(gt_handle_info *a, void *ctx)
{
    (void)ctx;
    a->count++;
    return 1;
}

static int unmapped(gt_handle_info *a, void *ctx)
{
    if (a->count) a->count--;
    return still_held(a, ctx);
}

/* Only while allocations are recorded; errno stays the call's. */
#define VMM_NOTE(sym, r, stmt)                                                                     \
    do {                                                                                           \
        if ((r) == CUDA_SUCCESS && (gt_hook_mode(&GT_HOOK(sym)) & GT_HOOK_WORK)) {                 \
            int saved_ = errno;                                                                    \
            stmt;                                                                                  \
            errno = saved_;                                                                        \
        }                                                                                          \
    } while (0)

static void created(gt_call *c, CUmemGenericAllocationHandle handle, size_t size)
{
    gt_call_allocated(c, (uint64_t)handle, size);
    gt_handle_info info = {.bytes = size, .device = c->device, .options = 1};
    gt_handle_put(&allocations, (uint64_t)handle, &info);
}

static void device_of(gt_call *c, const CUmemAllocationProp *prop)
{
    gt_call_mem(c, GT_MEM_VMM, 0);
    if (prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE && prop->location.id >= 0 &&
        prop->location.id < (int)GT_NO_DEVICE)
        c->device = (uint16_t)prop->location.id;
}

GT_DRIVER_KEEP_WRAPPER_THEN(cuMemCreate, cuMemCreate, GT_CAT_MEMORY, GT_EV_ALLOC,
                            (CUmemGenericAllocationHandle * handle, size_t size,
                             const CUmemAllocationProp *prop, unsigned long long flags),
                            (handle, size, prop, flags),
                            VMM_NOTE(cuMemCreate, r_, created(&c, *handle, size)),
                            device_of(&c, prop))

static void release(CUmemGenericAllocationHandle handle)
{
    vmm_change ch = {1, GT_NO_DEVICE};
    /* A handle the shim never saw: an unknown free, on the current device. */
    if (!gt_handle_edit(&allocations, (uint64_t)handle, 0, released, &ch))
        GT_SHIM_WORK(ch.device = gt_current_device());
    if (ch.freed) record_free((uint64_t)handle, ch.device);
}

GT_DRIVER_KEEP_WRAPPER_THEN(cuMemRelease, cuMemRelease, GT_CAT_MEMORY, GT_EV_API,
                            (CUmemGenericAllocationHandle handle), (handle),
                            VMM_NOTE(cuMemRelease, r_, release(handle)), (void)c)

static void map(CUdeviceptr ptr, size_t size, CUmemGenericAllocationHandle handle)
{
    gt_handle_info info = {.bytes = size, .other = (uint64_t)handle};
    if (gt_handle_put(&mappings, (uint64_t)ptr, &info) == 0)
        gt_handle_edit(&allocations, (uint64_t)handle, 0, mapped, NULL);
}

GT_DRIVER_KEEP_WRAPPER_THEN(cuMemMap, cuMemMap, GT_CAT_MEMORY, GT_EV_API,
                            (CUdeviceptr ptr, size_t size, size_t offset,
                             CUmemGenericAllocationHandle handle, unsigned long long flags),
                            (ptr, size, offset, handle, flags),
                            VMM_NOTE(cuMemMap, r_, map(ptr, size, handle)), (void)c)

static void unmap(CUdeviceptr ptr, size_t size)
{
    uint64_t keys[UNMAP_BATCH];
    size_t n;
    while ((n = gt_handle_keys_in(&mappings, (uint64_t)ptr, (uint64_t)ptr + size, keys,
                                  UNMAP_BATCH)) > 0) {
        for (size_t i = 0; i < n; i++) {
            gt_handle_info m;
            vmm_change ch = {0, GT_NO_DEVICE};
            if (gt_handle_take(&mappings, keys[i], &m))
                gt_handle_edit(&allocations, m.other, 0, unmapped, &ch);
            if (ch.freed) record_free(m.other, ch.device);
        }
    }
}

GT_DRIVER_KEEP_WRAPPER_THEN(cuMemUnmap, cuMemUnmap, GT_CAT_MEMORY, GT_EV_API,
                            (CUdeviceptr ptr, size_t size), (ptr, size),
                            VMM_NOTE(cuMemUnmap, r_, unmap(ptr, size)), (void)c)

GT_DRIVER_KEEP_WRAPPER_THEN(cuMemRetainAllocationHandle, cuMemRetainAllocationHandle, GT_CAT_MEMORY,
                            GT_EV_API, (CUmemGenericAllocationHandle * handle, void *addr),
                            (handle, addr),
                            VMM_NOTE(cuMemRetainAllocationHandle, r_,
                                     gt_handle_edit(&allocations, (uint64_t)*handle, 0, retained,
                                                    NULL)),
                            (void)c)
