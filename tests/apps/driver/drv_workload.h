/* The work the driver API test programs do, whatever way they reach the driver. */
#ifndef DRV_WORKLOAD_H
#define DRV_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda.h>
#include <cudaTypedefs.h>

struct drv_api {
#define DRV_FN(field, base, exported, version, type) type field;
#include "drv_api.def"
#undef DRV_FN
};

struct drv_options {
    int iterations;  /* kernel launch rounds */
    int streams;     /* streams the rounds are spread over */
    size_t elements; /* floats per buffer */
    bool primary;    /* use the primary context instead of cuCtxCreate */
};

/* Parses "[iterations] [streams] [elements]" (defaults 20, 2, 65536). */
void drv_parse(int argc, char **argv, struct drv_options *opt);

/* Runs the workload and records it in the manifest; exits on any failure.
 *  - context (created or primary), the PTX module of app_kernels.cu
 *  - copies with checked data: HtoD/DtoH pageable sync, HtoD/DtoH managed sync,
 *    HtoD pinned async (cuMemAllocHost and registered memory), DtoD sync and async,
 *    DtoH pinned async (cuMemHostAlloc), HtoH pageable sync (cuMemcpy)
 *  - memsets D8/D16/D32, sync and async, each checked by a DtoH pageable copy
 *  - iterations x streams launches of vec_add and of apps::scale, the first pair on
 *    stream 0 timed with an event pair (cuEventSynchronize)
 *  - cuStreamSynchronize per stream, one cuCtxSynchronize, everything freed */
void drv_run(const struct drv_api *api, const struct drv_options *opt);

#endif
