#include "app_util.h"
#include "test_support.h"

CUcontext context_on_device0(void)
{
    CUdevice dev;
    CUcontext ctx;
    app_check(cuInit(0), "cuInit");
    app_check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    app_check(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");
    return ctx;
}
