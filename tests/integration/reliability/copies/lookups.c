/* A program that finds its functions with dlsym, as Python bindings do:
 *
 *     lookups N
 *
 * opens libcuda.so.1 and, N times, looks up cuInit (which gputrace wraps)
 * and cuDriverGetVersion (which it does not) in it and calls both, and
 * looks up its own exported gt_lookups_probe through RTLD_DEFAULT and
 * calls it. Prints what the calls returned; exit status 1 when a lookup
 * fails. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*init_fn)(unsigned flags);
typedef int (*version_fn)(int *version);
typedef int (*probe_fn)(void);

__attribute__((visibility("default"))) int gt_lookups_probe(void)
{
    return 7;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) {
        printf("dlopen libcuda.so.1: %s\n", dlerror());
        return 1;
    }
    int init_failures = 0, version = 0, probes = 0;
    for (int i = 0; i < n; i++) {
        init_fn init = (init_fn)dlsym(cuda, "cuInit");
        version_fn get_version = (version_fn)dlsym(cuda, "cuDriverGetVersion");
        probe_fn probe = (probe_fn)dlsym(RTLD_DEFAULT, "gt_lookups_probe");
        if (!init || !get_version || !probe) {
            printf("lookup %d failed: %p %p %p\n", i, (void *)init, (void *)get_version,
                   (void *)probe);
            return 1;
        }
        init_failures += init(0) != 0;
        get_version(&version);
        probes += probe();
    }
    printf("%d lookups: %d cuInit failures, driver version %d, probes %d\n", n, init_failures,
           version, probes);
    return 0;
}
