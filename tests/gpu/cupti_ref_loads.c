/* Checks that the CUPTI reference recorder loads with its dependencies
 * and exports the entry point that CUDA_INJECTION64_PATH requires. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s libcupti_ref.so\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
        return 1;
    }
    if (!dlsym(lib, "InitializeInjection")) {
        fprintf(stderr, "%s does not export InitializeInjection\n", argv[1]);
        return 1;
    }
    if (dlsym(lib, "ref_add_work")) {
        fprintf(stderr, "%s exports internal symbols\n", argv[1]);
        return 1;
    }
    return 0;
}
