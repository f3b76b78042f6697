/* Driver-API set-up shared by the test programs (see app_driver.h). */
#include "app_driver.h"

#include "app_util.h"

void app_check(CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS) return;
    const char *name = "unknown CUresult";
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS) name = "unknown CUresult";
    app_fail(what, name, (int)r);
}

CUcontext app_primary_context(void)
{
    CUdevice dev;
    CUcontext ctx;
    app_check(cuInit(0), "cuInit");
    app_check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    app_check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    app_check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    return ctx;
}

void app_vector_kernels(const void *image, CUmodule *module, CUfunction *vec_add,
                        CUfunction *scale)
{
    app_check(cuModuleLoadData(module, image), "cuModuleLoadData");
    app_check(cuModuleGetFunction(vec_add, *module, "vec_add"), "cuModuleGetFunction vec_add");
    app_check(cuModuleGetFunction(scale, *module, "_ZN4apps5scaleEPffi"),
              "cuModuleGetFunction apps::scale");
}
