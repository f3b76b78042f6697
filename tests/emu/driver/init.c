/* Driver initialisation, version and fork handling. */
#include "emu.h"

#include <dlfcn.h>
#include <stdio.h>
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

/* The tool named in CUDA_INJECTION64_PATH (a CUPTI client) is loaded when
 * the driver first initialises, and its InitializeInjection called, as the
 * real driver does. */
static void load_injection(void)
{
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (!path || !*path) return;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    int (*initialize)(void) = lib ? (int (*)(void))dlsym(lib, "InitializeInjection") : NULL;
    if (!initialize) {
        fprintf(stderr, "gputrace-emu: warning: CUDA_INJECTION64_PATH='%s' not used: %s\n", path,
                lib ? "no InitializeInjection" : dlerror());
        return;
    }
    initialize();
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
    if (gt_device_count == 0) return CUDA_ERROR_NO_DEVICE;
    /* Outside the lock: the tool calls back into the driver. */
    static pthread_once_t injection_once = PTHREAD_ONCE_INIT;
    pthread_once(&injection_once, load_injection);
    return CUDA_SUCCESS;
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
