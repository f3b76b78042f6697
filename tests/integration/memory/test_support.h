/* Small helpers of the memory and compile test programs. */
#ifndef GT_TEST_SUPPORT_H
#define GT_TEST_SUPPORT_H

#include <cuda.h>
#include <stddef.h>

#include "app_driver.h" /* app_check */

/* cuInit, then a context on device 0, current on the calling thread. */
CUcontext context_on_device0(void);

/* A kernel that does nothing, named `name`, in a module of its own loaded
 * as PTX into the current context; *ptx_bytes (when not NULL) gets the
 * PTX's size. */
CUfunction empty_kernel(const char *name, size_t *ptx_bytes);

/* The whole file, NUL-terminated and 8-byte aligned (as nvcc aligns fat
 * binaries), its size in *size; exits as app_wrong does when unreadable. */
char *read_whole_file(const char *path, size_t *size);

#endif
