/* Code registered by nvcc-generated host code: fat binaries, their kernels (host stub ->
 * device name) and variables (host shadow -> device name).
 *
 * Registration runs in static constructors, before main and before the runtime is
 * initialised, so it only records. A fat binary is loaded with cuLibraryLoadData the
 * first time one of its kernels or variables is needed, like the real runtime's lazy
 * loading; libraries are context-independent, so they survive cudaDeviceReset. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"
#include "rt_ptr_table.h"

/* The wrapper nvcc emits for each translation unit's fat binary (fatbinary_section.h). */
#define FATBIN_WRAPPER_MAGIC 0x466243b1

struct fatbin_wrapper {
    int magic;
    int version;
    const unsigned long long *data;
    void *filename_or_fatbins;
};

enum entry_kind { ENTRY_KERNEL, ENTRY_VARIABLE, ENTRY_MANAGED };

struct entry {
    const void *host;        /* host stub or shadow variable: the lookup key */
    const char *device_name; /* owned by the registering module */
    enum entry_kind kind;
    struct fatbin *fatbin;
    CUkernel kernel;     /* ENTRY_KERNEL, once resolved */
    void **managed_slot; /* ENTRY_MANAGED: where the host code reads the pointer */
    void *managed;       /* ENTRY_MANAGED, once bound: the allocation, a second key */
    struct entry *next;  /* in the fat binary's list */
};

struct fatbin {
    const void *image;
    CUlibrary library;   /* NULL until loaded */
    cudaError_t failure; /* a load that failed stays failed, as in the real runtime */
    struct entry *entries;
    struct fatbin *next; /* in the list of registered fat binaries */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_ptr_table table; /* host pointer -> struct entry */
static struct fatbin *fatbins;

RT_API void **__cudaRegisterFatBinary(void *fatCubin)
{
    struct fatbin *fb = calloc(1, sizeof(*fb));
    if (fb == NULL) return NULL;
    const struct fatbin_wrapper *wrapper = fatCubin;
    fb->image = wrapper->magic == FATBIN_WRAPPER_MAGIC ? (const void *)wrapper->data : fatCubin;
    pthread_mutex_lock(&registry_lock);
    fb->next = fatbins;
    fatbins = fb;
    pthread_mutex_unlock(&registry_lock);
    return (void **)fb;
}

RT_API void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    (void)fatCubinHandle;
}

static void add_entry(void **handle, const void *host, const char *device_name,
                      enum entry_kind kind, void **managed_slot)
{
    struct fatbin *fb = (struct fatbin *)handle;
    struct entry *e = calloc(1, sizeof(*e));
    if (fb == NULL || e == NULL) {
        free(e);
        return;
    }
    *e = (struct entry){.host = host,
                        .device_name = device_name,
                        .kind = kind,
                        .fatbin = fb,
                        .managed_slot = managed_slot};
    pthread_mutex_lock(&registry_lock);
    if (gt_rt_ptr_table_put(&table, host, e)) {
        e->next = fb->entries;
        fb->entries = e;
    } else {
        free(e);
    }
    pthread_mutex_unlock(&registry_lock);
}

RT_API void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                   const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                                   dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)deviceName, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    add_entry(fatCubinHandle, hostFun, deviceFun, ENTRY_KERNEL, NULL);
}

RT_API void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant,
                              int global)
{
    (void)deviceName, (void)ext, (void)size, (void)constant, (void)global;
    add_entry(fatCubinHandle, hostVar, deviceAddress, ENTRY_VARIABLE, NULL);
}

RT_API void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                     char *deviceAddress, const char *deviceName, int ext,
                                     size_t size, int constant, int global)
{
    (void)deviceName, (void)ext, (void)size, (void)constant, (void)global;
    add_entry(fatCubinHandle, hostVarPtrAddress, deviceAddress, ENTRY_MANAGED, hostVarPtrAddress);
}

/* Loads a fat binary on first use (caller holds registry_lock). */
static cudaError_t load_fatbin(struct fatbin *fb)
{
    if (fb->library != NULL || fb->failure != cudaSuccess) return fb->failure;
    cudaError_t err = gt_rt_init();
    if (err != cudaSuccess) return err;
    err = RT_CALL(gt_rt_drv.libraryLoadData, &fb->library, fb->image, NULL, NULL, 0, NULL, NULL, 0);
    if (err != cudaSuccess) {
        fb->library = NULL;
        fb->failure = err;
    }
    return err;
}

/* Points each managed variable's host slot at its managed allocation. */
static cudaError_t bind_managed(struct fatbin *fb)
{
    for (struct entry *e = fb->entries; e != NULL; e = e->next) {
        if (e->kind != ENTRY_MANAGED) continue;
        CUdeviceptr dptr = 0;
        size_t bytes = 0;
        cudaError_t err =
            RT_CALL(gt_rt_drv.libraryGetManaged, &dptr, &bytes, fb->library, e->device_name);
        if (err != cudaSuccess) return err;
        *e->managed_slot = (void *)(uintptr_t)dptr;
        /* Host code names a managed variable by dereferencing its slot, so symbol
         * APIs receive the allocation's address: make that a key too. */
        if (e->managed == NULL && gt_rt_ptr_table_put(&table, *e->managed_slot, e))
            e->managed = *e->managed_slot;
    }
    return cudaSuccess;
}

RT_API char __cudaInitModule(void **fatCubinHandle)
{
    struct fatbin *fb = (struct fatbin *)fatCubinHandle;
    if (fb == NULL) return 0;
    pthread_mutex_lock(&registry_lock);
    cudaError_t err = load_fatbin(fb);
    if (err == cudaSuccess) err = bind_managed(fb);
    pthread_mutex_unlock(&registry_lock);
    return err == cudaSuccess;
}

RT_API void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    struct fatbin *fb = (struct fatbin *)fatCubinHandle;
    if (fb == NULL) return;
    pthread_mutex_lock(&registry_lock);
    for (struct entry *e = fb->entries, *next; e != NULL; e = next) {
        next = e->next;
        gt_rt_ptr_table_remove(&table, e->host);
        gt_rt_ptr_table_remove(&table, e->managed);
        free(e);
    }
    for (struct fatbin **p = &fatbins; *p != NULL; p = &(*p)->next) {
        if (*p == fb) {
            *p = fb->next;
            break;
        }
    }
    /* After the exit handler the libraries are already unloaded (library is NULL). */
    if (fb->library != NULL) (void)RT_CALL(gt_rt_drv.libraryUnload, fb->library);
    pthread_mutex_unlock(&registry_lock);
    free(fb);
}

void gt_rt_unload_libraries(void)
{
    pthread_mutex_lock(&registry_lock);
    for (struct fatbin *fb = fatbins; fb != NULL; fb = fb->next) {
        if (fb->library != NULL) (void)RT_CALL(gt_rt_drv.libraryUnload, fb->library);
        fb->library = NULL;
        /* Later uses report that the runtime is shutting down. */
        fb->failure = cudaErrorCudartUnloading;
        for (struct entry *e = fb->entries; e != NULL; e = e->next)
            e->kernel = NULL;
    }
    pthread_mutex_unlock(&registry_lock);
}

#define KIND(k) (1u << (k))

/* Looks up a registered entry of one of the kinds in `kinds` and loads its fat binary. */
static cudaError_t loaded_entry(const void *host, unsigned kinds, struct entry **out)
{
    struct entry *e = gt_rt_ptr_table_get(&table, host);
    if (e == NULL || (KIND(e->kind) & kinds) == 0) {
        *out = NULL;
        return cudaSuccess;
    }
    *out = e;
    return load_fatbin(e->fatbin);
}

const char *gt_rt_stub_name(const void *func)
{
    pthread_mutex_lock(&registry_lock);
    const struct entry *e = gt_rt_ptr_table_get(&table, func);
    const char *name = e != NULL && e->kind == ENTRY_KERNEL ? e->device_name : NULL;
    pthread_mutex_unlock(&registry_lock);
    return name;
}

cudaError_t gt_rt_kernel_for_stub(const void *func, CUkernel *kernel, bool *registered)
{
    struct entry *e;
    pthread_mutex_lock(&registry_lock);
    cudaError_t err = loaded_entry(func, KIND(ENTRY_KERNEL), &e);
    if (err == cudaSuccess && e != NULL && e->kernel == NULL) {
        err = RT_CALL(gt_rt_drv.libraryGetKernel, &e->kernel, e->fatbin->library, e->device_name);
        if (err == cudaErrorSymbolNotFound) err = cudaErrorInvalidDeviceFunction;
    }
    *registered = e != NULL;
    *kernel = e != NULL ? e->kernel : NULL;
    pthread_mutex_unlock(&registry_lock);
    return err;
}

cudaError_t gt_rt_symbol_address(const void *symbol, CUdeviceptr *address, size_t *size)
{
    struct entry *e;
    pthread_mutex_lock(&registry_lock);
    cudaError_t err = loaded_entry(symbol, KIND(ENTRY_VARIABLE) | KIND(ENTRY_MANAGED), &e);
    if (err == cudaSuccess && e == NULL) err = cudaErrorInvalidSymbol;
    if (err == cudaSuccess && e->kind == ENTRY_MANAGED)
        err =
            RT_CALL(gt_rt_drv.libraryGetManaged, address, size, e->fatbin->library, e->device_name);
    else if (err == cudaSuccess)
        err =
            RT_CALL(gt_rt_drv.libraryGetGlobal, address, size, e->fatbin->library, e->device_name);
    pthread_mutex_unlock(&registry_lock);
    return err;
}

static cudaError_t get_kernel(cudaKernel_t *kernel, const void *func)
{
    if (kernel == NULL) return cudaErrorInvalidValue;
    bool registered;
    cudaError_t err = gt_rt_kernel_for_stub(func, kernel, &registered);
    if (err == cudaSuccess && !registered) err = cudaErrorInvalidDeviceFunction;
    return err;
}

RT_API cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
    return gt_rt_result(get_kernel(kernel, func));
}

RT_API cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
    return gt_rt_result(get_kernel(kernelPtr, entryFuncAddr));
}
