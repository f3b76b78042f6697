/* Driver initialisation, version and fork handling. */
#include "emu.h"

#include <stdlib.h>

_Atomic int gt_state;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long long next_id = 1;

unsigned long long gt_next_id(void)
{
    /* Relaxed: ids only need to be unique. */
    return atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
}

/* A child forked after cuInit cannot use CUDA: as with the real driver,
 * every call (cuInit included) then returns CUDA_ERROR_NOT_INITIALIZED.
 * This also keeps the child away from locks held by threads that do not
 * exist in it. */
static void after_fork_in_child(void)
{
    if (atomic_load_explicit(&gt_state, memory_order_relaxed) == GT_STATE_READY)
        atomic_store_explicit(&gt_state, GT_STATE_FORKED, memory_order_relaxed);
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    int state = atomic_load_explicit(&gt_state, memory_order_acquire);
    if (state == GT_STATE_READY) return CUDA_SUCCESS;
    if (state == GT_STATE_FORKED) return CUDA_ERROR_NOT_INITIALIZED;
    static bool devices_done;
    pthread_mutex_lock(&init_lock);
    if (!devices_done) {
        gt_devices_init();
        pthread_atfork(NULL, NULL, after_fork_in_child);
        devices_done = true;
    }
    /* Without devices the driver stays uninitialised, as the real one. */
    if (gt_device_count > 0) /* Release: devices are set up before any thread sees READY. */
        atomic_store_explicit(&gt_state, GT_STATE_READY, memory_order_release);
    pthread_mutex_unlock(&init_lock);
    return gt_device_count > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = GT_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

/* The private tables the real runtime needs cannot be provided. */
CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    if (ppExportTable) *ppExportTable = NULL;
    (void)pExportTableId;
    return CUDA_ERROR_NOT_SUPPORTED;
}
