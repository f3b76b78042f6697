/* A program that links no CUDA and looks for it, as programs with an
 * optional GPU path do: through weak references to runtime and driver
 * functions, and through dlsym, in the global scope and in the handle of
 * the program itself. It prints what it found and what the functions it
 * found answered, then whether the driver library got loaded into it.
 * Under libgputrace.so its lookups must find what they find bare; the
 * weak references are the library's exports (the loader binds them before
 * any code runs) and must answer as CUDA does on a machine without a
 * driver, loading nothing and printing nothing. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*cu_init_fn)(unsigned);

extern int cudaMalloc(void **ptr, size_t bytes) __attribute__((weak));
extern int cudaGetDeviceCount(int *count) __attribute__((weak));
extern int cuInit(unsigned flags) __attribute__((weak));
extern int cuMemAlloc_v2(unsigned long long *ptr, size_t bytes) __attribute__((weak));

static void look(const char *where, void *handle, const char *name)
{
    dlerror();
    void *p = dlsym(handle, name);
    const char *err = dlerror();
    printf("dlsym %s %s: %s, dlerror %s\n", where, name, p ? "found" : "none",
           err ? "set" : "clear");
}

int main(void)
{
    look("default", RTLD_DEFAULT, "cuLaunchKernel");
    look("default", RTLD_DEFAULT, "cudaMalloc");
    look("default", RTLD_DEFAULT, "nvrtcCompileProgram");
    void *self = dlopen(NULL, RTLD_NOW);
    look("self", self, "cuInit");
    look("self", self, "cudaLaunchKernel");
    /* The weak references, where the loader bound them. */
    if (cudaMalloc) {
        void *d = NULL;
        printf("cudaMalloc %d\n", cudaMalloc(&d, 256));
    }
    if (cudaGetDeviceCount) {
        int n = -1;
        printf("cudaGetDeviceCount %d\n", cudaGetDeviceCount(&n));
    }
    if (cuInit) printf("cuInit %d\n", cuInit(0));
    if (cuMemAlloc_v2) {
        unsigned long long d = 0;
        printf("cuMemAlloc_v2 %d\n", cuMemAlloc_v2(&d, 256));
    }
    printf("libcuda.so.1 loaded: %s\n",
           dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) ? "yes" : "no");
    return 0;
}
