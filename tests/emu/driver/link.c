/* JIT linking: inputs are parsed for names and merged; cuLinkComplete
 * returns a CUDA ELF declaring every entry and global of the inputs, which
 * the module loader accepts like an nvcc cubin. Nothing is compiled. */
#include "emu_module.h"

#include <stdlib.h>

struct gt_link {
    struct gt_object obj;
    struct gt_image_info info;
    size_t inputs;
    void *cubin;
};

static CUresult link_check(CUlinkState h, struct gt_link **out)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(h, GT_KIND_LINK)) return CUDA_ERROR_INVALID_HANDLE;
    *out = (struct gt_link *)h;
    return CUDA_SUCCESS;
}

static CUresult link_create(unsigned numOptions, CUjit_option *options, void **optionValues,
                            CUlinkState *stateOut)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!stateOut || (numOptions && (!options || !optionValues))) return CUDA_ERROR_INVALID_VALUE;
    struct gt_link *l = gt_object_new(GT_KIND_LINK, sizeof *l, sizeof(struct gt_object), NULL);
    if (!l) return CUDA_ERROR_OUT_OF_MEMORY;
    *stateOut = (CUlinkState)l;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues,
                              CUlinkState *stateOut)
{
    return link_create(numOptions, options, optionValues, stateOut);
}

CUresult CUDAAPI cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options,
                                 void **optionValues, CUlinkState *stateOut)
{
    return link_create(numOptions, options, optionValues, stateOut);
}

static CUresult parse_input(CUjitInputType type, const void *data, size_t size,
                            struct gt_image_info *info)
{
    switch (type) {
    case CU_JIT_INPUT_CUBIN:
    case CU_JIT_INPUT_PTX:
    case CU_JIT_INPUT_FATBINARY:
        return gt_image_parse(data, size, info);
    case CU_JIT_INPUT_OBJECT:
    case CU_JIT_INPUT_LIBRARY:
        return gt_scan_embedded(data, size, info);
    default:
        return CUDA_ERROR_NOT_SUPPORTED; /* LTO IR needs a real compiler */
    }
}

static CUresult add_input(struct gt_link *l, CUjitInputType type, const void *data, size_t size)
{
    struct gt_image_info info = {0};
    CUresult r = parse_input(type, data, size, &info);
    if (r == CUDA_SUCCESS && !gt_image_merge(&l->info, &info)) r = CUDA_ERROR_OUT_OF_MEMORY;
    gt_image_info_free(&info);
    if (r == CUDA_SUCCESS) l->inputs++;
    return r;
}

static CUresult link_add_data(CUlinkState state, CUjitInputType type, void *data, size_t size,
                              unsigned numOptions, CUjit_option *options, void **optionValues)
{
    struct gt_link *l;
    CUresult r = link_check(state, &l);
    if (r != CUDA_SUCCESS) return r;
    if (!data || size == 0 || (numOptions && (!options || !optionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    return add_input(l, type, data, size);
}

CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size,
                               const char *name, unsigned int numOptions, CUjit_option *options,
                               void **optionValues)
{
    (void)name;
    return link_add_data(state, type, data, size, numOptions, options, optionValues);
}

CUresult CUDAAPI cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size,
                                  const char *name, unsigned int numOptions, CUjit_option *options,
                                  void **optionValues)
{
    (void)name;
    return link_add_data(state, type, data, size, numOptions, options, optionValues);
}

static CUresult link_add_file(CUlinkState state, CUjitInputType type, const char *path,
                              unsigned numOptions, CUjit_option *options, void **optionValues)
{
    struct gt_link *l;
    CUresult r = link_check(state, &l);
    if (r != CUDA_SUCCESS) return r;
    if (!path || (numOptions && (!options || !optionValues))) return CUDA_ERROR_INVALID_VALUE;
    size_t size;
    void *data = gt_read_file(path, &size, &r);
    if (!data) return r;
    r = add_input(l, type, data, size);
    free(data);
    return r;
}

CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
                               unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    return link_add_file(state, type, path, numOptions, options, optionValues);
}

CUresult CUDAAPI cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
                                  unsigned int numOptions, CUjit_option *options,
                                  void **optionValues)
{
    return link_add_file(state, type, path, numOptions, options, optionValues);
}

CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    struct gt_link *l;
    CUresult r = link_check(state, &l);
    if (r != CUDA_SUCCESS) return r;
    if (!cubinOut || !sizeOut || l->inputs == 0) return CUDA_ERROR_INVALID_VALUE;
    free(l->cubin);
    size_t size;
    l->cubin = gt_elf_build(&l->info, &size);
    if (!l->cubin) return CUDA_ERROR_OUT_OF_MEMORY;
    *cubinOut = l->cubin;
    *sizeOut = size;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state)
{
    struct gt_link *l;
    CUresult r = link_check(state, &l);
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_kill(l, GT_KIND_LINK)) return CUDA_ERROR_INVALID_HANDLE;
    free(l->cubin);
    gt_image_info_free(&l->info);
    gt_object_recycle(l, GT_KIND_LINK);
    return CUDA_SUCCESS;
}
