/* Driver API program that opens libcuda.so.1 itself and finds each entry point with
 * dlsym under its exported (versioned) name.
 * Usage: drv_dlopen [iterations] [streams] [elements]; uses the primary context. */
#include <dlfcn.h>
#include <stdio.h>

#include "app_util.h"
#include "drv_workload.h"
#include "manifest.h"

int main(int argc, char **argv)
{
    app_program = "drv_dlopen";
    struct drv_options opt = {.primary = true};
    drv_parse(argc, argv, &opt);
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (libcuda == NULL) app_fail("dlopen libcuda.so.1", dlerror(), 0);
    struct drv_api api;
#define DRV_FN(field, base, exported, version, type)                                               \
    api.field = (type)dlsym(libcuda, #exported);                                                   \
    if (api.field == NULL) app_fail("dlsym " #exported, "symbol not found", 0);
#include "drv_api.def"
#undef DRV_FN
    drv_run(&api, &opt);
    int rc = app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
    dlclose(libcuda);
    return rc;
}
