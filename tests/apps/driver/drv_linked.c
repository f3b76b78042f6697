/* Driver API program linked against libcuda.so.1 (calls resolved by the loader).
 * Usage: drv_linked [iterations] [streams] [elements]; uses cuCtxCreate. */
#include "app_util.h"
#include "drv_workload.h"
#include "manifest.h"

int main(int argc, char **argv)
{
    app_program = "drv_linked";
    struct drv_options opt = {.primary = false};
    drv_parse(argc, argv, &opt);
    struct drv_api api = {
#define DRV_FN(field, base, exported, version, type) .field = base,
#include "drv_api.def"
#undef DRV_FN
    };
    drv_run(&api, &opt);
    return app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
}
