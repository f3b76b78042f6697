/* File and line of an address from an object's DWARF line table
 * (dwarf_line.c): versions 2 to 5, as GCC, Clang and nvcc's host compiler
 * write them with -g. */
#ifndef GT_DWARF_LINE_H
#define GT_DWARF_LINE_H

#include <stddef.h>
#include <stdint.h>

#include "elf_file.h"

/* The line table of at most this many bytes is read (a larger one gives
 * function names only). */
#define GT_DWARF_LINE_MAX_BYTES (256u << 20)

/* The file (into file, cut to cap) and line of file address `addr`;
 * 0, or -1 when the object's line table does not cover it. */
int gt_dwarf_line(gt_elf *e, uint64_t addr, char *file, size_t cap, int *line);

/* File f (as a row or DW_AT_call_file gives it) of the line table at
 * offset `table` in .debug_line, into file (cut to cap): 0, or -1 when the
 * table has no such file. Files count from 1 before DWARF 5, from 0 since. */
int gt_dwarf_line_file(const gt_elf *e, uint64_t table, uint64_t f, char *file, size_t cap);

#endif
