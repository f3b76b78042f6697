/* Names of failed calls' status codes, for the `api` table. Runs on the
 * draining thread. CUresult names come from the driver (cuGetErrorName
 * knows codes newer than the headers the shim was built with);
 * cudaError_t names from a table generated from driver_types.h, because
 * the runtime may be linked statically and the shim never calls it. */
#include "event.h"
#include "intercept.h"
#include "process.h"
#include "resolve.h"
#include "strtab.h"

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*error_name_fn)(CUresult error, const char **name);

static gt_real_cache driver_error_name;

const char *gt_runtime_error_name(int code)
{
    size_t lo = 0, hi = gt_runtime_errors_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (gt_runtime_errors[mid].code < code)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < gt_runtime_errors_len && gt_runtime_errors[lo].code == code
               ? gt_runtime_errors[lo].name
               : NULL;
}

static const char *driver_name(int code)
{
    error_name_fn fn = (error_name_fn)gt_cuda_real_once(&driver_error_name, "cuGetErrorName");
    const char *name = NULL;
    if (fn && fn((CUresult)code, &name) != CUDA_SUCCESS) name = NULL;
    return name;
}

uint32_t gt_error_name_id(const gt_event *ev)
{
    gt_strtab *t = gt_names();
    if (!t) return 0;
    int runtime = (ev->flags & GT_EVF_RUNTIME) != 0;
    const char *name = runtime ? gt_runtime_error_name(ev->result) : driver_name(ev->result);
    char unknown[48];
    if (!name) {
        snprintf(unknown, sizeof unknown, "%s(%d)", runtime ? "cudaError" : "CUresult",
                 (int)ev->result);
        name = unknown;
    }
    return gt_strtab_intern(t, name, strlen(name));
}
