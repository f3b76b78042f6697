/* Driver-API set-up shared by the test programs that call the driver
 * directly. Failures are reported as app_fail reports them (exit status
 * APP_EXIT_CUDA_FAILED), with the driver's name for the error. */
#ifndef APP_DRIVER_H
#define APP_DRIVER_H

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exits through app_fail unless r is CUDA_SUCCESS; `what` names the call. */
void app_check(CUresult r, const char *what);

/* cuInit, then device 0's primary context retained and made current. */
CUcontext app_primary_context(void);

/* The module of `image` (PTX or a fat binary of tests/apps/kernels) and
 * its kernels vec_add and apps::scale. */
void app_vector_kernels(const void *image, CUmodule *module, CUfunction *vec_add,
                        CUfunction *scale);

#ifdef __cplusplus
}
#endif

#endif
