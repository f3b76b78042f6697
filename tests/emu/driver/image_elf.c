/* CUDA ELF (cubin): kernels are STT_FUNC symbols marked as CUDA entry
 * points (st_other bit 0x10) in sections named .text.<name>; globals are
 * STT_OBJECT symbols in .nv.global* / .nv.constant* sections. The linker's
 * output is built here too. */
#include "emu_module.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#define GT_EM_CUDA 190
#define GT_ELFOSABI_CUDA 0x41
#define GT_STO_CUDA_ENTRY 0x10
/* st_other of __managed__ variables, as nvcc 13 writes them. */
#define GT_STO_CUDA_MANAGED 0x04

bool gt_elf_is_cuda(const void *p, size_t size)
{
    const Elf64_Ehdr *h = p;
    if (size < sizeof *h || memcmp(h->e_ident, ELFMAG, SELFMAG) != 0) return false;
    return h->e_ident[EI_CLASS] == ELFCLASS64 && h->e_machine == GT_EM_CUDA;
}

size_t gt_elf_size(const unsigned char *p, size_t limit)
{
    Elf64_Ehdr h;
    memcpy(&h, p, sizeof h);
    if (h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shnum == 0) return 0;
    size_t end = h.e_shoff + (size_t)h.e_shnum * sizeof(Elf64_Shdr);
    if (limit && end > limit) return 0;
    for (size_t i = 0; i < h.e_shnum; i++) {
        Elf64_Shdr s;
        memcpy(&s, p + h.e_shoff + i * sizeof s, sizeof s);
        if (s.sh_type != SHT_NOBITS && s.sh_offset + s.sh_size > end) end = s.sh_offset + s.sh_size;
    }
    if (h.e_phnum)
        end = end > h.e_phoff + (size_t)h.e_phnum * h.e_phentsize
                  ? end
                  : h.e_phoff + (size_t)h.e_phnum * h.e_phentsize;
    return limit && end > limit ? 0 : end;
}

struct elf_view {
    const unsigned char *p;
    size_t size;
    Elf64_Ehdr h;
};

static bool section(const struct elf_view *v, size_t i, Elf64_Shdr *s)
{
    if (i >= v->h.e_shnum) return false;
    memcpy(s, v->p + v->h.e_shoff + i * sizeof *s, sizeof *s);
    return s->sh_type == SHT_NOBITS || s->sh_offset + s->sh_size <= v->size;
}

static const char *string_at(const struct elf_view *v, const Elf64_Shdr *strtab, size_t off)
{
    if (off >= strtab->sh_size) return NULL;
    const char *s = (const char *)v->p + strtab->sh_offset + off;
    return memchr(s, '\0', strtab->sh_size - off) ? s : NULL;
}

static const char *section_name(const struct elf_view *v, size_t i)
{
    Elf64_Shdr names, s;
    if (!section(v, v->h.e_shstrndx, &names) || !section(v, i, &s)) return NULL;
    return string_at(v, &names, s.sh_name);
}

static bool is_global_section(const char *name)
{
    return name && (!strncmp(name, ".nv.global", 10) || !strncmp(name, ".nv.constant", 12));
}

static bool collect(const struct elf_view *v, size_t symtab_index, bool need_entry_flag,
                    struct gt_image_info *out, bool *any_entry_flag)
{
    Elf64_Shdr symtab, strtab;
    if (!section(v, symtab_index, &symtab) || !section(v, symtab.sh_link, &strtab)) return true;
    size_t n = symtab.sh_size / sizeof(Elf64_Sym);
    for (size_t i = 0; i < n; i++) {
        Elf64_Sym sym;
        memcpy(&sym, v->p + symtab.sh_offset + i * sizeof sym, sizeof sym);
        const char *name = string_at(v, &strtab, sym.st_name);
        if (!name || !*name || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE) continue;
        const char *sec = section_name(v, sym.st_shndx);
        int type = ELF64_ST_TYPE(sym.st_info);
        if (type == STT_FUNC && ELF64_ST_BIND(sym.st_info) != STB_LOCAL) {
            bool flagged = (sym.st_other & GT_STO_CUDA_ENTRY) != 0;
            *any_entry_flag = *any_entry_flag || flagged;
            bool own_section = sec && !strncmp(sec, ".text.", 6) && !strcmp(sec + 6, name);
            if ((need_entry_flag ? flagged : own_section) &&
                !gt_image_add_entry(out, name, strlen(name)))
                return false;
        } else if (type == STT_OBJECT && is_global_section(sec)) {
            Elf64_Shdr data;
            const void *init = NULL;
            if (section(v, sym.st_shndx, &data) && data.sh_type == SHT_PROGBITS &&
                sym.st_value + sym.st_size <= data.sh_size)
                init = v->p + data.sh_offset + sym.st_value;
            if (!gt_image_add_global(out, name, strlen(name), sym.st_size, init,
                                     init ? sym.st_size : 0,
                                     (sym.st_other & GT_STO_CUDA_MANAGED) != 0))
                return false;
        }
    }
    return true;
}

CUresult gt_elf_parse(const unsigned char *p, size_t size, struct gt_image_info *out)
{
    struct elf_view v = {.p = p, .size = size};
    memcpy(&v.h, p, sizeof v.h);
    for (size_t i = 0; i < v.h.e_shnum; i++) {
        Elf64_Shdr s;
        if (!section(&v, i, &s) || s.sh_type != SHT_SYMTAB) continue;
        bool flagged = false;
        struct gt_image_info found = {0};
        if (!collect(&v, i, true, &found, &flagged)) return CUDA_ERROR_OUT_OF_MEMORY;
        /* Images whose kernels carry no entry flag: a function with a
         * section of its own is a kernel. */
        if (!flagged) {
            gt_image_info_free(&found);
            if (!collect(&v, i, false, &found, &flagged)) return CUDA_ERROR_OUT_OF_MEMORY;
        }
        bool ok = gt_image_merge(out, &found);
        gt_image_info_free(&found);
        if (!ok) return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}
