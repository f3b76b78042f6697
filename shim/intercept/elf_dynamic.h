/* A loaded object's dynamic section, read from its memory (elf_dynamic.c):
 * where its symbol, string, hash and relocation tables are. For lookups
 * that must not enter the loader (elf_symbol.c) and for the call-site
 * layer's routing of the GIL's releases (python_gil.c). */
#ifndef GT_ELF_DYNAMIC_H
#define GT_ELF_DYNAMIC_H

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gt_elf_dynamic {
    const ElfW(Sym) * syms;
    const char *strs;
    size_t strs_size;
    const ElfW(Half) * versyms; /* NULL: the object has no symbol versions */
    const ElfW(Verdef) * verdefs;
    const uint32_t *gnu_hash, *sysv_hash;
    /* The relocations that take a symbol: the PLT's (NULL unless they are
     * RELA) and the others, with their sizes in bytes. */
    const ElfW(Rela) * plt_relocs, *relocs;
    size_t plt_relocs_bytes, relocs_bytes;
} gt_elf_dynamic;

/* The tables of the object loaded at `base` whose dynamic section is `ld`
 * (a link map's l_ld, or its PT_DYNAMIC). Pointers the loader left as
 * offsets (where the dynamic section is read-only: RISC-V, MIPS) are
 * turned into addresses. */
void gt_elf_dynamic_read(const ElfW(Dyn) * ld, uintptr_t base, gt_elf_dynamic *out);

#endif
