/* The inlined calls at an address, from an object's DWARF debug
 * information (dwarf_inline.c): versions 2 to 5, 32- and 64-bit, as GCC,
 * Clang and nvcc's host compiler write them with -g. */
#ifndef GT_DWARF_INLINE_H
#define GT_DWARF_INLINE_H

#include <stddef.h>
#include <stdint.h>

#include "dwarf_info.h"
#include "elf_file.h"

/* The debug information of at most this many bytes is read (a larger one
 * gives the line table's lines only). */
#define GT_DWARF_INFO_MAX_BYTES (1u << 30)

/* Inlined calls at one address that are reported, innermost first. */
#define GT_DWARF_INLINE_MAX_DEPTH 16u

/* One inlined call that holds an address. */
typedef struct gt_inlined {
    const char *name;    /* the inlined function's name, "" when not known */
    const char *linkage; /* its mangled name, "" when none */
    uint64_t call_file;  /* where it was inlined: a file of `lines`' table */
    uint64_t lines;      /* its unit's line table (an offset in .debug_line) */
    int call_line;       /* 0 when not known */
} gt_inlined;

/* The inlined calls that hold file address `addr`, innermost first, into
 * out (at most max): how many; 0 when addr is in no inlined call, or the
 * debug information does not say. The first call in an object reads the
 * units' headers; the first in a unit, where its functions lie. */
unsigned gt_dwarf_inlined(gt_elf *e, uint64_t addr, gt_inlined *out, unsigned max);

/* The unit and the DW_TAG_subprogram entry (its offset into *die) of
 * the function holding file address addr; NULL when the debug information
 * does not say. */
const gt_dwarf_unit *gt_dwarf_function_at(gt_elf *e, uint64_t addr, size_t *die);

/* The function that reference `ref` names, as its entry with addresses
 * (*die): the entry itself, or, for a declaration or an abstract
 * function, the definition of its unit that refers to it; NULL when
 * neither. */
const gt_dwarf_unit *gt_dwarf_definition(gt_elf *e, gt_dwarf_value ref, size_t *die);

/* The names of the function reference `ref` names ("" when not known),
 * into out's name and linkage. */
void gt_dwarf_names(gt_elf *e, gt_dwarf_value ref, gt_inlined *out);

/* Frees what the lookups in e keep (e stays open: a later lookup starts
 * again). */
void gt_dwarf_inline_free(gt_elf *e);

#endif
