/* Host memory kind of a copy's host side, asked of the driver for each copy
 * (cuPointerGetAttributes: memory type and managed flag in one call). The
 * memory category replaces this by an address registry fed by the
 * allocation hooks; the rest of the shim only knows gt_host_mem_kind. */
#include "internal.h"
#include "intercept.h"
#include "resolve.h"

#include <cuda.h>

typedef CUresult (*attributes_fn)(unsigned n, CUpointer_attribute *attrs, void **data,
                                  CUdeviceptr ptr);

static gt_real_cache attributes;

enum gt_host_mem gt_host_mem_kind(const void *ptr)
{
    attributes_fn get = (attributes_fn)gt_cuda_real_once(&attributes, "cuPointerGetAttributes");
    if (!get || !ptr) return GT_HOST_PAGEABLE;
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
