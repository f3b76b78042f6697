/* The manifest a test program writes of the work it did, for comparison with what a
 * tracer reports. Written at exit by app_manifest_write() when the environment variable
 * GT_APP_MANIFEST names a file ("%p" in it becomes the process id). Thread-safe.
 * The JSON format is described in tests/emu/README.md ("Runtime" section). */
#ifndef APP_MANIFEST_H
#define APP_MANIFEST_H

#include <stdbool.h>

enum app_direction { APP_HTOD, APP_DTOH, APP_DTOD, APP_HTOH, APP_DIRECTIONS };
enum app_host_memory { APP_PAGEABLE, APP_PINNED, APP_MANAGED, APP_NO_HOST, APP_HOST_MEMORIES };

#ifdef __cplusplus
extern "C" {
#endif

/* `calls` launches of the kernel whose demangled name without parameter list (and,
 * for templates, without return type) is `name`; `captured`: issued into a stream
 * being captured, so they ran only as part of graph launches. */
void app_manifest_kernel(const char *name, unsigned long long calls, bool captured);
/* One copy of `bytes` bytes. */
void app_manifest_copy(enum app_direction direction, enum app_host_memory host_memory, bool async,
                       unsigned long long bytes, bool captured);
/* One memset of `bytes` bytes. */
void app_manifest_memset(unsigned long long bytes, bool async, bool captured);
/* `calls` calls of an explicit synchronisation API (cudaDeviceSynchronize,
 * cuStreamSynchronize, ...). */
void app_manifest_sync(const char *api, unsigned long long calls);
/* `calls` graph launches. */
void app_manifest_graph_launch(unsigned long long calls);
/* A call the program made that failed, with the error's name (CUDA_ERROR_... or
 * cudaError...). */
void app_manifest_error(const char *api, const char *error);
/* Forgets everything recorded so far: a child process forked by the program calls it
 * so that its manifest holds only its own work. */
void app_manifest_reset(void);
/* Writes the manifest if GT_APP_MANIFEST is set; 0 on success or when not asked for. */
int app_manifest_write(const char *program);

#ifdef __cplusplus
}
#endif

#endif
