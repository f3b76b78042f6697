/* Virtual memory management: physical allocations are memfd files,
 * reservations are inaccessible address ranges, and cuMemMap maps the
 * file into the reservation, so one allocation mapped twice really aliases.
 * Mapped ranges are device memory in the address table; copies and
 * memsets refuse them until cuMemSetAccess. */
#include "emu.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define GT_VMM_GRANULARITY (2u << 20)

struct physical {
    unsigned long long handle;
    int fd;
    size_t size;
    struct gt_device *dev;
    CUmemAllocationProp prop;
    int refs;      /* the handle itself and each mapping */
    bool released; /* cuMemRelease'd: only its mappings keep it */
    struct physical *next;
};

struct reservation {
    uintptr_t base;
    size_t size;
    struct reservation *next;
};

static pthread_mutex_t vmm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct physical *physicals;
static struct reservation *reservations;
static unsigned long long next_handle = 1;

/* vmm_lock held; released allocations are found only with `any`. */
static struct physical *find_physical(unsigned long long handle, bool any)
{
    for (struct physical *p = physicals; p; p = p->next)
        if (p->handle == handle && (any || !p->released)) return p;
    return NULL;
}

/* vmm_lock held. */
static struct reservation *find_reservation(uintptr_t addr, size_t size)
{
    for (struct reservation *r = reservations; r; r = r->next)
        if (addr >= r->base && addr + size <= r->base + r->size) return r;
    return NULL;
}

/* vmm_lock held: drops one reference. */
static void unref_physical(struct physical *p)
{
    if (--p->refs > 0) return;
    for (struct physical **pp = &physicals; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
    close(p->fd);
    free(p);
}

static CUresult check_prop(const CUmemAllocationProp *prop, struct gt_device **dev)
{
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    return gt_device_get(prop->location.id, dev) == CUDA_SUCCESS ? CUDA_SUCCESS
                                                                 : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    struct gt_device *dev;
    if (!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
                         option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    r = check_prop(prop, &dev);
    if (r == CUDA_SUCCESS) *granularity = GT_VMM_GRANULARITY;
    return r;
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                             const CUmemAllocationProp *prop, unsigned long long flags)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    struct gt_device *dev;
    r = check_prop(prop, &dev);
    if (r != CUDA_SUCCESS) return r;
    if (!handle || flags || size == 0 || size % GT_VMM_GRANULARITY) return CUDA_ERROR_INVALID_VALUE;
    struct physical *p = calloc(1, sizeof *p);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    p->fd = memfd_create("gtemu-vmm", MFD_CLOEXEC);
    if (p->fd < 0 || ftruncate(p->fd, (off_t)size) != 0) {
        if (p->fd >= 0) close(p->fd);
        free(p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    p->size = size;
    p->dev = dev;
    p->prop = *prop;
    p->refs = 1;
    pthread_mutex_lock(&vmm_lock);
    p->handle = next_handle++;
    p->next = physicals;
    physicals = p;
    *handle = p->handle;
    pthread_mutex_unlock(&vmm_lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    pthread_mutex_lock(&vmm_lock);
    struct physical *p = find_physical(handle, false);
    if (p) {
        p->released = true;
        unref_physical(p);
    }
    pthread_mutex_unlock(&vmm_lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                        CUmemGenericAllocationHandle handle)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!prop) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm_lock);
    struct physical *p = find_physical(handle, false);
    if (p) *prop = p->prop;
    pthread_mutex_unlock(&vmm_lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                     CUdeviceptr addr, unsigned long long flags)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!ptr || flags || size == 0 || size % GT_VMM_GRANULARITY || (alignment & (alignment - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    size_t align = alignment > GT_VMM_GRANULARITY ? alignment : GT_VMM_GRANULARITY;
    struct reservation *res = malloc(sizeof *res);
    if (!res) return CUDA_ERROR_OUT_OF_MEMORY;
    /* Over-reserve, then trim to the alignment. */
    char *raw = mmap((void *)(uintptr_t)addr, size + align, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) {
        free(res);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    uintptr_t base = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
    if (base > (uintptr_t)raw) munmap(raw, base - (uintptr_t)raw);
    uintptr_t tail = base + size, raw_end = (uintptr_t)raw + size + align;
    if (raw_end > tail) munmap((void *)tail, raw_end - tail);
    res->base = base;
    res->size = size;
    pthread_mutex_lock(&vmm_lock);
    res->next = reservations;
    reservations = res;
    pthread_mutex_unlock(&vmm_lock);
    *ptr = (CUdeviceptr)base;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    pthread_mutex_lock(&vmm_lock);
    struct reservation *found = NULL;
    for (struct reservation **pp = &reservations; *pp; pp = &(*pp)->next) {
        if ((*pp)->base == (uintptr_t)ptr && (*pp)->size == size &&
            !gt_mem_overlaps((uintptr_t)ptr, size)) {
            found = *pp;
            *pp = found->next;
            break;
        }
    }
    pthread_mutex_unlock(&vmm_lock);
    if (!found) return CUDA_ERROR_INVALID_VALUE; /* unknown, or still mapped */
    munmap((void *)found->base, found->size);
    free(found);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                          CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (flags || size == 0 || size % GT_VMM_GRANULARITY || offset % GT_VMM_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm_lock);
    struct physical *p = find_physical(handle, false);
    struct reservation *res = find_reservation((uintptr_t)ptr, size);
    if (!p || !res || offset > p->size || size > p->size - offset ||
        gt_mem_overlaps((uintptr_t)ptr, size)) {
        pthread_mutex_unlock(&vmm_lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    void *m = mmap((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                   p->fd, (off_t)offset);
    if (m == MAP_FAILED) {
        pthread_mutex_unlock(&vmm_lock);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    struct gt_alloc a = {.base = (uintptr_t)ptr,
                         .size = size,
                         .kind = GT_MEM_VMM,
                         .dev = p->dev,
                         .ctx = ctx,
                         .id = handle,
                         .range_base = res->base,
                         .range_size = res->size};
    r = gt_mem_insert(&a);
    if (r == CUDA_SUCCESS) p->refs++;
    pthread_mutex_unlock(&vmm_lock);
    return r;
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    struct gt_alloc a;
    if (!gt_mem_find((uintptr_t)ptr, 0, &a) || a.kind != GT_MEM_VMM || a.base != (uintptr_t)ptr ||
        a.size != size)
        return CUDA_ERROR_INVALID_VALUE;
    gt_ctx_synchronize_work(a.ctx);
    gt_mem_remove((uintptr_t)ptr, GT_MEM_MASK(GT_MEM_VMM), NULL);
    mmap((void *)(uintptr_t)ptr, size, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    pthread_mutex_lock(&vmm_lock);
    struct physical *p = find_physical(a.id, true);
    if (p) unref_physical(p);
    pthread_mutex_unlock(&vmm_lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                size_t count)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!desc || count == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
    bool accessible = false;
    for (size_t i = 0; i < count; i++) {
        struct gt_device *dev;
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
            gt_device_get(desc[i].location.id, &dev) != CUDA_SUCCESS)
            return CUDA_ERROR_INVALID_DEVICE;
        if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
            desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
            desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return CUDA_ERROR_INVALID_VALUE;
        accessible = accessible || desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE;
    }
    pthread_mutex_lock(&vmm_lock);
    bool reserved = find_reservation((uintptr_t)ptr, size) != NULL;
    pthread_mutex_unlock(&vmm_lock);
    if (!reserved) return CUDA_ERROR_INVALID_VALUE;
    gt_mem_set_access((uintptr_t)ptr, size, accessible);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location,
                                CUdeviceptr ptr)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    struct gt_alloc a;
    if (!flags || !location || !gt_mem_find((uintptr_t)ptr, 0, &a) || a.kind != GT_MEM_VMM)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = a.accessible ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    struct gt_alloc a;
    if (!handle || !gt_mem_find((uintptr_t)addr, 0, &a) || a.kind != GT_MEM_VMM)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm_lock);
    struct physical *p = find_physical(a.id, true);
    if (p) {
        p->refs++;
        p->released = false; /* the handle is valid again until released */
    }
    pthread_mutex_unlock(&vmm_lock);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    *handle = a.id;
    return CUDA_SUCCESS;
}
