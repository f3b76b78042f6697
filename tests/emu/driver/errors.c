/* cuGetErrorName / cuGetErrorString. Names come from cuda.h; descriptions
 * are the driver's wording for the common codes and, for the rest, the
 * name in words ("CUDA_ERROR_STREAM_CAPTURE_UNJOINED" -> "stream capture
 * unjoined"). */
#include "errors.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const struct gt_error_name descriptions[] = {
    {CUDA_SUCCESS, "no error"},
    {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"},
    {CUDA_ERROR_FILE_NOT_FOUND, "file not found"},
    {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
     "part or all of the requested memory range is already mapped"},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
     "pointer does not correspond to a registered memory region"},
    {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {CUDA_ERROR_CAPTURED_EVENT,
     "operation not permitted on an event last recorded in a capturing stream"},
    {CUDA_ERROR_UNKNOWN, "unknown error"},
};

static const char *find_name(CUresult error)
{
    for (size_t i = 0; i < gt_error_names_len; i++)
        if (gt_error_names[i].code == (int)error) return gt_error_names[i].name;
    return NULL;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const char *name = find_name(error);
    *pStr = name;
    return name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Words made from names, built once per code and kept for the process. */
static pthread_mutex_t words_lock = PTHREAD_MUTEX_INITIALIZER;
static const char **words;

static const char *words_for(size_t index, const char *name)
{
    pthread_mutex_lock(&words_lock);
    if (!words) words = calloc(gt_error_names_len, sizeof *words);
    const char *result = NULL;
    if (words && !words[index]) {
        const char *start = strncmp(name, "CUDA_ERROR_", 11) ? name : name + 11;
        char *text = strdup(start);
        for (char *p = text; p && *p; p++)
            *p = *p == '_' ? ' ' : (char)tolower((unsigned char)*p);
        words[index] = text;
    }
    if (words) result = words[index];
    pthread_mutex_unlock(&words_lock);
    return result;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof descriptions / sizeof descriptions[0]; i++) {
        if (descriptions[i].code == (int)error) {
            *pStr = descriptions[i].name;
            return CUDA_SUCCESS;
        }
    }
    for (size_t i = 0; i < gt_error_names_len; i++) {
        if (gt_error_names[i].code == (int)error) {
            *pStr = words_for(i, gt_error_names[i].name);
            return *pStr ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}
