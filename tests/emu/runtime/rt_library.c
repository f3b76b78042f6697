/* The runtime's library management: cudaLibrary_t and cudaKernel_t are the driver's
 * CUlibrary and CUkernel, and the JIT and library option enums have the driver's values. */
#include "rt_internal.h"

/* Loading needs an initialised driver but no context: libraries are context-independent. */
#define WITH_DRIVER(call) RT_AFTER(gt_rt_init(), call)

RT_API cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                                       enum cudaJitOption *jitOptions, void **jitOptionsValues,
                                       unsigned int numJitOptions,
                                       enum cudaLibraryOption *libraryOptions,
                                       void **libraryOptionValues, unsigned int numLibraryOptions)
{
    WITH_DRIVER(RT_CALL(gt_rt_drv.libraryLoadData, library, code, (CUjit_option *)jitOptions,
                        jitOptionsValues, numJitOptions, (CUlibraryOption *)libraryOptions,
                        libraryOptionValues, numLibraryOptions));
}

RT_API cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t *library, const char *fileName,
                                           enum cudaJitOption *jitOptions, void **jitOptionsValues,
                                           unsigned int numJitOptions,
                                           enum cudaLibraryOption *libraryOptions,
                                           void **libraryOptionValues,
                                           unsigned int numLibraryOptions)
{
    WITH_DRIVER(RT_CALL(gt_rt_drv.libraryLoadFromFile, library, fileName,
                        (CUjit_option *)jitOptions, jitOptionsValues, numJitOptions,
                        (CUlibraryOption *)libraryOptions, libraryOptionValues, numLibraryOptions));
}

RT_API cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
    WITH_DRIVER(RT_CALL(gt_rt_drv.libraryUnload, library));
}

RT_API cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library,
                                        const char *name)
{
    WITH_DRIVER(RT_CALL(gt_rt_drv.libraryGetKernel, pKernel, library, name));
}

RT_API cudaError_t cudaLibraryGetGlobal(void **dptr, size_t *bytes, cudaLibrary_t library,
                                        const char *name)
{
    /* The address belongs to the current context, so this one needs a context. */
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.libraryGetGlobal, (CUdeviceptr *)dptr, bytes, library, name));
}
