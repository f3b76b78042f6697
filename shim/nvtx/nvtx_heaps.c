/* NVTX memory heaps and regions (nvToolsExtMem.h): how a pool allocator
 * says what its memory holds. A heap is memory the pool took (from
 * cuMemAlloc, say); regions are the pieces of it handed out. Each call
 * becomes GT_EV_NVTX_HEAP records, one per heap or region, for the report
 * to count regions and their bytes per heap.
 *
 * Heaps and regions of process virtual memory (NVTX_MEM_TYPE_VIRTUAL_ADDRESS)
 * are what CUDA pools describe; a heap's handle is its address, as the
 * header asks, and so is a region's. Other memory types, names of regions
 * and permissions are left to NVTX's no-ops: the report shows none of
 * them.
 *
 * Like allocations, heap records are made in and out of capture windows
 * (outside them flagged GT_EVF_UNCAPTURED): what is in use at any moment
 * depends on everything before it. */
#include "capture_window.h"
#include "clock.h"
#include "event.h"
#include "record.h"
#include "nvtx_internal.h"

#include <nvtx3/nvToolsExtMem.h>

#include <stddef.h>
#include <stdint.h>

#define BATCH_MAX (1u << 20) /* regions read from one call */

#define FIELD_END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

static void record(const gt_nvtx_domain *d, uint8_t op, uint64_t heap, uint64_t region,
                   uint64_t bytes, uint32_t name, uint64_t ticks)
{
    if (!gt_nvtx_enabled()) return;
    gt_event *ev = gt_ev_begin();
    if (!ev) return;
    ev->kind = GT_EV_NVTX_HEAP;
    ev->device = GT_NO_DEVICE;
    ev->flags = gt_capture_open() ? 0 : GT_EVF_UNCAPTURED;
    ev->name = name;
    ev->bytes = bytes;
    ev->host_start = ticks;
    ev->u.heap.heap = heap;
    ev->u.heap.region = region;
    ev->u.heap.domain = d->name;
    ev->u.heap.op = op;
    gt_ev_commit(ev);
}

static uint32_t heap_name(const nvtxMemHeapDesc_t *desc)
{
    if (desc->structSize < FIELD_END(nvtxMemHeapDesc_t, message)) return 0;
    switch (desc->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return gt_nvtx_name_a(NULL, desc->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return gt_nvtx_name_w(desc->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return gt_nvtx_string_id(desc->message.registered);
    default:
        return 0;
    }
}

static nvtxMemHeapHandle_t NVTX_API heap_register(nvtxDomainHandle_t h,
                                                  const nvtxMemHeapDesc_t *desc)
{
    if (!desc || desc->structSize < FIELD_END(nvtxMemHeapDesc_t, typeSpecificDesc) ||
        desc->type != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || !desc->typeSpecificDesc ||
        desc->typeSpecificDescSize < sizeof(nvtxMemVirtualRangeDesc_t))
        return NVTX_MEM_HEAP_HANDLE_NO_TOOL;
    const nvtxMemVirtualRangeDesc_t *range = desc->typeSpecificDesc;
    uint64_t ticks = gt_clock_ticks();
    record(gt_nvtx_domain_of(h), GT_HEAP_REGISTER, (uint64_t)(uintptr_t)range->ptr, 0, range->size,
           heap_name(desc), ticks);
    return (nvtxMemHeapHandle_t)(uintptr_t)range->ptr;
}

static void NVTX_API heap_unregister(nvtxDomainHandle_t h, nvtxMemHeapHandle_t heap)
{
    record(gt_nvtx_domain_of(h), GT_HEAP_UNREGISTER, (uint64_t)(uintptr_t)heap, 0, 0, 0,
           gt_clock_ticks());
}

static void NVTX_API heap_reset(nvtxDomainHandle_t h, nvtxMemHeapHandle_t heap)
{
    record(gt_nvtx_domain_of(h), GT_HEAP_RESET, (uint64_t)(uintptr_t)heap, 0, 0, 0,
           gt_clock_ticks());
}

/* Each region described: (address, size) of process virtual memory. */
static void regions(nvtxDomainHandle_t h, uint8_t op, uint64_t heap, uint32_t type,
                    const void *elements, size_t count, size_t stride,
                    nvtxMemRegionHandle_t *handles)
{
    if (type != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || !elements ||
        stride < sizeof(nvtxMemVirtualRangeDesc_t))
        return;
    const gt_nvtx_domain *d = gt_nvtx_domain_of(h);
    uint64_t ticks = gt_clock_ticks();
    for (size_t i = 0; i < count && i < BATCH_MAX; i++) {
        const nvtxMemVirtualRangeDesc_t *r =
            (const nvtxMemVirtualRangeDesc_t *)((const char *)elements + i * stride);
        record(d, op, heap, (uint64_t)(uintptr_t)r->ptr, r->size, 0, ticks);
        if (handles) handles[i] = (nvtxMemRegionHandle_t)(uintptr_t)r->ptr;
    }
}

static void NVTX_API regions_register(nvtxDomainHandle_t h, const nvtxMemRegionsRegisterBatch_t *b)
{
    if (!b || b->structSize < FIELD_END(nvtxMemRegionsRegisterBatch_t, regionHandleElementsOut))
        return;
    regions(h, GT_HEAP_REGION_ADD, (uint64_t)(uintptr_t)b->heap, b->regionType,
            b->regionDescElements, b->regionCount, b->regionDescElementSize,
            b->regionHandleElementsOut);
}

static void NVTX_API regions_resize(nvtxDomainHandle_t h, const nvtxMemRegionsResizeBatch_t *b)
{
    if (!b || b->structSize < FIELD_END(nvtxMemRegionsResizeBatch_t, regionDescElements)) return;
    regions(h, GT_HEAP_REGION_RESIZE, 0, b->regionType, b->regionDescElements, b->regionDescCount,
            b->regionDescElementSize, NULL);
}

/* By pointer or by handle: both are the region's address here. */
static void NVTX_API regions_unregister(nvtxDomainHandle_t h,
                                        const nvtxMemRegionsUnregisterBatch_t *b)
{
    if (!b || b->structSize < FIELD_END(nvtxMemRegionsUnregisterBatch_t, refElements) ||
        !b->refElements || b->refElementSize < sizeof(nvtxMemRegionRef_t))
        return;
    const gt_nvtx_domain *d = gt_nvtx_domain_of(h);
    uint64_t ticks = gt_clock_ticks();
    for (size_t i = 0; i < b->refCount && i < BATCH_MAX; i++) {
        const nvtxMemRegionRef_t *ref =
            (const nvtxMemRegionRef_t *)((const char *)b->refElements + i * b->refElementSize);
        record(d, GT_HEAP_REGION_REMOVE, 0, (uint64_t)(uintptr_t)ref->pointer, 0, 0, ticks);
    }
}

#define SLOT(name, fn)                                                                             \
    {                                                                                              \
        NVTX3EXT_CBID_##name, (void (*)(void))(fn)                                                 \
    }

const gt_nvtx_slot gt_nvtx_heap_slots[] = {
    SLOT(nvtxMemHeapRegister, heap_register),   SLOT(nvtxMemHeapUnregister, heap_unregister),
    SLOT(nvtxMemHeapReset, heap_reset),         SLOT(nvtxMemRegionsRegister, regions_register),
    SLOT(nvtxMemRegionsResize, regions_resize), SLOT(nvtxMemRegionsUnregister, regions_unregister),
};
const unsigned gt_nvtx_heap_nslots = sizeof gt_nvtx_heap_slots / sizeof gt_nvtx_heap_slots[0];
