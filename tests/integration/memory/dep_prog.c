/* Runtime allocations from a dependency of a library opened with
 * RTLD_LOCAL: the wrappers must find the runtime from a library that was
 * never opened itself (its loader data has no search list of its own),
 * and record the allocations once each.
 *
 * Usage: dep_prog LIBDEP_OUTER */
#include <dlfcn.h>
#include <stdio.h>

#include "app_util.h"
#include "expect.h"

#define BYTES (1024 * 1024)

int main(int argc, char **argv)
{
    app_program = "dep_prog";
    void *lib = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    int (*work)(size_t) = lib ? (int (*)(size_t))dlsym(lib, "dep_outer_work") : NULL;
    if (!work) {
        fprintf(stderr, "dep_prog: %s\n", dlerror());
        return APP_EXIT_USAGE;
    }
    int failed = work(BYTES);
    if (failed) app_fail("dep_inner_work", "step", failed);
    expect_alloc(0, BYTES);
    expect_alloc(0, BYTES);
    expect_free(0, BYTES);
    expect_alloc(EXPECT_HOST_ROW, BYTES);
    expect_free(EXPECT_HOST_ROW, BYTES);
    expect_context_end(0); /* the runtime releases its primary context at exit */
    expect_api("cudaMalloc", 2);
    expect_api("cudaFreeHost", 1);
    if (expect_write() != 0) app_wrong("cannot write GT_EXPECT");
    return 0;
}
