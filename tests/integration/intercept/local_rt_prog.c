/* Opens local_rt_lib (path in argv[1]) with RTLD_LOCAL and runs its work;
 * the manifest (GT_APP_MANIFEST) lists that work. Exit code 0 when it all
 * succeeded. */
#include <dlfcn.h>
#include <stdio.h>

#include "manifest.h"

#define BYTES 8192

int main(int argc, char **argv)
{
    void *lib = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    int (*work)(size_t) = lib ? (int (*)(size_t))dlsym(lib, "local_rt_work") : NULL;
    if (!work) {
        fprintf(stderr, "local_rt_prog: %s\n", dlerror());
        return 2;
    }
    int failed_step = work(BYTES);
    if (failed_step) {
        fprintf(stderr, "local_rt_prog: step %d failed\n", failed_step);
        return 1;
    }
    app_manifest_memset(BYTES, false, false);
    app_manifest_copy(APP_DTOH, APP_PAGEABLE, false, BYTES, false);
    app_manifest_sync("cudaDeviceSynchronize", 1);
    return app_manifest_write("local_rt_prog") == 0 ? 0 : 1;
}
