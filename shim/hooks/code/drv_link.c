/* Driver links (cuLinkCreate, cuLinkAddData/AddFile, cuLinkComplete): the
 * inputs are noted per link as they are added, and cuLinkComplete is one
 * `module` record. Its kind is `ptx` when an input needs the driver to
 * compile it (PTX, NVVM IR, a fat binary holding only PTX for the device):
 * that compilation is most of the call's time. Otherwise the link only
 * joins machine code and its kind is `cubin`. Its size is the inputs'. */
#include "handles.h"
#include "image.h"
#include "module.h"

/* CUlinkState -> inputs (count, bytes, kind: GT_IMAGE_PTX once one needs JIT). */
static gt_handle_table links;

static enum gt_image_kind input_kind(CUjitInputType type, enum gt_image_kind content)
{
    switch (type) {
    case CU_JIT_INPUT_PTX:
    case CU_JIT_INPUT_NVVM:
        return GT_IMAGE_PTX;
    case CU_JIT_INPUT_CUBIN:
        return GT_IMAGE_CUBIN;
    case CU_JIT_INPUT_FATBINARY:
        return content == GT_IMAGE_PTX ? GT_IMAGE_PTX : GT_IMAGE_FATBIN;
    default: /* host objects and archives: fat binaries inside */
        return GT_IMAGE_FATBIN;
    }
}

/* Before the call: the input's kind and size, kept in the call (its api
 * record carries them, as nothing in the report reads them there). */
static void describe_data(gt_call *c, CUjitInputType type, const void *data, size_t size)
{
    uint64_t bytes;
    enum gt_image_kind content = GT_IMAGE_UNKNOWN;
    if (type == CU_JIT_INPUT_FATBINARY) {
        int saved = errno;
        content = gt_image_classify(data, size, gt_module_device_sm(), &bytes);
        errno = saved;
    }
    c->u.module.image_kind = (uint8_t)input_kind(type, content);
    c->bytes = size;
}

static void describe_file(gt_call *c, CUjitInputType type, const char *path)
{
    uint64_t bytes;
    enum gt_image_kind content = gt_module_file_kind(path, &bytes);
    c->u.module.image_kind = (uint8_t)input_kind(type, content);
    c->bytes = bytes;
}

static int add_input(gt_handle_info *info, void *ctx)
{
    const gt_call *c = ctx;
    info->count++;
    info->bytes += c->bytes;
    if (c->u.module.image_kind == GT_IMAGE_PTX) info->kind = GT_IMAGE_PTX;
    return 1;
}

static void added(CUresult r, CUlinkState state, gt_call *c)
{
    if (r == CUDA_SUCCESS) gt_handle_edit(&links, (uint64_t)(uintptr_t)state, 1, add_input, c);
}

static void created(CUresult r, CUlinkState *state, unsigned n_options)
{
    gt_handle_info info = {.options = n_options, .kind = GT_IMAGE_CUBIN};
    if (r == CUDA_SUCCESS && state) gt_handle_put(&links, (uint64_t)(uintptr_t)*state, &info);
}

static void describe_complete(gt_call *c, CUlinkState state)
{
    gt_handle_info info;
    gt_handle_get(&links, (uint64_t)(uintptr_t)state, &info);
    c->u.module.image_kind = info.kind == GT_IMAGE_PTX ? GT_IMAGE_PTX : GT_IMAGE_CUBIN;
    c->u.module.ptx_source = GT_PTX_FROM_LINK;
    unsigned sm = gt_module_device_sm();
    c->u.module.device_sm = (uint8_t)(sm < 256 ? sm : 0);
    c->bytes = info.bytes;
}

#define LINK_API(sym, base, params, args, then, ...)                                               \
    GT_DRIVER_WRAPPER_THEN(sym, base, GT_CAT_MODULE, GT_EV_API, params, args, then, __VA_ARGS__)

#define CREATE(sym)                                                                                \
    LINK_API(sym, cuLinkCreate,                                                                    \
             (unsigned int n, CUjit_option *options, void **values, CUlinkState *state),           \
             (n, options, values, state), created(r_, state, n), (void)c)
#define ADD_DATA(sym)                                                                              \
    LINK_API(sym, cuLinkAddData,                                                                   \
             (CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,   \
              unsigned int n, CUjit_option *options, void **values),                               \
             (state, type, data, size, name, n, options, values), added(r_, state, &c),            \
             describe_data(&c, type, data, size))
#define ADD_FILE(sym)                                                                              \
    LINK_API(sym, cuLinkAddFile,                                                                   \
             (CUlinkState state, CUjitInputType type, const char *path, unsigned int n,            \
              CUjit_option *options, void **values),                                               \
             (state, type, path, n, options, values), added(r_, state, &c),                        \
             describe_file(&c, type, path))

CREATE(cuLinkCreate)
CREATE(cuLinkCreate_v2)
ADD_DATA(cuLinkAddData)
ADD_DATA(cuLinkAddData_v2)
ADD_FILE(cuLinkAddFile)
ADD_FILE(cuLinkAddFile_v2)

GT_DRIVER_WRAPPER(cuLinkComplete, cuLinkComplete, GT_CAT_MODULE, GT_EV_MODULE,
                  (CUlinkState state, void **cubin, size_t *size), (state, cubin, size),
                  describe_complete(&c, state))

static void destroyed(CUresult r, CUlinkState state)
{
    gt_handle_info info;
    if (r == CUDA_SUCCESS) gt_handle_take(&links, (uint64_t)(uintptr_t)state, &info);
}

LINK_API(cuLinkDestroy, cuLinkDestroy, (CUlinkState state), (state), destroyed(r_, state), (void)c)
