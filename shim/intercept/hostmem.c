/* Host memory kind of a copy's host side.
 *
 * The registry (hostmem_registry.h), fed by the allocation hooks, knows
 * the page-locked and managed host memory allocated or registered since
 * the shim was loaded: a copy's lookup there makes no driver call. A
 * pointer it does not hold is pageable memory, or memory the shim could
 * not see allocated (before it was loaded, or through a path it does not
 * intercept), or device memory (unified copies): for those the driver is
 * asked once per page (cuPointerGetAttributes: memory type and managed
 * flag in one call) and the answer cached with the registry's version, so
 * that any allocation or free the hooks see makes it be asked again. */
#include "hostmem_registry.h"
#include "config.h"
#include "event.h"
#include "log.h"
#include "record.h"
#include "intercept.h"
#include "ptrmap.h"
#include "resolve.h"

#include <cuda.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#define PAGE_MASK ((uintptr_t)4095)

typedef CUresult (*attributes_fn)(unsigned n, CUpointer_attribute *attrs, void **data,
                                  CUdeviceptr ptr);

static gt_real_cache attributes;

/* Page address -> registry version << 8 | (kind + 1). */
GT_PTRMAP_DEFINE(driver_answers, 12);

int gt_host_mem_tracking(void)
{
    /* The checksums ask it of every copy read back, whatever is recorded. */
    return (gt_cfg.categories & GT_CAT_BIT(GT_CAT_MEMCPY)) != 0 ||
           gt_cfg.checksum.kind != GT_CHECKSUM_OFF;
}

void gt_host_mem_note(const void *start, uint64_t bytes, enum gt_host_mem kind)
{
    if (gt_hostmem_add((uintptr_t)start, bytes, kind) == 0) return;
    static _Atomic int warned; /* exchange, relaxed: one warning */
    if (bytes && !atomic_exchange_explicit(&warned, 1, memory_order_relaxed))
        gt_warn("too many page-locked host ranges to track: copies from the others are "
                "classified by asking the driver");
}

void gt_host_mem_forget(const void *start)
{
    gt_hostmem_remove((uintptr_t)start);
}

void gt_host_mem_context_ended(void)
{
    gt_hostmem_clear();
}

static enum gt_host_mem ask_driver(const void *ptr)
{
    attributes_fn get = (attributes_fn)gt_cuda_real_once(&attributes, "cuPointerGetAttributes");
    if (!get) return GT_HOST_PAGEABLE;
    CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CU_POINTER_ATTRIBUTE_IS_MANAGED};
    /* Drivers write IS_MANAGED as a bool or an int: zeroed ints read right either way. */
    unsigned type = 0;
    int managed = 0;
    void *data[2] = {&type, &managed};
    int entered = gt_guard_enter();
    /* Unlike cuPointerGetAttribute, an unknown (pageable) pointer is no
     * error here: its memory type reads 0. */
    CUresult r = get(2, attrs, data, (CUdeviceptr)(uintptr_t)ptr);
    if (entered) gt_guard_leave();
    if (r != CUDA_SUCCESS) return GT_HOST_PAGEABLE;
    if (managed) return GT_HOST_MANAGED;
    if (type == CU_MEMORYTYPE_HOST) return GT_HOST_PINNED;
    if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_ARRAY) return GT_HOST_NONE;
    return GT_HOST_PAGEABLE;
}

enum gt_host_mem gt_host_mem_kind(const void *ptr)
{
    if (!ptr) return GT_HOST_PAGEABLE;
    uint32_t version;
    enum gt_host_mem kind = gt_hostmem_lookup((uintptr_t)ptr, &version);
    if (kind != GT_HOST_NONE) return kind;
    uint64_t page = (uint64_t)((uintptr_t)ptr & ~PAGE_MASK);
    int cacheable = page != 0 && version != GT_HOSTMEM_BUSY;
    if (cacheable) {
        uint64_t v = gt_ptrmap_get(&driver_answers, page);
        if (v && (uint32_t)(v >> 8) == version) return (enum gt_host_mem)((v & 0xffu) - 1);
    }
    int saved = errno;
    kind = ask_driver(ptr);
    /* A full probe window leaves the page uncached: asked again next time. */
    if (cacheable) gt_ptrmap_put(&driver_answers, page, (uint64_t)version << 8 | (kind + 1u));
    errno = saved;
    return kind;
}
