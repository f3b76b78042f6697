#include "app_util.h"
#include "test_support.h"

void check_cu(CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS) return;
    const char *name = "unknown CUresult";
    cuGetErrorName(r, &name);
    app_fail(what, name, (int)r);
}

CUcontext context_on_device0(void)
{
    CUdevice dev;
    CUcontext ctx;
    check_cu(cuInit(0), "cuInit");
    check_cu(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check_cu(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");
    return ctx;
}
