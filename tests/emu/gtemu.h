/* Introspection API of the emulated CUDA driver (libcuda.so.1 built from
 * tests/emu/driver). Tests look these up at run time so that they also
 * build and run against a real driver, where the lookups fail:
 *
 *     gtemu_counter_fn launches = (gtemu_counter_fn)dlsym(RTLD_DEFAULT, "gtemu_launches");
 *
 * Counters are process-wide and count from process start or the last
 * gtemu_reset(). */
#ifndef GTEMU_H
#define GTEMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t (*gtemu_counter_fn)(void);

/* Kernel launches executed on streams (cuLaunchKernel, cuLaunchKernelEx,
 * cuLaunchCooperativeKernel and their _ptsz forms); captured launches and
 * kernels run by graph launches are not counted. */
uint64_t gtemu_launches(void);
/* cuGraphLaunch calls that ran a graph. */
uint64_t gtemu_graph_launches(void);
/* Event records on streams that were not capturing. */
uint64_t gtemu_event_records(void);
/* Event records on capturing streams (they become part of the graph). */
uint64_t gtemu_capture_event_records(void);
/* Successful cuEventCreate calls. */
uint64_t gtemu_events_created(void);
/* cuGetProcAddress / cuGetProcAddress_v2 requests. */
uint64_t gtemu_proc_address_requests(void);
/* Successful loads through `api` ("cuModuleLoad", "cuModuleLoadData",
 * "cuModuleLoadDataEx", "cuModuleLoadFatBinary", "cuLibraryLoadData",
 * "cuLibraryLoadFromFile") of images of `kind`, the image's own format:
 * "ptx", "cubin" or "fatbin". */
uint64_t gtemu_loads(const char *api, const char *kind);
/* Sets every counter to zero. */
void gtemu_reset(void);

/* Simulated duration of a kernel named `name` (mangled), as configured by
 * GPUTRACE_EMU_KERNEL_NS. */
uint64_t gtemu_kernel_ns(const char *name);
/* Simulated duration of moving `bytes` at the configured rate of `kind`:
 * "pageable", "pinned", "dtod", "memset" or "peer" (0 for other kinds). */
uint64_t gtemu_transfer_ns(size_t bytes, const char *kind);

#ifdef __cplusplus
}
#endif

#endif
