/* Module image kinds (image.h). Layouts, as nvcc writes them:
 *
 *   fat binary  u32 magic, u16 version, u16 header size, u64 size of the
 *               entries; then entries, each a header (u16 kind: 1 PTX,
 *               2 ELF; u32 header size at 4; u64 payload size at 8; u32
 *               target architecture at 28) and its payload
 *   wrapper     i32 magic, i32 version, const u64 *data (the fat binary)
 *   ELF         the size is where its section or program header table
 *               ends, whichever is last (nvcc puts the program headers
 *               last in a cubin)
 *   PTX         text whose first directive, after comments, is .version */
#include "event.h"
#include "image.h"

#include <stdint.h>
#include <string.h>

#define FATBIN_HEADER_MIN 16u
#define ENTRY_HEADER_MIN 32u
#define ENTRY_PTX 1u
#define ENTRY_ELF 2u
#define MAX_ENTRIES 4096u
#define PTX_PREAMBLE_MAX 65536u /* comments and blank lines before .version */

static uint64_t read_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static int elf_runs_on(unsigned arch, unsigned device_sm)
{
    return arch / 10 == device_sm / 10 && arch <= device_sm;
}

static enum gt_image_kind classify_fatbin(const unsigned char *p, size_t avail, unsigned device_sm,
                                          uint64_t *bytes)
{
    if (avail < FATBIN_HEADER_MIN) return GT_IMAGE_UNKNOWN;
    uint64_t header = read_le(p + 6, 2), entries = read_le(p + 8, 8);
    uint64_t end = header + entries;
    if (header < FATBIN_HEADER_MIN || end < header) return GT_IMAGE_UNKNOWN;
    if (end > avail) end = avail;
    *bytes = end;
    int ptx = 0, sass = 0, sass_for_device = 0;
    uint64_t off = header;
    for (unsigned n = 0; n < MAX_ENTRIES && off + ENTRY_HEADER_MIN <= end; n++) {
        const unsigned char *e = p + off;
        uint64_t kind = read_le(e, 2), size = read_le(e + 4, 4) + read_le(e + 8, 8);
        unsigned arch = (unsigned)read_le(e + 28, 4);
        if (kind == ENTRY_PTX) ptx = 1;
        if (kind == ENTRY_ELF) {
            sass = 1;
            sass_for_device |= device_sm && elf_runs_on(arch, device_sm);
        }
        if (size < ENTRY_HEADER_MIN || off + size < off) break;
        off += size;
    }
    int runnable_sass = device_sm ? sass_for_device : sass;
    return ptx && !runnable_sass ? GT_IMAGE_PTX : GT_IMAGE_FATBIN;
}

static enum gt_image_kind classify_elf(const unsigned char *p, size_t avail, uint64_t *bytes)
{
    int wide = p[4] == 2; /* ELFCLASS64 */
    size_t need = wide ? 64 : 52;
    if (avail < need) return GT_IMAGE_CUBIN;
    uint64_t phoff = wide ? read_le(p + 0x20, 8) : read_le(p + 0x1c, 4);
    uint64_t shoff = wide ? read_le(p + 0x28, 8) : read_le(p + 0x20, 4);
    const unsigned char *sizes = p + (wide ? 0x36 : 0x2a); /* phentsize phnum shentsize shnum */
    uint64_t ph_end = phoff + read_le(sizes, 2) * read_le(sizes + 2, 2);
    uint64_t sh_end = shoff + read_le(sizes + 4, 2) * read_le(sizes + 6, 2);
    uint64_t size = ph_end > sh_end ? ph_end : sh_end;
    *bytes = size < avail ? size : avail;
    return GT_IMAGE_CUBIN;
}

/* Skips blanks and comments; true when `.version` comes next. */
static int looks_like_ptx(const char *s, size_t avail)
{
    size_t i = 0, limit = avail < PTX_PREAMBLE_MAX ? avail : PTX_PREAMBLE_MAX;
    while (i < limit) {
        char c = s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            i++;
        } else if (c == '/' && i + 1 < limit && s[i + 1] == '/') {
            while (i < limit && s[i] && s[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < limit && s[i + 1] == '*') {
            for (i += 2; i + 1 < limit && s[i] && !(s[i] == '*' && s[i + 1] == '/'); i++)
                ;
            if (i + 1 >= limit || !s[i]) return 0;
            i += 2;
        } else {
            return avail - i >= 8 && !strncmp(s + i, ".version", 8);
        }
    }
    return 0;
}

enum gt_image_kind gt_image_classify(const void *image, size_t avail, unsigned device_sm,
                                     uint64_t *bytes)
{
    const unsigned char *p = image;
    *bytes = 0;
    if (!p || avail < 4) return GT_IMAGE_UNKNOWN;
    uint32_t magic = (uint32_t)read_le(p, 4);
    if (magic == GT_FATBIN_MAGIC) return classify_fatbin(p, avail, device_sm, bytes);
    if (magic == GT_FATBIN_WRAPPER_MAGIC && avail >= 16) {
        const void *data;
        memcpy(&data, p + 8, sizeof data);
        return data ? gt_image_classify(data, SIZE_MAX, device_sm, bytes) : GT_IMAGE_UNKNOWN;
    }
    if (!memcmp(p, "\177ELF", 4)) return classify_elf(p, avail, bytes);
    if (looks_like_ptx(image, avail)) {
        *bytes = strnlen(image, avail);
        return GT_IMAGE_PTX;
    }
    return GT_IMAGE_UNKNOWN;
}
