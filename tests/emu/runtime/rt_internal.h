/* Internal interface of the emulated CUDA runtime (libcudart.so.13).
 *
 * The runtime is a thin layer over the driver API, reached the way the real
 * runtime reaches it: dlopen("libcuda.so.1"), dlsym("cuGetProcAddress_v2"), then one
 * cuGetProcAddress_v2 call per entry point. Runtime handles (streams, events, graphs,
 * libraries, kernels) are the driver handles themselves, as the CUDA headers allow.
 */
#ifndef GT_RT_INTERNAL_H
#define GT_RT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

/* Exported API entry points; everything else in the library is hidden. */
#define RT_API __attribute__((visibility("default")))

/* A runtime pointer as a driver device address. */
#define RT_DPTR(p) ((CUdeviceptr)(uintptr_t)(p))

/* Index into an RT_USE2 pair: the per-thread-default-stream variant is [1]. */
enum rt_stream_mode { RT_LEGACY = 0, RT_PER_THREAD = 1 };

struct rt_driver {
#define RT_USE(field, symbol, version, type) type field;
#define RT_USE2(field, symbol, version, ptds_version, type) type field[2];
#include "rt_driver_used.def"
#undef RT_USE
#undef RT_USE2
};

/* Filled once by gt_rt_driver_load(); read-only afterwards. */
extern struct rt_driver gt_rt_drv;

/* rt_driver.c: open libcuda.so.1 and resolve every entry point. Returns cudaSuccess or
 * cudaErrorInsufficientDriver (no driver library or no cuGetProcAddress_v2). */
cudaError_t gt_rt_driver_load(void);

/* Calls a driver entry point and maps its result; an entry point the driver did not
 * provide reports what an older driver would. */
#define RT_CALL(fn, ...)                                                                           \
    ((fn) != NULL ? gt_rt_from_cu((fn)(__VA_ARGS__)) : cudaErrorCallRequiresNewerDriver)

/* rt_error.c */
cudaError_t gt_rt_from_cu(CUresult res);
/* Records a non-success result as the calling thread's last error and returns it. */
cudaError_t gt_rt_result(cudaError_t err);
/* The context-corrupting error every later call returns, or cudaSuccess. */
cudaError_t gt_rt_sticky_error(void);

/* Body of an API call: `first` (a precondition such as binding the context), then one
 * driver call, the result recorded as the last error on failure. */
#define RT_AFTER(first, call)                                                                      \
    do {                                                                                           \
        cudaError_t err_ = (first);                                                                \
        if (err_ == cudaSuccess) err_ = (call);                                                    \
        return gt_rt_result(err_);                                                                 \
    } while (0)
#define RT_WITH_CONTEXT(call) RT_AFTER(gt_rt_context(), call)

/* rt_state.c: initialisation, per-thread device and context binding. */
/* Loads the driver and initialises it once per process. */
cudaError_t gt_rt_init(void);
/* Makes sure the calling thread has a current context (its device's primary context
 * unless a context was already current), as every call that needs one does first. */
cudaError_t gt_rt_context(void);
/* Device of the context gt_rt_context() bound for this thread. */
int gt_rt_current_device(void);
int gt_rt_device_count(void);
/* Limits used to validate launch configurations the way the runtime does. */
struct rt_launch_limits {
    int max_threads_per_block;
    int max_block[3];
    int max_grid[3];
};
const struct rt_launch_limits *gt_rt_launch_limits(void);
/* The device's primary context, retained once per process (peer copies name both). */
cudaError_t gt_rt_primary_context(int device, CUcontext *ctx);
/* Selects a device for this thread and binds its primary context. */
cudaError_t gt_rt_set_device(int device);
/* Destroys the state of a device's primary context (cudaDeviceReset). */
cudaError_t gt_rt_reset_device(int device);

/* rt_register.c: kernels and variables registered by nvcc-generated code. */
/* The kernel of a registered host stub, its fat binary loaded on first use;
 * *registered is false (and *kernel NULL) when `func` is no registered stub. */
cudaError_t gt_rt_kernel_for_stub(const void *func, CUkernel *kernel, bool *registered);
/* The device (mangled) name of a registered kernel's host stub, else NULL. */
const char *gt_rt_stub_name(const void *func);
/* Device address and size of a registered __device__, __constant__ or __managed__
 * variable in the current context; cudaErrorInvalidSymbol for anything else. */
cudaError_t gt_rt_symbol_address(const void *symbol, CUdeviceptr *address, size_t *size);
/* Unloads every loaded library (exit handler). */
void gt_rt_unload_libraries(void);

#endif
