/* Error codes: driver-to-runtime mapping, names and descriptions, and the per-thread
 * last-error state behind cudaGetLastError/cudaPeekAtLastError. */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "rt_internal.h"

struct error_text {
    cudaError_t code;
    const char *name;
    const char *description;
};

static struct error_text errors[] = {
#define RT_ERROR(code, description) {code, #code, description},
#include "rt_errors.def"
#undef RT_ERROR
};

#define ERROR_COUNT (sizeof(errors) / sizeof(errors[0]))
#define DESCRIPTION_MAX 96

static char derived[ERROR_COUNT][DESCRIPTION_MAX];
static pthread_once_t derive_once = PTHREAD_ONCE_INIT;

static const char unrecognized[] = "unrecognized error code";

/* The calling thread's last error: every failing runtime call overwrites it. */
static __thread cudaError_t last_error = cudaSuccess;

/* First context-corrupting error seen by the process; once set, cudaGetLastError can no
 * longer clear it (relaxed: a flag read independently of any other data). */
static _Atomic cudaError_t sticky_error = cudaSuccess;

/* "cudaErrorStreamCaptureMerge" -> "stream capture merge". */
static void describe_from_name(const char *name, char *out)
{
    const char *word = name + strlen("cudaError");
    size_t n = 0;
    for (const char *p = word; *p != '\0' && n + 2 < DESCRIPTION_MAX; p++) {
        bool starts_word =
            isupper((unsigned char)*p) && p != word &&
            !(isupper((unsigned char)p[-1]) && (p[1] == '\0' || isupper((unsigned char)p[1])));
        if (starts_word) out[n++] = ' ';
        out[n++] = (char)tolower((unsigned char)*p);
    }
    out[n] = '\0';
}

static void derive_descriptions(void)
{
    for (size_t i = 0; i < ERROR_COUNT; i++) {
        if (errors[i].description != NULL) continue;
        describe_from_name(errors[i].name, derived[i]);
        errors[i].description = derived[i];
    }
}

static const struct error_text *find_error(cudaError_t code)
{
    pthread_once(&derive_once, derive_descriptions);
    for (size_t i = 0; i < ERROR_COUNT; i++)
        if (errors[i].code == code) return &errors[i];
    return NULL;
}

/* Errors after which, per the CUDA documentation, the process is in an inconsistent
 * state and all further CUDA work returns the same error. */
static bool corrupts_context(cudaError_t err)
{
    switch (err) {
    case cudaErrorContained:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorExternalDevice:
        return true;
    default:
        return false;
    }
}

cudaError_t gt_rt_from_cu(CUresult res)
{
    /* Since CUDA 10.1 every driver code has the runtime code of the same value, with
     * these exceptions that have no runtime counterpart. */
    switch (res) {
    case CUDA_ERROR_CONTEXT_ALREADY_CURRENT:
    case CUDA_ERROR_KEY_ROTATION:
        return cudaErrorUnknown;
    default:
        return find_error((cudaError_t)res) != NULL ? (cudaError_t)res : cudaErrorUnknown;
    }
}

cudaError_t gt_rt_result(cudaError_t err)
{
    /* cudaErrorNotReady from a query reports state, not a failure: it is not recorded. */
    if (err == cudaSuccess || err == cudaErrorNotReady) return err;
    last_error = err;
    if (corrupts_context(err)) {
        cudaError_t none = cudaSuccess;
        atomic_compare_exchange_strong_explicit(&sticky_error, &none, err, memory_order_relaxed,
                                                memory_order_relaxed);
    }
    return err;
}

cudaError_t gt_rt_sticky_error(void)
{
    return atomic_load_explicit(&sticky_error, memory_order_relaxed);
}

RT_API cudaError_t cudaGetLastError(void)
{
    cudaError_t sticky = gt_rt_sticky_error();
    if (sticky != cudaSuccess) return sticky;
    cudaError_t err = last_error;
    last_error = cudaSuccess;
    return err;
}

RT_API cudaError_t cudaPeekAtLastError(void)
{
    cudaError_t sticky = gt_rt_sticky_error();
    return sticky != cudaSuccess ? sticky : last_error;
}

RT_API const char *cudaGetErrorName(cudaError_t error)
{
    const struct error_text *e = find_error(error);
    return e != NULL ? e->name : unrecognized;
}

RT_API const char *cudaGetErrorString(cudaError_t error)
{
    const struct error_text *e = find_error(error);
    return e != NULL ? e->description : unrecognized;
}
