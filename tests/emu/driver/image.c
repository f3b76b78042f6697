/* Code images: recognising the format and collecting names. */
#include "emu_module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GT_FATBIN_MAGIC 0xBA55ED50u
/* The wrapper __cudaRegisterFatBinary receives: {magic, version, data, ...}. */
#define GT_FATBIN_WRAPPER_MAGIC 0x466243b1u

struct fatbin_wrapper {
    int magic;
    int version;
    const unsigned char *data;
    void *filename_or_fatbins;
};

bool gt_image_add_entry(struct gt_image_info *info, const char *name, size_t len)
{
    for (size_t i = 0; i < info->n_entries; i++)
        if (strlen(info->entries[i]) == len && !strncmp(info->entries[i], name, len)) return true;
    if (info->n_entries == info->cap_entries) {
        size_t cap = info->cap_entries ? info->cap_entries * 2 : 8;
        char **entries = realloc(info->entries, cap * sizeof *entries);
        if (!entries) return false;
        info->entries = entries;
        info->cap_entries = cap;
    }
    char *copy = strndup(name, len);
    if (!copy) return false;
    info->entries[info->n_entries++] = copy;
    return true;
}

bool gt_image_add_global(struct gt_image_info *info, const char *name, size_t len, size_t size,
                         const void *init, size_t init_len, bool managed)
{
    for (size_t i = 0; i < info->n_globals; i++)
        if (strlen(info->globals[i].name) == len && !strncmp(info->globals[i].name, name, len))
            return true;
    if (info->n_globals == info->cap_globals) {
        size_t cap = info->cap_globals ? info->cap_globals * 2 : 8;
        struct gt_image_global *globals = realloc(info->globals, cap * sizeof *globals);
        if (!globals) return false;
        info->globals = globals;
        info->cap_globals = cap;
    }
    struct gt_image_global *g = &info->globals[info->n_globals];
    memset(g, 0, sizeof *g);
    g->name = strndup(name, len);
    g->size = size;
    g->managed = managed;
    if (!g->name) return false;
    if (init && init_len) {
        g->init = malloc(init_len);
        if (!g->init) {
            free(g->name);
            return false;
        }
        memcpy(g->init, init, init_len);
        g->init_len = init_len;
    }
    info->n_globals++;
    return true;
}

void gt_image_info_free(struct gt_image_info *info)
{
    for (size_t i = 0; i < info->n_entries; i++)
        free(info->entries[i]);
    for (size_t i = 0; i < info->n_globals; i++) {
        free(info->globals[i].name);
        free(info->globals[i].init);
    }
    free(info->entries);
    free(info->globals);
    memset(info, 0, sizeof *info);
}

bool gt_image_merge(struct gt_image_info *into, const struct gt_image_info *from)
{
    for (size_t i = 0; i < from->n_entries; i++)
        if (!gt_image_add_entry(into, from->entries[i], strlen(from->entries[i]))) return false;
    for (size_t i = 0; i < from->n_globals; i++) {
        const struct gt_image_global *g = &from->globals[i];
        if (!gt_image_add_global(into, g->name, strlen(g->name), g->size, g->init, g->init_len,
                                 g->managed))
            return false;
    }
    return true;
}

static uint32_t read_u32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* PTX is text, read up to its NUL as the driver reads it: the documentation
 * asks for NUL-terminated PTX wherever it is passed, and the size
 * cuLinkAddData takes with it ("the length of the input data") bounds only
 * binary images: callers pass the text's length with or without the NUL
 * (Numba and cuda.core pass len() of the bytes). It must look like PTX. */
static CUresult parse_text(const char *text, struct gt_image_info *out)
{
    size_t len = strlen(text);
    if (!memmem(text, len, ".version", 8) && !memmem(text, len, ".target", 7))
        return CUDA_ERROR_INVALID_IMAGE;
    out->kind = GT_IMAGE_PTX;
    return gt_ptx_parse(text, len, out);
}

CUresult gt_image_parse(const void *image, size_t size, struct gt_image_info *out)
{
    memset(out, 0, sizeof *out);
    if (!image) return CUDA_ERROR_INVALID_VALUE;
    const unsigned char *p = image;
    if ((!size || size >= 16) && read_u32(p) == GT_FATBIN_WRAPPER_MAGIC) {
        const struct fatbin_wrapper *w = image;
        p = w->data;
        size = 0;
        if (!p) return CUDA_ERROR_INVALID_IMAGE;
    }
    if ((!size || size >= 16) && read_u32(p) == GT_FATBIN_MAGIC) {
        size_t fat = gt_fatbin_size(p);
        if (!size || fat < size) size = fat;
        out->kind = GT_IMAGE_FATBIN;
        return gt_fatbin_parse(p, size, out);
    }
    if ((!size || size >= 64) && gt_elf_is_cuda(p, size ? size : 64)) {
        size_t elf = gt_elf_size(p, size);
        if (!elf) return CUDA_ERROR_INVALID_IMAGE;
        out->kind = GT_IMAGE_CUBIN;
        return gt_elf_parse(p, elf, out);
    }
    return parse_text((const char *)p, out);
}

void *gt_read_file(const char *path, size_t *size, CUresult *err)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) {
        *err = path ? CUDA_ERROR_FILE_NOT_FOUND : CUDA_ERROR_INVALID_VALUE;
        return NULL;
    }
    char *data = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *grown = realloc(data, cap);
            if (!grown) {
                free(data);
                fclose(f);
                *err = CUDA_ERROR_OUT_OF_MEMORY;
                return NULL;
            }
            data = grown;
        }
        size_t n = fread(data + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0) break;
    }
    fclose(f);
    data[len] = '\0'; /* PTX files are text without a terminator */
    *size = len + 1;
    *err = CUDA_SUCCESS;
    return data;
}

CUresult gt_image_parse_file(const char *path, struct gt_image_info *out)
{
    memset(out, 0, sizeof *out);
    size_t size;
    CUresult r;
    void *data = gt_read_file(path, &size, &r);
    if (!data) return r;
    r = gt_image_parse(data, size, out);
    free(data);
    return r;
}
