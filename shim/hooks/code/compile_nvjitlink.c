/* nvJitLink: nvJitLinkComplete is one `compile` record with the link's
 * inputs (count and bytes, noted as they are added from memory or files),
 * the option count given to nvJitLinkCreate, status and wall time. The
 * record names the link after its first named input.
 *
 * The library exports each function twice: under its plain name, and
 * under the versioned name its header's inline functions call
 * (__nvJitLinkCreate_13_0 ...), which is what programs built with the
 * CUDA 13 header reference. Both are wrapped. */
#define NVJITLINK_NO_INLINE 1
#include <nvJitLink.h>
#include <stdio.h>
#include <sys/stat.h>

#include "compile.h"
#include "handles.h"

/* The plain names, which the header declares only as inline functions. */
nvJitLinkResult nvJitLinkCreate(nvJitLinkHandle *handle, uint32_t numOptions, const char **options);
nvJitLinkResult nvJitLinkDestroy(nvJitLinkHandle *handle);
nvJitLinkResult nvJitLinkAddData(nvJitLinkHandle handle, nvJitLinkInputType inputType,
                                 const void *data, size_t size, const char *name);
nvJitLinkResult nvJitLinkAddFile(nvJitLinkHandle handle, nvJitLinkInputType inputType,
                                 const char *fileName);
nvJitLinkResult nvJitLinkComplete(nvJitLinkHandle handle);

/* nvJitLinkHandle -> its inputs and option count (compile.h). */
static gt_handle_table links;

/* nvJitLink.h, nvJitLinkResult: the library has no function naming them. */
static const char *const status_names[] = {
    "NVJITLINK_SUCCESS",
    "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
    "NVJITLINK_ERROR_MISSING_ARCH",
    "NVJITLINK_ERROR_INVALID_INPUT",
    "NVJITLINK_ERROR_PTX_COMPILE",
    "NVJITLINK_ERROR_NVVM_COMPILE",
    "NVJITLINK_ERROR_INTERNAL",
    "NVJITLINK_ERROR_THREADPOOL",
    "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
    "NVJITLINK_ERROR_FINALIZE",
    "NVJITLINK_ERROR_NULL_INPUT",
    "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
    "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
    "NVJITLINK_ERROR_ARCH_MISMATCH",
    "NVJITLINK_ERROR_OUTDATED_LIBRARY",
    "NVJITLINK_ERROR_MISSING_FATBIN",
    "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
    "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
    "NVJITLINK_ERROR_LTO_NOT_ENABLED",
};

static const char *link_status(int status, const void *real, char *buf, size_t size)
{
    (void)real;
    if (status >= 0 && (size_t)status < sizeof status_names / sizeof status_names[0])
        return status_names[status];
    snprintf(buf, size, "nvJitLinkResult(%d)", status);
    return buf;
}

static void created(nvJitLinkHandle handle, uint32_t n_options)
{
    int saved = errno;
    gt_handle_info info = {.options = n_options};
    gt_handle_put(&links, (uint64_t)(uintptr_t)handle, &info);
    errno = saved;
}

static uint64_t file_bytes(const char *path)
{
    int saved = errno;
    struct stat st;
    uint64_t bytes = path && stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
    errno = saved;
    return bytes;
}

#define LINK(sym, base, kind, params, args, then, ...)                                             \
    GT_COMPILER_WRAPPER_THEN(nvJitLinkResult, sym, base, kind, params, args,                       \
                             NVJITLINK_ERROR_INTERNAL, link_status, then, __VA_ARGS__)

#define CREATE(sym, options_t)                                                                     \
    LINK(sym, nvJitLinkCreate, GT_EV_API,                                                          \
         (nvJitLinkHandle * handle, uint32_t n_options, options_t options),                        \
         (handle, n_options, options), if (r_ == NVJITLINK_SUCCESS) created(*handle, n_options),   \
         (void)c)
/* The handle is read before the call, which clears it. */
#define DESTROY(sym)                                                                               \
    LINK(sym, nvJitLinkDestroy, GT_EV_API, (nvJitLinkHandle * handle), (handle),                   \
         if (r_ == NVJITLINK_SUCCESS) gt_compile_forget(&links, doomed),                           \
         nvJitLinkHandle doomed = handle ? *handle : NULL)
#define ADD_DATA(sym)                                                                              \
    LINK(sym, nvJitLinkAddData, GT_EV_API,                                                         \
         (nvJitLinkHandle handle, nvJitLinkInputType type, const void *data, size_t size,          \
          const char *name),                                                                       \
         (handle, type, data, size, name),                                                         \
         if (r_ == NVJITLINK_SUCCESS) gt_compile_add_code(&links, handle, data, size, name),       \
         c.bytes = size)
#define ADD_FILE(sym)                                                                              \
    LINK(sym, nvJitLinkAddFile, GT_EV_API,                                                         \
         (nvJitLinkHandle handle, nvJitLinkInputType type, const char *path),                      \
         (handle, type, path),                                                                     \
         if (r_ == NVJITLINK_SUCCESS) gt_compile_add_input(&links, handle, c.bytes, path),         \
         c.bytes = file_bytes(path))
#define COMPLETE(sym)                                                                              \
    LINK(sym, nvJitLinkComplete, GT_EV_COMPILE, (nvJitLinkHandle handle), (handle), (void)0,       \
         gt_compile_describe(&c, &links, handle))

CREATE(nvJitLinkCreate, const char **)
CREATE(__nvJitLinkCreate_13_0, const char *const *)
DESTROY(nvJitLinkDestroy)
DESTROY(__nvJitLinkDestroy_13_0)
ADD_DATA(nvJitLinkAddData)
ADD_DATA(__nvJitLinkAddData_13_0)
ADD_FILE(nvJitLinkAddFile)
ADD_FILE(__nvJitLinkAddFile_13_0)
COMPLETE(nvJitLinkComplete)
COMPLETE(__nvJitLinkComplete_13_0)
