#include "event.h"

#include <stddef.h>
#include <string.h>

static const char *name_or_unknown(const char *const *names, size_t n, unsigned i)
{
    return i < n && names[i] ? names[i] : "unknown";
}

#define NAME_OF(table, i) name_or_unknown(table, sizeof(table) / sizeof(table[0]), (unsigned)(i))

static const char *const category_names[GT_CAT_COUNT] = {
    "kernel", "memcpy", "memset", "memory", "compile", "module", "sync", "nvtx", "api",
};
static const char *const dir_names[GT_DIR_COUNT] = {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};
static const char *const host_mem_names[GT_HOST_COUNT] = {"none", "pageable", "pinned",
                                                          "managed"};
static const char *const mem_kind_names[GT_MEM_COUNT] = {"device", "managed", "async", "pinned",
                                                         "vmm"};
static const char *const number_kind_names[GT_NUM_COUNT] = {"none",   "uint64", "int64", "double",
                                                            "uint32", "int32",  "float"};
static const char *const image_kind_names[GT_IMAGE_COUNT] = {"unknown", "ptx", "cubin", "fatbin"};

const char *gt_category_name(enum gt_category c)
{
    return NAME_OF(category_names, c);
}

const char *gt_copy_dir_name(enum gt_copy_dir d)
{
    return NAME_OF(dir_names, d);
}

const char *gt_host_mem_name(enum gt_host_mem h)
{
    return NAME_OF(host_mem_names, h);
}

const char *gt_mem_kind_name(enum gt_mem_kind k)
{
    return NAME_OF(mem_kind_names, k);
}

const char *gt_image_kind_name(enum gt_image_kind k)
{
    return NAME_OF(image_kind_names, k);
}

const char *gt_number_kind_name(enum gt_number_kind k)
{
    return NAME_OF(number_kind_names, k);
}

double gt_number_value(uint8_t kind, uint64_t bits)
{
    switch (kind) {
    case GT_NUM_U64:
    case GT_NUM_U32:
        return (double)bits;
    case GT_NUM_I64:
    case GT_NUM_I32:
        return (double)(int64_t)bits;
    case GT_NUM_F64:
    case GT_NUM_F32: {
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    default:
        return 0.0;
    }
}
