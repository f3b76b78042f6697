/* The tail call a stack does not show, from the call sites of an
 * object's DWARF debug information (dwarf_tailcall.c): DWARF 5's, and
 * DWARF 4's GNU extension, as GCC and Clang write them at -O2 -g. */
#ifndef GT_DWARF_TAILCALL_H
#define GT_DWARF_TAILCALL_H

#include <stdint.h>

#include "dwarf_inline.h"
#include "elf_file.h"

/* Whether a tail call's callee (its names, "" when not known) is the one
 * the stack went on into: non-zero when it is. */
typedef int (*gt_dwarf_callee_fn)(const gt_inlined *callee, void *ctx);

/* The call whose return address is file address `ret` called function G;
 * when G does not hold file address `inner` (the code that call led to, as
 * the stack has it; UINT64_MAX when that is in another object or the
 * first frame), G's frame was replaced by a tail call. If G has exactly
 * one tail call whose callee `leads` accepts, the file address of that
 * call's instruction (or one within it) goes into *at: 1. Else 0: no call
 * site at ret, G is itself what `leads` accepts or holds inner, or no or
 * several tail calls are candidates. One level only: a tail call into a
 * function that itself tail-calls on is not followed. */
int gt_dwarf_tail_call(gt_elf *e, uint64_t ret, uint64_t inner, gt_dwarf_callee_fn leads, void *ctx,
                       uint64_t *at);

#endif
