/* Code images, modules, functions, libraries and kernels of the emulated
 * driver. Images are parsed only for names: kernel entry points and global
 * variables (with their sizes and, where the image has them, initial
 * values); no device code is ever executed. */
#ifndef GTEMU_EMU_MODULE_H
#define GTEMU_EMU_MODULE_H

#include "emu.h"

enum gt_image_kind { GT_IMAGE_PTX = 1, GT_IMAGE_CUBIN, GT_IMAGE_FATBIN };

struct gt_image_global {
    char *name;
    size_t size;
    bool managed;        /* a __managed__ variable: backed by managed memory */
    unsigned char *init; /* initial value (init_len bytes), or NULL: zeros */
    size_t init_len;
};

struct gt_image_info {
    enum gt_image_kind kind;
    char **entries;
    size_t n_entries, cap_entries;
    struct gt_image_global *globals;
    size_t n_globals, cap_globals;
};

/* Parses a PTX text, an ELF cubin or an nvcc fatbin (also the
 * __cudaRegisterFatBinary wrapper around one). `size` is 0 when unknown
 * (cuModuleLoadData): the image's own headers then bound it. */
CUresult gt_image_parse(const void *image, size_t size, struct gt_image_info *out);
CUresult gt_image_parse_file(const char *path, struct gt_image_info *out);
/* The whole file plus a terminating NUL (counted in *size), or NULL with
 * *err CUDA_ERROR_FILE_NOT_FOUND / CUDA_ERROR_OUT_OF_MEMORY. */
void *gt_read_file(const char *path, size_t *size, CUresult *err);
void gt_image_info_free(struct gt_image_info *info);
/* Adds every name of `from` not yet in `into` (used by the linker). */
bool gt_image_merge(struct gt_image_info *into, const struct gt_image_info *from);
bool gt_image_add_entry(struct gt_image_info *info, const char *name, size_t len);
bool gt_image_add_global(struct gt_image_info *info, const char *name, size_t len, size_t size,
                         const void *init, size_t init_len, bool managed);

/* Format parsers (image_ptx.c, image_elf.c, image_fatbin.c). */
CUresult gt_ptx_parse(const char *text, size_t len, struct gt_image_info *out);
bool gt_elf_is_cuda(const void *p, size_t size);
CUresult gt_elf_parse(const unsigned char *p, size_t size, struct gt_image_info *out);
/* Size of the ELF image starting at p from its headers (0 if malformed). */
size_t gt_elf_size(const unsigned char *p, size_t limit);
/* Builds a CUDA ELF (EM_CUDA, sm_90) declaring the entries and globals. */
void *gt_elf_build(const struct gt_image_info *info, size_t *size_out);
CUresult gt_fatbin_parse(const unsigned char *p, size_t size, struct gt_image_info *out);
size_t gt_fatbin_size(const unsigned char *p);
/* Finds fatbins and CUDA ELFs embedded in a host object or archive. */
CUresult gt_scan_embedded(const unsigned char *p, size_t size, struct gt_image_info *out);

struct gt_module;
struct gt_library;

struct gt_function {
    struct gt_object obj;
    struct gt_module *module;
    const char *name;                 /* owned by the module's image info */
    uint64_t ns;                      /* simulated duration */
    int attrs[CU_FUNC_ATTRIBUTE_MAX]; /* cuFuncGetAttribute values */
    CUfunc_cache cache_config;
};

/* Attribute values of a function as loaded. */
void gt_function_defaults(int *attrs);

struct gt_module_global {
    const char *name;
    CUdeviceptr ptr;
    size_t size;
    bool owned; /* false: a library's __managed__ variable */
};

struct gt_module {
    struct gt_object obj;
    struct gt_context *ctx;
    struct gt_image_info info;
    struct gt_function **funcs;
    struct gt_module_global *globals;
    struct gt_library *library; /* owner, for library modules */
};

struct gt_kernel {
    struct gt_object obj;
    struct gt_library *library;
    const char *name;
    size_t index;
    uint64_t ns;
    int attrs[CU_FUNC_ATTRIBUTE_MAX]; /* copied into each context's function */
};

struct gt_library_module {
    struct gt_context *ctx;
    unsigned long long ctx_id;
    struct gt_module *module;
};

struct gt_library {
    struct gt_object obj;
    pthread_mutex_t lock;
    struct gt_image_info info;
    struct gt_kernel **kernels;
    struct gt_library_module *mods;
    size_t n_mods, cap_mods;
    /* __managed__ variables (per global, 0 for others): one allocation for
     * every context, made at load. */
    CUdeviceptr *managed;
};

/* Allocates memory for a global on dev, holding its initial value. */
CUresult gt_global_alloc(struct gt_device *dev, struct gt_context *ctx,
                         const struct gt_image_global *g, CUdeviceptr *out);
/* Creates a module of ctx from parsed image info (takes the info). */
CUresult gt_module_create(struct gt_context *ctx, struct gt_image_info *info,
                          struct gt_library *library, struct gt_module **out);
void gt_module_destroy(struct gt_module *m);
/* Looks a global up by name (dptr and bytes optional). */
CUresult gt_module_global(struct gt_module *m, const char *name, CUdeviceptr *dptr, size_t *bytes);
/* A library's module is being destroyed (its context went away). */
void gt_library_forget_module(struct gt_library *lib, struct gt_module *m);
/* Unloads every module of a context being destroyed. */
void gt_modules_drop_context(struct gt_context *ctx);
CUresult gt_function_check(CUfunction h, struct gt_function **out);
CUresult gt_kernel_check(CUkernel h, struct gt_kernel **out);
/* The library's module for ctx, loaded on first use. */
CUresult gt_library_module(struct gt_library *lib, struct gt_context *ctx, struct gt_module **out);
/* Function for a launch: a CUfunction, or a CUkernel taken in the context. */
CUresult gt_launch_function(CUfunction h, struct gt_context *ctx, struct gt_function **out);

#endif
