/* An injection library for test_injection: counts the driver's calls of
 * InitializeInjection, and calls back into the driver from it, as a CUPTI
 * client does. */
#include <cuda.h>

__attribute__((visibility("default"))) int injection_calls;
__attribute__((visibility("default"))) CUresult injection_cuinit;

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    injection_calls++;
    injection_cuinit = cuInit(0);
    return 1;
}
