/* Function and kernel attributes and names. Values describe a small
 * kernel compiled for sm_90: no static shared memory, 32 registers. */
#include "emu_module.h"

#include <string.h>

#define GT_DEFAULT_DYNAMIC_SMEM (48 * 1024)
#define GT_OPTIN_SMEM 232448

void gt_function_defaults(int *attrs)
{
    memset(attrs, 0, CU_FUNC_ATTRIBUTE_MAX * sizeof *attrs);
    attrs[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 1024;
    attrs[CU_FUNC_ATTRIBUTE_NUM_REGS] = 32;
    attrs[CU_FUNC_ATTRIBUTE_PTX_VERSION] = 90;
    attrs[CU_FUNC_ATTRIBUTE_BINARY_VERSION] = 90;
    attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] = GT_DEFAULT_DYNAMIC_SMEM;
    attrs[CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT] = -1;
}

/* Attributes a program may set, with their valid ranges. */
static CUresult set_attribute(int *attrs, CUfunction_attribute attrib, int value)
{
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if (value < 0 || value > GT_OPTIN_SMEM) return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    attrs[attrib] = value;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
    struct gt_function *f;
    CUresult r = gt_function_check(hfunc, &f);
    if (r != CUDA_SUCCESS) return r;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    *name = f->name;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    struct gt_function *f;
    CUresult r = gt_function_check(hfunc, &f);
    if (r != CUDA_SUCCESS) return r;
    if (!pi || (unsigned)attrib >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    *pi = f->attrs[attrib];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    struct gt_function *f;
    CUresult r = gt_function_check(hfunc, &f);
    return r != CUDA_SUCCESS ? r : set_attribute(f->attrs, attrib, value);
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    struct gt_function *f;
    CUresult r = gt_function_check(hfunc, &f);
    if (r != CUDA_SUCCESS) return r;
    if ((unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
    f->cache_config = config;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
    struct gt_function *f;
    CUresult r = gt_function_check(hfunc, &f);
    if (r != CUDA_SUCCESS) return r;
    if (!hmod) return CUDA_ERROR_INVALID_VALUE;
    *hmod = (CUmodule)f->module;
    return CUDA_SUCCESS;
}

static CUresult kernel_device(CUkernel kernel, CUdevice dev, struct gt_kernel **k)
{
    CUresult r = gt_kernel_check(kernel, k);
    struct gt_device *d;
    return r != CUDA_SUCCESS ? r : gt_device_get(dev, &d);
}

CUresult CUDAAPI cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel,
                                      CUdevice dev)
{
    struct gt_kernel *k;
    CUresult r = kernel_device(kernel, dev, &k);
    if (r != CUDA_SUCCESS) return r;
    if (!pi || (unsigned)attrib >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    *pi = k->attrs[attrib];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel,
                                      CUdevice dev)
{
    struct gt_kernel *k;
    CUresult r = kernel_device(kernel, dev, &k);
    if (r != CUDA_SUCCESS) return r;
    r = set_attribute(k->attrs, attrib, val);
    if (r != CUDA_SUCCESS) return r;
    /* Functions already taken from the kernel in a context follow. */
    struct gt_library *lib = k->library;
    pthread_mutex_lock(&lib->lock);
    for (size_t i = 0; i < lib->n_mods; i++)
        lib->mods[i].module->funcs[k->index]->attrs[attrib] = val;
    pthread_mutex_unlock(&lib->lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev)
{
    struct gt_kernel *k;
    CUresult r = kernel_device(kernel, dev, &k);
    if (r != CUDA_SUCCESS) return r;
    return (unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
