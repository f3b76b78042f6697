/* A loaded object's dynamic section, read from its memory (elf_dynamic.h).
 * No C library string function is called: elf_symbol.c may run before a
 * preloaded sanitizer's interceptors work. */
#include "elf_dynamic.h"

/* Relocated in place by the loader on most architectures, left as offsets
 * on those whose dynamic section is read-only. An offset is below the
 * load address. */
static const void *dyn_ptr(uintptr_t base, ElfW(Addr) p)
{
    return (const void *)(p < base ? p + base : p);
}

void gt_elf_dynamic_read(const ElfW(Dyn) * ld, uintptr_t base, gt_elf_dynamic *out)
{
    *out = (gt_elf_dynamic){0};
    int plt_rela = 1;
    for (const ElfW(Dyn) *d = ld; d && d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB:
            out->syms = dyn_ptr(base, d->d_un.d_ptr);
            break;
        case DT_STRTAB:
            out->strs = dyn_ptr(base, d->d_un.d_ptr);
            break;
        case DT_STRSZ:
            out->strs_size = d->d_un.d_val;
            break;
        case DT_VERSYM:
            out->versyms = dyn_ptr(base, d->d_un.d_ptr);
            break;
        case DT_VERDEF:
            out->verdefs = dyn_ptr(base, d->d_un.d_ptr);
            break;
        case DT_GNU_HASH:
            out->gnu_hash = dyn_ptr(base, d->d_un.d_ptr);
            break;
        case DT_HASH:
            out->sysv_hash = dyn_ptr(base, d->d_un.d_ptr);
            break;
        case DT_JMPREL:
            out->plt_relocs = dyn_ptr(base, d->d_un.d_ptr);
            break;
        case DT_PLTRELSZ:
            out->plt_relocs_bytes = d->d_un.d_val;
            break;
        case DT_PLTREL:
            plt_rela = d->d_un.d_val == DT_RELA;
            break;
        case DT_RELA:
            out->relocs = dyn_ptr(base, d->d_un.d_ptr);
            break;
        case DT_RELASZ:
            out->relocs_bytes = d->d_un.d_val;
            break;
        default:
            break;
        }
    }
    if (!plt_rela) out->plt_relocs = NULL, out->plt_relocs_bytes = 0;
}
