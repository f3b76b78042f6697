/* Libraries: context-independent code. Kernels are handles of the
 * library; each context that uses it gets its own module, loaded on first
 * use (cuKernelGetFunction, cuLibraryGetModule, a launch of a CUkernel). */
#include "emu_module.h"

#include <stdlib.h>
#include <string.h>

CUresult gt_kernel_check(CUkernel h, struct gt_kernel **out)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(h, GT_KIND_KERNEL)) return CUDA_ERROR_INVALID_HANDLE;
    *out = (struct gt_kernel *)h;
    return CUDA_SUCCESS;
}

static CUresult library_check(CUlibrary h, struct gt_library **out)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(h, GT_KIND_LIBRARY)) return CUDA_ERROR_INVALID_HANDLE;
    *out = (struct gt_library *)h;
    return CUDA_SUCCESS;
}

CUresult gt_library_module(struct gt_library *lib, struct gt_context *ctx, struct gt_module **out)
{
    unsigned long long id = gt_ctx_id(ctx);
    pthread_mutex_lock(&lib->lock);
    for (size_t i = 0; i < lib->n_mods; i++) {
        if (lib->mods[i].ctx == ctx && lib->mods[i].ctx_id == id) {
            *out = lib->mods[i].module;
            pthread_mutex_unlock(&lib->lock);
            return CUDA_SUCCESS;
        }
    }
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    struct gt_image_info copy = {0};
    if (lib->n_mods == lib->cap_mods) {
        size_t cap = lib->cap_mods ? lib->cap_mods * 2 : 4;
        struct gt_library_module *grown = realloc(lib->mods, cap * sizeof *grown);
        if (!grown) goto out;
        lib->mods = grown;
        lib->cap_mods = cap;
    }
    if (!gt_image_merge(&copy, &lib->info)) goto out;
    struct gt_module *m;
    r = gt_module_create(ctx, &copy, lib, &m);
    if (r == CUDA_SUCCESS) {
        lib->mods[lib->n_mods].ctx = ctx;
        lib->mods[lib->n_mods].ctx_id = id;
        lib->mods[lib->n_mods].module = m;
        lib->n_mods++;
        *out = m;
    }
out:
    gt_image_info_free(&copy);
    pthread_mutex_unlock(&lib->lock);
    return r;
}

void gt_library_forget_module(struct gt_library *lib, struct gt_module *m)
{
    pthread_mutex_lock(&lib->lock);
    for (size_t i = 0; i < lib->n_mods; i++) {
        if (lib->mods[i].module == m) {
            lib->mods[i] = lib->mods[--lib->n_mods];
            break;
        }
    }
    pthread_mutex_unlock(&lib->lock);
}

CUresult gt_launch_function(CUfunction h, struct gt_context *ctx, struct gt_function **out)
{
    if (gt_object_is(h, GT_KIND_FUNCTION)) {
        struct gt_function *f = (struct gt_function *)h;
        if (f->module->ctx != ctx) return CUDA_ERROR_INVALID_HANDLE;
        *out = f;
        return CUDA_SUCCESS;
    }
    if (!gt_object_is(h, GT_KIND_KERNEL)) return CUDA_ERROR_INVALID_HANDLE;
    struct gt_kernel *k = (struct gt_kernel *)h;
    struct gt_module *m;
    CUresult r = gt_library_module(k->library, ctx, &m);
    if (r == CUDA_SUCCESS) *out = m->funcs[k->index];
    return r;
}

static void free_managed(struct gt_library *lib)
{
    for (size_t i = 0; lib->managed && i < lib->info.n_globals; i++)
        if (lib->managed[i]) gt_device_free(lib->managed[i]);
    free(lib->managed);
    lib->managed = NULL;
}

static CUresult library_create(CUlibrary *library, struct gt_image_info *info, CUresult parsed,
                               enum gt_load_api api)
{
    CUresult r = parsed;
    int kind = info->kind;
    struct gt_library *lib = NULL;
    if (r == CUDA_SUCCESS) {
        lib = gt_object_new(GT_KIND_LIBRARY, sizeof *lib, sizeof(struct gt_object), NULL);
        r = lib ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (r != CUDA_SUCCESS) {
        gt_image_info_free(info);
        return r;
    }
    pthread_mutex_init(&lib->lock, NULL);
    lib->info = *info;
    lib->kernels = calloc(info->n_entries + 1, sizeof *lib->kernels);
    for (size_t i = 0; lib->kernels && i < info->n_entries; i++) {
        struct gt_kernel *k =
            gt_object_new(GT_KIND_KERNEL, sizeof *k, sizeof(struct gt_object), NULL);
        if (!k) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
            break;
        }
        k->library = lib;
        k->name = lib->info.entries[i];
        k->index = i;
        k->ns = gt_kernel_duration(k->name);
        gt_function_defaults(k->attrs);
        lib->kernels[i] = k;
    }
    if (!lib->kernels) r = CUDA_ERROR_OUT_OF_MEMORY;
    /* Managed variables are context-independent: device 0's memory. */
    lib->managed = calloc(info->n_globals + 1, sizeof *lib->managed);
    if (!lib->managed) r = CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; r == CUDA_SUCCESS && i < info->n_globals; i++)
        if (info->globals[i].managed)
            r = gt_global_alloc(&gt_devices[0], NULL, &info->globals[i], &lib->managed[i]);
    if (r != CUDA_SUCCESS) {
        for (size_t i = 0; lib->kernels && i < info->n_entries; i++)
            if (lib->kernels[i]) gt_object_free(lib->kernels[i], GT_KIND_KERNEL);
        free_managed(lib);
        free(lib->kernels);
        gt_image_info_free(&lib->info);
        gt_object_free(lib, GT_KIND_LIBRARY);
        return r;
    }
    *library = (CUlibrary)lib;
    gt_count_load(api, kind);
    return CUDA_SUCCESS;
}

static CUresult load_prologue(const void *library, const void *source, unsigned n_jit,
                              const void *jit_options, const void *jit_values, unsigned n_lib,
                              const void *lib_options, const void *lib_values)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!library || !source || (n_jit && (!jit_options || !jit_values)) ||
        (n_lib && (!lib_options || !lib_values)))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                   unsigned int numLibraryOptions)
{
    CUresult r = load_prologue(library, code, numJitOptions, jitOptions, jitOptionsValues,
                               numLibraryOptions, libraryOptions, libraryOptionValues);
    if (r != CUDA_SUCCESS) return r;
    struct gt_image_info info;
    CUresult parsed = gt_image_parse(code, 0, &info);
    return library_create(library, &info, parsed, GT_LOAD_LIBRARY_DATA);
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
                                       CUjit_option *jitOptions, void **jitOptionsValues,
                                       unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                                       void **libraryOptionValues, unsigned int numLibraryOptions)
{
    CUresult r = load_prologue(library, fileName, numJitOptions, jitOptions, jitOptionsValues,
                               numLibraryOptions, libraryOptions, libraryOptionValues);
    if (r != CUDA_SUCCESS) return r;
    struct gt_image_info info;
    CUresult parsed = gt_image_parse_file(fileName, &info);
    return library_create(library, &info, parsed, GT_LOAD_LIBRARY_FILE);
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
    struct gt_library *lib;
    CUresult r = library_check(library, &lib);
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_kill(lib, GT_KIND_LIBRARY)) return CUDA_ERROR_INVALID_HANDLE;
    for (;;) {
        pthread_mutex_lock(&lib->lock);
        struct gt_module *m = lib->n_mods ? lib->mods[0].module : NULL;
        pthread_mutex_unlock(&lib->lock);
        if (!m) break;
        gt_ctx_synchronize_work(m->ctx);
        gt_module_destroy(m);
    }
    for (size_t i = 0; i < lib->info.n_entries; i++)
        gt_object_free(lib->kernels[i], GT_KIND_KERNEL);
    free_managed(lib);
    free(lib->kernels);
    free(lib->mods);
    gt_image_info_free(&lib->info);
    pthread_mutex_destroy(&lib->lock);
    gt_object_recycle(lib, GT_KIND_LIBRARY);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    struct gt_library *lib;
    CUresult r = library_check(library, &lib);
    if (r != CUDA_SUCCESS) return r;
    if (!pKernel || !name) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < lib->info.n_entries; i++) {
        if (!strcmp(lib->info.entries[i], name)) {
            *pKernel = (CUkernel)lib->kernels[i];
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int *count, CUlibrary library)
{
    struct gt_library *lib;
    CUresult r = library_check(library, &lib);
    if (r != CUDA_SUCCESS) return r;
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = (unsigned int)lib->info.n_entries;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels,
                                           CUlibrary library)
{
    struct gt_library *lib;
    CUresult r = library_check(library, &lib);
    if (r != CUDA_SUCCESS) return r;
    if (!kernels) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numKernels && i < lib->info.n_entries; i++)
        kernels[i] = (CUkernel)lib->kernels[i];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    struct gt_library *lib;
    CUresult r = library_check(library, &lib);
    struct gt_context *ctx;
    if (r == CUDA_SUCCESS) r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!pMod) return CUDA_ERROR_INVALID_VALUE;
    struct gt_module *m;
    r = gt_library_module(lib, ctx, &m);
    if (r == CUDA_SUCCESS) *pMod = (CUmodule)m;
    return r;
}

/* A global of the library's module in the current context. */
static CUresult library_global(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                               const char *name)
{
    struct gt_library *lib;
    CUresult r = library_check(library, &lib);
    struct gt_context *ctx;
    if (r == CUDA_SUCCESS) r = gt_ctx_require(&ctx);
    struct gt_module *m;
    if (r == CUDA_SUCCESS) r = gt_library_module(lib, ctx, &m);
    return r != CUDA_SUCCESS ? r : gt_module_global(m, name, dptr, bytes);
}

CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                                    const char *name)
{
    return library_global(dptr, bytes, library, name);
}

/* A __managed__ variable: one allocation of managed memory, shared by
 * every context, so no context needs to be current. */
CUresult CUDAAPI cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                                     const char *name)
{
    struct gt_library *lib;
    CUresult r = library_check(library, &lib);
    if (r != CUDA_SUCCESS) return r;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < lib->info.n_globals; i++) {
        if (!lib->managed[i] || strcmp(lib->info.globals[i].name, name) != 0) continue;
        if (dptr) *dptr = lib->managed[i];
        if (bytes) *bytes = lib->info.globals[i].size;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    struct gt_kernel *k;
    CUresult r = gt_kernel_check(kernel, &k);
    struct gt_context *ctx;
    if (r == CUDA_SUCCESS) r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!pFunc) return CUDA_ERROR_INVALID_VALUE;
    struct gt_function *f;
    r = gt_launch_function((CUfunction)kernel, ctx, &f);
    if (r == CUDA_SUCCESS) *pFunc = (CUfunction)f;
    return r;
}

CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc)
{
    struct gt_kernel *k;
    CUresult r = gt_kernel_check(hfunc, &k);
    if (r != CUDA_SUCCESS) return r;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    *name = k->name;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
    struct gt_kernel *k;
    CUresult r = gt_kernel_check(kernel, &k);
    if (r != CUDA_SUCCESS) return r;
    if (!pLib) return CUDA_ERROR_INVALID_VALUE;
    *pLib = (CUlibrary)k->library;
    return CUDA_SUCCESS;
}
