#include <stdio.h>

#include "app_util.h"
#include "test_support.h"

CUfunction empty_kernel(const char *name, size_t *ptx_bytes)
{
    char ptx[256];
    int n = snprintf(ptx, sizeof ptx,
                     ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry %s()\n{\n "
                     "ret;\n}\n",
                     name);
    if (n < 0 || (size_t)n >= sizeof ptx) app_wrong("kernel name too long");
    CUmodule module;
    CUfunction f;
    app_check(cuModuleLoadData(&module, ptx), "cuModuleLoadData");
    app_check(cuModuleGetFunction(&f, module, name), "cuModuleGetFunction");
    if (ptx_bytes) *ptx_bytes = (size_t)n;
    return f;
}

CUcontext context_on_device0(void)
{
    CUdevice dev;
    CUcontext ctx;
    app_check(cuInit(0), "cuInit");
    app_check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    app_check(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");
    return ctx;
}
