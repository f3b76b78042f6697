/* Modules: an image's entries become functions (with their simulated
 * duration looked up once), its globals are backed by device memory
 * holding their initial values. */
#include "emu_module.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gt_module **modules;
static size_t n_modules, cap_modules;

static bool register_module(struct gt_module *m)
{
    pthread_mutex_lock(&modules_lock);
    bool ok = true;
    if (n_modules == cap_modules) {
        size_t cap = cap_modules ? cap_modules * 2 : 16;
        struct gt_module **grown = realloc(modules, cap * sizeof *grown);
        if (grown) {
            modules = grown;
            cap_modules = cap;
        } else {
            ok = false;
        }
    }
    if (ok) modules[n_modules++] = m;
    pthread_mutex_unlock(&modules_lock);
    return ok;
}

static void unregister_module(struct gt_module *m)
{
    pthread_mutex_lock(&modules_lock);
    for (size_t i = 0; i < n_modules; i++) {
        if (modules[i] == m) {
            modules[i] = modules[--n_modules];
            break;
        }
    }
    pthread_mutex_unlock(&modules_lock);
}

static void free_parts(struct gt_module *m)
{
    for (size_t i = 0; m->funcs && i < m->info.n_entries; i++)
        if (m->funcs[i]) gt_object_free(m->funcs[i], GT_KIND_FUNCTION);
    for (size_t i = 0; m->globals && i < m->info.n_globals; i++)
        if (m->globals[i].ptr && m->globals[i].owned) gt_device_free(m->globals[i].ptr);
    free(m->funcs);
    free(m->globals);
    gt_image_info_free(&m->info);
}

CUresult gt_global_alloc(struct gt_device *dev, struct gt_context *ctx,
                         const struct gt_image_global *g, CUdeviceptr *out)
{
    enum gt_mem_kind kind = g->managed ? GT_MEM_MANAGED : GT_MEM_DEVICE;
    unsigned flags = g->managed ? CU_MEM_ATTACH_GLOBAL : 0;
    CUresult r = gt_device_alloc_on(dev, ctx, g->size ? g->size : 1, kind, flags, out);
    if (r != CUDA_SUCCESS) return r;
    void *p = (void *)(uintptr_t)*out;
    memset(p, 0, g->size);
    if (g->init) memcpy(p, g->init, g->init_len < g->size ? g->init_len : g->size);
    return CUDA_SUCCESS;
}

/* Library modules share their library's managed variables. */
static CUresult back_globals(struct gt_module *m)
{
    for (size_t i = 0; i < m->info.n_globals; i++) {
        const struct gt_image_global *g = &m->info.globals[i];
        struct gt_module_global *mg = &m->globals[i];
        mg->name = g->name;
        mg->size = g->size;
        if (m->library && m->library->managed[i]) {
            mg->ptr = m->library->managed[i];
            continue;
        }
        mg->owned = true;
        CUresult r = gt_global_alloc(m->ctx->dev, m->ctx, g, &mg->ptr);
        if (r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
}

CUresult gt_module_create(struct gt_context *ctx, struct gt_image_info *info,
                          struct gt_library *library, struct gt_module **out)
{
    struct gt_module *m = gt_object_new(GT_KIND_MODULE, sizeof *m, sizeof(struct gt_object), NULL);
    if (!m) {
        gt_image_info_free(info);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->ctx = ctx;
    m->library = library;
    m->info = *info;
    memset(info, 0, sizeof *info);
    m->funcs = calloc(m->info.n_entries + 1, sizeof *m->funcs);
    m->globals = calloc(m->info.n_globals + 1, sizeof *m->globals);
    CUresult r = m->funcs && m->globals ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; r == CUDA_SUCCESS && i < m->info.n_entries; i++) {
        struct gt_function *f =
            gt_object_new(GT_KIND_FUNCTION, sizeof *f, sizeof(struct gt_object), NULL);
        if (!f) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
            break;
        }
        f->module = m;
        f->name = m->info.entries[i];
        f->ns = gt_kernel_duration(f->name);
        if (library)
            memcpy(f->attrs, library->kernels[i]->attrs, sizeof f->attrs);
        else
            gt_function_defaults(f->attrs);
        m->funcs[i] = f;
    }
    if (r == CUDA_SUCCESS) r = back_globals(m);
    if (r == CUDA_SUCCESS && !register_module(m)) r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r != CUDA_SUCCESS) {
        free_parts(m);
        gt_object_free(m, GT_KIND_MODULE);
        return r;
    }
    *out = m;
    return CUDA_SUCCESS;
}

void gt_module_destroy(struct gt_module *m)
{
    if (!gt_object_kill(m, GT_KIND_MODULE)) return;
    unregister_module(m);
    if (m->library) gt_library_forget_module(m->library, m);
    free_parts(m);
    gt_object_recycle(m, GT_KIND_MODULE);
}

void gt_modules_drop_context(struct gt_context *ctx)
{
    for (;;) {
        struct gt_module *victim = NULL;
        pthread_mutex_lock(&modules_lock);
        for (size_t i = 0; i < n_modules && !victim; i++)
            if (modules[i]->ctx == ctx) victim = modules[i];
        pthread_mutex_unlock(&modules_lock);
        if (!victim) return;
        gt_module_destroy(victim);
    }
}

CUresult gt_function_check(CUfunction h, struct gt_function **out)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(h, GT_KIND_FUNCTION)) return CUDA_ERROR_INVALID_HANDLE;
    *out = (struct gt_function *)h;
    return CUDA_SUCCESS;
}

static CUresult module_check(CUmodule h, struct gt_module **out)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(h, GT_KIND_MODULE)) return CUDA_ERROR_INVALID_HANDLE;
    *out = (struct gt_module *)h;
    return CUDA_SUCCESS;
}

static CUresult load_info(CUmodule *module, struct gt_image_info *info, CUresult parsed,
                          enum gt_load_api api)
{
    struct gt_context *ctx = NULL;
    int kind = info->kind;
    CUresult r = parsed == CUDA_SUCCESS ? gt_ctx_require(&ctx) : parsed;
    if (r == CUDA_SUCCESS && !module) r = CUDA_ERROR_INVALID_VALUE;
    struct gt_module *m;
    if (r == CUDA_SUCCESS)
        r = gt_module_create(ctx, info, NULL, &m);
    else
        gt_image_info_free(info);
    if (r == CUDA_SUCCESS) {
        *module = (CUmodule)m;
        gt_count_load(api, kind);
    }
    return r;
}

/* Errors before parsing: not initialised, no context, bad arguments. */
static CUresult load_prologue(const void *module, const void *source)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    return module && source ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
    CUresult r = load_prologue(module, fname);
    if (r != CUDA_SUCCESS) return r;
    struct gt_image_info info;
    return load_info(module, &info, gt_image_parse_file(fname, &info), GT_LOAD_MODULE);
}

static CUresult load_data(CUmodule *module, const void *image, enum gt_load_api api)
{
    CUresult r = load_prologue(module, image);
    if (r != CUDA_SUCCESS) return r;
    struct gt_image_info info;
    CUresult parsed = gt_image_parse(image, 0, &info);
    return load_info(module, &info, parsed, api);
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    return load_data(module, image, GT_LOAD_MODULE_DATA);
}

/* JIT options only tune a compilation that does not happen here. */
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues)
{
    CUresult r = load_prologue(module, image);
    if (r == CUDA_SUCCESS && numOptions && (!options || !optionValues))
        r = CUDA_ERROR_INVALID_VALUE;
    return r != CUDA_SUCCESS ? r : load_data(module, image, GT_LOAD_MODULE_DATA_EX);
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    return load_data(module, fatCubin, GT_LOAD_MODULE_FATBIN);
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    struct gt_module *m;
    CUresult r = module_check(hmod, &m);
    if (r != CUDA_SUCCESS) return r;
    if (m->library) return CUDA_ERROR_INVALID_HANDLE; /* owned by its library */
    gt_ctx_synchronize_work(m->ctx);
    gt_module_destroy(m);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    struct gt_module *m;
    CUresult r = module_check(hmod, &m);
    if (r != CUDA_SUCCESS) return r;
    if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < m->info.n_entries; i++) {
        if (!strcmp(m->info.entries[i], name)) {
            *hfunc = (CUfunction)m->funcs[i];
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
    struct gt_module *m;
    CUresult r = module_check(mod, &m);
    if (r != CUDA_SUCCESS) return r;
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = (unsigned int)m->info.n_entries;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions,
                                            CUmodule mod)
{
    struct gt_module *m;
    CUresult r = module_check(mod, &m);
    if (r != CUDA_SUCCESS) return r;
    if (!functions) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numFunctions && i < m->info.n_entries; i++)
        functions[i] = (CUfunction)m->funcs[i];
    return CUDA_SUCCESS;
}

CUresult gt_module_global(struct gt_module *m, const char *name, CUdeviceptr *dptr, size_t *bytes)
{
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < m->info.n_globals; i++) {
        if (!strcmp(m->globals[i].name, name)) {
            if (dptr) *dptr = m->globals[i].ptr;
            if (bytes) *bytes = m->globals[i].size;
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_NOT_FOUND;
}

static CUresult module_get_global(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
    struct gt_module *m;
    CUresult r = module_check(hmod, &m);
    return r != CUDA_SUCCESS ? r : gt_module_global(m, name, dptr, bytes);
}

CUresult CUDAAPI cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
                                      const char *name)
{
    return module_get_global(dptr, bytes, hmod, name);
}

CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr_v1 *dptr, unsigned int *bytes, CUmodule hmod,
                                   const char *name)
{
    CUdeviceptr p;
    size_t size;
    CUresult r = module_get_global(&p, &size, hmod, name);
    if (r != CUDA_SUCCESS) return r;
    if (p > 0xffffffffu) return CUDA_ERROR_NOT_SUPPORTED; /* no 32-bit address for it */
    if (dptr) *dptr = (CUdeviceptr_v1)p;
    if (bytes) *bytes = (unsigned int)size;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    *mode = CU_MODULE_EAGER_LOADING;
    return CUDA_SUCCESS;
}
