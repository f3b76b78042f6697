/* Builds the image cuLinkComplete returns: a CUDA ELF declaring the
 * linked entries (STT_FUNC, CUDA entry flag, section .text.<name>) and
 * globals (STT_OBJECT in .nv.global.init with their initial values), which
 * gt_elf_parse reads back like an nvcc cubin. */
#include "emu_module.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#define GT_EM_CUDA 190
#define GT_ELFOSABI_CUDA 0x41
#define GT_STO_CUDA_ENTRY 0x10
#define GT_STO_CUDA_MANAGED 0x04
#define FIXED_SECTIONS 5 /* null, .shstrtab, .strtab, .symtab, .nv.global.init */

struct buf {
    unsigned char *data;
    size_t len, cap;
    bool failed;
};

static size_t put(struct buf *b, const void *p, size_t n)
{
    size_t at = b->len;
    if (b->failed) return at;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return at;
        }
        b->data = grown;
        b->cap = cap;
    }
    if (p)
        memcpy(b->data + b->len, p, n);
    else
        memset(b->data + b->len, 0, n);
    b->len += n;
    return at;
}

static size_t put_str(struct buf *b, const char *prefix, const char *s)
{
    size_t at = put(b, prefix, strlen(prefix));
    put(b, s, strlen(s) + 1);
    return at;
}

static void align(struct buf *b, size_t a)
{
    while (b->len % a)
        put(b, NULL, 1);
}

void *gt_elf_build(const struct gt_image_info *info, size_t *size_out)
{
    size_t n_sections = FIXED_SECTIONS + info->n_entries;
    Elf64_Shdr *sh = calloc(n_sections, sizeof *sh);
    struct buf shstr = {0}, str = {0}, syms = {0}, data = {0}, out = {0};
    if (!sh) return NULL;
    put(&shstr, "", 1);
    put(&str, "", 1);
    put(&syms, NULL, sizeof(Elf64_Sym));
    sh[1].sh_name = (Elf64_Word)put_str(&shstr, "", ".shstrtab");
    sh[2].sh_name = (Elf64_Word)put_str(&shstr, "", ".strtab");
    sh[3].sh_name = (Elf64_Word)put_str(&shstr, "", ".symtab");
    sh[4].sh_name = (Elf64_Word)put_str(&shstr, "", ".nv.global.init");
    for (size_t i = 0; i < info->n_entries; i++) {
        size_t idx = FIXED_SECTIONS + i;
        sh[idx].sh_name = (Elf64_Word)put_str(&shstr, ".text.", info->entries[i]);
        sh[idx].sh_type = SHT_PROGBITS;
        sh[idx].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
        sh[idx].sh_addralign = 128;
        Elf64_Sym sym = {.st_name = (Elf64_Word)put_str(&str, "", info->entries[i]),
                         .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
                         .st_other = GT_STO_CUDA_ENTRY,
                         .st_shndx = (Elf64_Section)idx};
        put(&syms, &sym, sizeof sym);
    }
    for (size_t i = 0; i < info->n_globals; i++) {
        const struct gt_image_global *g = &info->globals[i];
        align(&data, 8);
        Elf64_Sym sym = {.st_name = (Elf64_Word)put_str(&str, "", g->name),
                         .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT),
                         .st_other = g->managed ? GT_STO_CUDA_MANAGED : 0,
                         .st_shndx = 4,
                         .st_value = data.len,
                         .st_size = g->size};
        size_t at = put(&data, NULL, g->size);
        if (g->init && !data.failed)
            memcpy(data.data + at, g->init, g->init_len < g->size ? g->init_len : g->size);
        put(&syms, &sym, sizeof sym);
    }

    Elf64_Ehdr eh = {.e_type = ET_EXEC,
                     .e_machine = GT_EM_CUDA,
                     .e_version = EV_CURRENT,
                     .e_ehsize = sizeof(Elf64_Ehdr),
                     .e_shentsize = sizeof(Elf64_Shdr),
                     .e_shnum = (Elf64_Half)n_sections,
                     .e_shstrndx = 1};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_ident[EI_OSABI] = GT_ELFOSABI_CUDA;
    put(&out, &eh, sizeof eh);
    struct {
        size_t index;
        struct buf *b;
        Elf64_Word type;
    } parts[] = {{1, &shstr, SHT_STRTAB},
                 {2, &str, SHT_STRTAB},
                 {3, &syms, SHT_SYMTAB},
                 {4, &data, SHT_PROGBITS}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        align(&out, 8);
        Elf64_Shdr *s = &sh[parts[i].index];
        s->sh_type = parts[i].type;
        s->sh_offset = put(&out, parts[i].b->data, parts[i].b->len);
        s->sh_size = parts[i].b->len;
        s->sh_addralign = 8;
    }
    sh[3].sh_link = 2;
    sh[3].sh_info = 1;
    sh[3].sh_entsize = sizeof(Elf64_Sym);
    sh[4].sh_flags = SHF_ALLOC | SHF_WRITE;
    for (size_t i = FIXED_SECTIONS; i < n_sections; i++)
        sh[i].sh_offset = out.len;
    align(&out, 8);
    size_t shoff = put(&out, sh, n_sections * sizeof *sh);
    if (!out.failed) memcpy(out.data + offsetof(Elf64_Ehdr, e_shoff), &shoff, sizeof shoff);
    bool failed = shstr.failed || str.failed || syms.failed || data.failed || out.failed;
    free(sh);
    free(shstr.data);
    free(str.data);
    free(syms.data);
    free(data.data);
    if (failed) {
        free(out.data);
        return NULL;
    }
    *size_out = out.len;
    return out.data;
}
