/* Reaching the driver: dlopen("libcuda.so.1"), dlsym("cuGetProcAddress_v2"), then every
 * entry point of rt_entry_points.def through it, exactly as the real runtime does at
 * initialisation. The runtime then calls the subset named in rt_driver_used.def. */
#include <dlfcn.h>
#include <string.h>

#include "rt_internal.h"

struct rt_driver gt_rt_drv;

struct entry_point {
    const char *symbol;
    int version;
    cuuint64_t flags;
};

static const struct entry_point entry_points[] = {
#define RT_ENTRY(symbol, version, flags) {#symbol, version, flags},
#include "rt_entry_points.def"
#undef RT_ENTRY
};

#define ENTRY_POINT_COUNT (sizeof(entry_points) / sizeof(entry_points[0]))

static void *resolved[ENTRY_POINT_COUNT];

static void *find_resolved(const char *symbol, int version, cuuint64_t flags)
{
    for (size_t i = 0; i < ENTRY_POINT_COUNT; i++) {
        const struct entry_point *e = &entry_points[i];
        if (e->version == version && e->flags == flags && strcmp(e->symbol, symbol) == 0)
            return resolved[i];
    }
    return NULL;
}

static void bind_used(void)
{
#define RT_USE(field, symbol, version, type)                                                       \
    gt_rt_drv.field = (type)find_resolved(#symbol, version, CU_GET_PROC_ADDRESS_DEFAULT);
#define RT_USE2(field, symbol, version, ptds_version, type)                                        \
    gt_rt_drv.field[RT_LEGACY] =                                                                   \
        (type)find_resolved(#symbol, version, CU_GET_PROC_ADDRESS_DEFAULT);                        \
    gt_rt_drv.field[RT_PER_THREAD] =                                                               \
        (type)find_resolved(#symbol, ptds_version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
#include "rt_driver_used.def"
#undef RT_USE
#undef RT_USE2
}

cudaError_t gt_rt_driver_load(void)
{
    /* The handle stays open for the life of the process, as the real runtime's does. */
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (libcuda == NULL) return cudaErrorInsufficientDriver;
    PFN_cuGetProcAddress_v12000 get_proc =
        (PFN_cuGetProcAddress_v12000)dlsym(libcuda, "cuGetProcAddress_v2");
    if (get_proc == NULL) return cudaErrorInsufficientDriver;

    /* The real runtime's first request names no symbol at version 0 and is answered
     * "not found": kept, so that a driver-level observer sees the same sequence. */
    CUdriverProcAddressQueryResult probe_found;
    void *probe = NULL;
    get_proc("", &probe, 0, CU_GET_PROC_ADDRESS_DEFAULT, &probe_found);

    for (size_t i = 0; i < ENTRY_POINT_COUNT; i++) {
        const struct entry_point *e = &entry_points[i];
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        void *pfn = NULL;
        /* A lookup that fails leaves the entry NULL: the calls that need it then report
         * cudaErrorCallRequiresNewerDriver (RT_CALL), as with an older driver. */
        CUresult res = get_proc(e->symbol, &pfn, e->version, e->flags, &found);
        resolved[i] = res == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS ? pfn : NULL;
    }
    bind_used();
    return cudaSuccess;
}
