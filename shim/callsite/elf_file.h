/* A loaded object's file, read for names off the hot path (elf_file.c):
 * its function symbols, its line table (dwarf_line.c) and the inlined
 * calls of its debug information (dwarf_inline.c), mapped
 * read-only once, when a call site first needs them, and kept for the
 * rest of the run. */
#ifndef GT_ELF_FILE_H
#define GT_ELF_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "modules.h"

typedef struct gt_elf_sym {
    uint64_t addr, size; /* file virtual addresses */
    const char *name;    /* in the mapping */
} gt_elf_sym;

typedef struct gt_line_cu gt_line_cu;
typedef struct gt_inline_index gt_inline_index;

typedef struct gt_elf {
    int state; /* 0 not opened, 1 usable, -1 not usable */
    const uint8_t *map;
    size_t size;
    gt_elf_sym *syms; /* functions, by address */
    size_t nsyms;
    /* Sections of the line table: .debug_line, .debug_line_str, .debug_str. */
    const uint8_t *line, *line_str, *str;
    size_t line_len, line_str_len, str_len;
    gt_line_cu *cus; /* dwarf_line.c: each unit's address range, built on first use */
    size_t ncus;
    int cus_built;
    /* Sections of the debug information: .debug_info, .debug_abbrev,
     * .debug_ranges (before DWARF 5), .debug_rnglists, .debug_addr,
     * .debug_str_offsets. */
    const uint8_t *info, *abbrev, *ranges, *rnglists, *addr, *str_offsets;
    size_t info_len, abbrev_len, ranges_len, rnglists_len, addr_len, str_offsets_len;
    gt_inline_index *inlines; /* dwarf_inline.c: units and functions, built on first use */
    int inlines_built;
} gt_elf;

/* Opens m's file: 0, or -1 when it cannot be read, is not a 64-bit ELF
 * object, or is not the object loaded (its build id differs: rebuilt
 * since). Either way e->state says so and it is not tried again. */
int gt_elf_open(gt_elf *e, const gt_module *m);

/* The function holding file address `addr`, NULL when none is known. */
const gt_elf_sym *gt_elf_function(const gt_elf *e, uint64_t addr);

/* The largest section or file this reader maps (bytes). */
#define GT_ELF_MAX_BYTES (4ull << 30)

#endif
