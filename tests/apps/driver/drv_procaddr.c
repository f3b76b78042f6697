/* Driver API program that gets every entry point other than cuGetProcAddress itself
 * from cuGetProcAddress, by base name and the CUDA version of the variant it wants.
 * Usage: drv_procaddr [iterations] [streams] [elements]; uses cuCtxCreate. */
#include <stdio.h>

#include "app_util.h"
#include "drv_workload.h"
#include "manifest.h"

int main(int argc, char **argv)
{
    app_program = "drv_procaddr";
    struct drv_options opt = {.primary = false};
    drv_parse(argc, argv, &opt);
    struct drv_api api;
    CUresult res;
    CUdriverProcAddressQueryResult found;
#define DRV_FN(field, base, exported, version, type)                                               \
    res = cuGetProcAddress(#base, (void **)&api.field, version, CU_GET_PROC_ADDRESS_DEFAULT,       \
                           &found);                                                                \
    if (res != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || api.field == NULL)          \
        app_fail("cuGetProcAddress " #base, "entry point not found", (int)res);
#include "drv_api.def"
#undef DRV_FN
    drv_run(&api, &opt);
    return app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
}
