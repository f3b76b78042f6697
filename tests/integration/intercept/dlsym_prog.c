/* dlsym as a program sees it under the shim, built twice: against glibc's
 * current dlsym (GLIBC_2.34) and, with GT_OLD_DLSYM, against the version
 * programs linked before glibc 2.34 reference. Under LD_PRELOAD of the
 * shim, with the emulated libcuda.so.1 on the library path:
 *  - dlsym(libcuda, wrapped name) is the shim's wrapper, of that variant;
 *  - dlsym(libcuda, other name) is the driver's own function;
 *  - a failed lookup leaves its error for dlerror(), a hooked one none;
 *  - dlsym(RTLD_NEXT) keeps its meaning for the library that calls it
 *    (next_a.c asks for the definition after its own);
 * Prints one line per failed check; exit code 0 when all pass. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifdef GT_OLD_DLSYM
__asm__(".symver dlsym, dlsym@" GT_GLIBC_BASE_VERSION);
#endif

char next_probe_from_a(void); /* next_a.c: calls the definition after libnext_a */

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

/* The file and symbol `fn` is in. */
static int lies_in(void *fn, const char *file_part, const char *symbol)
{
    Dl_info info;
    if (!fn || !dladdr(fn, &info) || !info.dli_fname || !info.dli_sname) return 0;
    return strstr(info.dli_fname, file_part) != NULL && strcmp(info.dli_sname, symbol) == 0;
}

int main(void)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    expect(cuda != NULL, "dlopen libcuda.so.1");
    if (!cuda) return 1;
    const char *wrapped[] = {"cuLaunchKernel",      "cuLaunchKernel_ptsz",  "cuMemcpyHtoD",
                             "cuMemcpyHtoD_v2",     "cuMemcpyHtoD_v2_ptds", "cuGetProcAddress",
                             "cuGetProcAddress_v2", "cuStreamSynchronize"};
    for (size_t i = 0; i < sizeof wrapped / sizeof wrapped[0]; i++) {
        dlerror();
        void *fn = dlsym(cuda, wrapped[i]);
        char what[128];
        snprintf(what, sizeof what, "dlsym(libcuda, %s) is the shim's %s", wrapped[i], wrapped[i]);
        expect(lies_in(fn, "libgputrace", wrapped[i]), what);
        snprintf(what, sizeof what, "dlerror() after dlsym(libcuda, %s)", wrapped[i]);
        expect(dlerror() == NULL, what);
    }
    void *plain = dlsym(cuda, "cuDeviceGet");
    expect(lies_in(plain, "libcuda", "cuDeviceGet"), "dlsym(libcuda, cuDeviceGet) is the driver's");
    dlerror();
    expect(dlsym(cuda, "cuNoSuchFunction") == NULL, "an unknown name is not found");
    expect(dlerror() != NULL, "an unknown name leaves an error for dlerror()");
    expect(dlsym(RTLD_DEFAULT, "cuNoSuchFunction") == NULL, "RTLD_DEFAULT: unknown name");
    expect(next_probe_from_a() == 'b', "dlsym(RTLD_NEXT) from libnext_a finds libnext_b's");
    printf("%d failures\n", failures);
    return failures != 0;
}
