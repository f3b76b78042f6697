/* nvcc fatbins: a header (magic 0xBA55ED50, version, header size, size of
 * the entries) followed by entries, each a header (kind 1 = PTX, 2 = ELF;
 * header size; payload size; compressed size; target sm; flags; size
 * before compression) and a payload. nvcc compresses members by default
 * (ZSTD, or LZ4 with --compress-mode=speed); their names cannot be read
 * from the compressed bytes, so such members are decompressed with the
 * system's libzstd.so.1 / liblz4.so.1 when present and skipped otherwise. */
#include "emu_module.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define GT_FATBIN_KIND_PTX 1
#define GT_FATBIN_KIND_ELF 2
#define GT_FATBIN_FLAG_LZ4 0x2000ULL
#define GT_FATBIN_FLAG_ZSTD 0x8000ULL
#define GT_TARGET_SM 90

struct member {
    unsigned kind;
    unsigned arch;
    const unsigned char *payload;
    size_t payload_size;
    size_t compressed_size;
    size_t plain_size;
    uint64_t flags;
};

static uint64_t rd(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    memcpy(&v, p, n);
    return v;
}

size_t gt_fatbin_size(const unsigned char *p)
{
    return (size_t)rd(p + 6, 2) + (size_t)rd(p + 8, 8);
}

static bool read_member(const unsigned char *p, size_t avail, struct member *m, size_t *len)
{
    if (avail < 64) return false;
    size_t header = (size_t)rd(p + 4, 4);
    m->kind = (unsigned)rd(p, 2);
    m->payload_size = (size_t)rd(p + 8, 8);
    m->compressed_size = (size_t)rd(p + 16, 4);
    m->arch = (unsigned)rd(p + 28, 4);
    m->flags = rd(p + 40, 8);
    m->plain_size = (size_t)rd(p + 56, 8);
    if (header < 64 || header > avail || m->payload_size > avail - header) return false;
    m->payload = p + header;
    *len = header + m->payload_size;
    return true;
}

typedef size_t (*zstd_decompress_fn)(void *, size_t, const void *, size_t);
typedef unsigned (*zstd_is_error_fn)(size_t);
typedef int (*lz4_decompress_fn)(const char *, char *, int, int);

static void *library_symbol(const char *lib, const char *name)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    return h ? dlsym(h, name) : NULL;
}

/* The member's payload, decompressed if needed (caller frees *owned). */
static const unsigned char *member_bytes(const struct member *m, size_t *size,
                                         unsigned char **owned)
{
    *owned = NULL;
    if (!(m->flags & (GT_FATBIN_FLAG_LZ4 | GT_FATBIN_FLAG_ZSTD))) {
        *size = m->payload_size;
        return m->payload;
    }
    size_t packed = m->compressed_size ? m->compressed_size : m->payload_size;
    if (packed > m->payload_size || m->plain_size == 0) return NULL;
    unsigned char *out = malloc(m->plain_size + 1);
    if (!out) return NULL;
    bool ok = false;
    if (m->flags & GT_FATBIN_FLAG_ZSTD) {
        zstd_decompress_fn dec =
            (zstd_decompress_fn)library_symbol("libzstd.so.1", "ZSTD_decompress");
        zstd_is_error_fn is_error =
            (zstd_is_error_fn)library_symbol("libzstd.so.1", "ZSTD_isError");
        if (dec && is_error) {
            size_t n = dec(out, m->plain_size, m->payload, packed);
            ok = !is_error(n) && n == m->plain_size;
        }
    } else {
        lz4_decompress_fn dec =
            (lz4_decompress_fn)library_symbol("liblz4.so.1", "LZ4_decompress_safe");
        if (dec)
            ok = dec((const char *)m->payload, (char *)out, (int)packed, (int)m->plain_size) ==
                 (int)m->plain_size;
    }
    if (!ok) {
        free(out);
        return NULL;
    }
    out[m->plain_size] = '\0';
    *owned = out;
    *size = m->plain_size;
    return out;
}

/* Preference: SASS for sm_90, other SASS of major 9, PTX to JIT, anything. */
static int score(const struct member *m)
{
    if (m->kind == GT_FATBIN_KIND_ELF)
        return m->arch == GT_TARGET_SM ? 4 : m->arch / 10 == GT_TARGET_SM / 10 ? 3 : 1;
    if (m->kind == GT_FATBIN_KIND_PTX) return m->arch <= GT_TARGET_SM ? 2 : 0;
    return -1;
}

static CUresult parse_member(const struct member *m, struct gt_image_info *out)
{
    size_t size;
    unsigned char *owned;
    const unsigned char *bytes = member_bytes(m, &size, &owned);
    if (!bytes) return CUDA_ERROR_INVALID_IMAGE;
    CUresult r;
    if (m->kind == GT_FATBIN_KIND_ELF) {
        size_t elf = gt_elf_is_cuda(bytes, size) ? gt_elf_size(bytes, size) : 0;
        r = elf ? gt_elf_parse(bytes, elf, out) : CUDA_ERROR_INVALID_IMAGE;
    } else {
        r = gt_ptx_parse((const char *)bytes, strnlen((const char *)bytes, size), out);
    }
    free(owned);
    return r;
}

CUresult gt_fatbin_parse(const unsigned char *p, size_t size, struct gt_image_info *out)
{
    size_t header = (size_t)rd(p + 6, 2);
    if (header < 16 || header > size) return CUDA_ERROR_INVALID_IMAGE;
    struct member members[64];
    size_t n = 0;
    for (size_t off = header; off < size && n < 64;) {
        size_t len;
        if (!read_member(p + off, size - off, &members[n], &len)) break;
        n++;
        off += len;
    }
    /* Try the best member first; fall back to the next when one cannot be
     * read (a compressed member without its decompressor). */
    bool tried[64] = {false};
    for (;;) {
        int best = -1;
        for (size_t i = 0; i < n; i++)
            if (!tried[i] && score(&members[i]) > 0 &&
                (best < 0 || score(&members[i]) > score(&members[best])))
                best = (int)i;
        if (best < 0) return n ? CUDA_ERROR_NO_BINARY_FOR_GPU : CUDA_ERROR_INVALID_IMAGE;
        tried[best] = true;
        struct gt_image_info info = {0};
        CUresult r = parse_member(&members[best], &info);
        if (r == CUDA_SUCCESS) {
            bool ok = gt_image_merge(out, &info);
            gt_image_info_free(&info);
            return ok ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
        }
        gt_image_info_free(&info);
        if (r == CUDA_ERROR_OUT_OF_MEMORY) return r;
    }
}

CUresult gt_scan_embedded(const unsigned char *p, size_t size, struct gt_image_info *out)
{
    bool found = false;
    for (size_t off = 0; off + 16 <= size; off += 8) {
        if (rd(p + off, 4) != 0xBA55ED50u) continue;
        size_t fat = gt_fatbin_size(p + off);
        if (fat > size - off) continue;
        struct gt_image_info info = {0};
        if (gt_fatbin_parse(p + off, fat, &info) == CUDA_SUCCESS) {
            found = true;
            bool ok = gt_image_merge(out, &info);
            gt_image_info_free(&info);
            if (!ok) return CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            gt_image_info_free(&info);
        }
        off += (fat & ~(size_t)7) - 8; /* the loop adds the last 8 */
    }
    return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
}
