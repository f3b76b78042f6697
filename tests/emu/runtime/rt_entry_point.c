/* cudaGetDriverEntryPoint: driver entry points through the runtime, resolved by the
 * driver's cuGetProcAddress, itself obtained through cuGetProcAddress_v2 at
 * initialisation (so a tracer that wraps it sees these requests too). The runtime's
 * flags and query results have the driver's values. */
#include "rt_internal.h"

static cudaError_t entry_point(const char *symbol, void **funcPtr, unsigned int version,
                               unsigned long long flags,
                               enum cudaDriverEntryPointQueryResult *status,
                               enum rt_stream_mode mode)
{
    if (symbol == NULL || funcPtr == NULL) return cudaErrorInvalidValue;
    cudaError_t err = gt_rt_init();
    if (err != cudaSuccess) return err;
    /* "Default" means the default stream the calling code was compiled for. */
    if (flags == cudaEnableDefault)
        flags = mode == RT_PER_THREAD ? cudaEnablePerThreadDefaultStream : cudaEnableLegacyStream;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    err = RT_CALL(gt_rt_drv.getProcAddress, symbol, funcPtr, (int)version, flags, &found);
    if (status != NULL) *status = (enum cudaDriverEntryPointQueryResult)found;
    return err;
}

RT_API cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
                                           unsigned long long flags,
                                           enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return gt_rt_result(
        entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, RT_LEGACY));
}

RT_API cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
                                                unsigned long long flags,
                                                enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return gt_rt_result(
        entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, RT_PER_THREAD));
}

RT_API cudaError_t cudaGetDriverEntryPointByVersion(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return gt_rt_result(entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, RT_LEGACY));
}

RT_API cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return gt_rt_result(
        entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, RT_PER_THREAD));
}
