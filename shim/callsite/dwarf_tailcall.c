/* Tail calls from the DWARF debug information's call sites (DWARF 5
 * §3.4.1.3), as a debugger finds the frames a stack does not show.
 *
 * A function whose last statement is a call may jump to its callee
 * (`jmp`, a tail call) instead of calling it: the callee then returns to
 * the function's caller, and the function has no frame on the stack. At
 * -O2 -g, GCC and Clang describe each call of a function in its entry
 * (DW_TAG_call_site, or DW_TAG_GNU_call_site in GCC's DWARF 4): its
 * return address (DW_AT_call_return_pc; a GNU call site's DW_AT_low_pc),
 * the function called (DW_AT_call_origin; DW_AT_abstract_origin), and,
 * for a tail call, a flag (DW_AT_call_tail_call; DW_AT_GNU_tail_call) and,
 * from Clang, the call's own address (DW_AT_call_pc). So from a return
 * address R in F: F's call site at R names G; when the frame inside is
 * not in G, G jumped on, and when exactly one of G's tail calls goes
 * where the stack went, that call is the missing frame.
 *
 * Read when a site is named, off the hot path: the entries of F and of G
 * only, through the bounded reader (dwarf_info.c), forward only. */
#include "dwarf_tailcall.h"

#include "dwarf_info.h"
#include "dwarf_inline.h"
#include "elf_file.h"

#include <string.h>

static int is_call_site(uint64_t tag)
{
    return tag == GT_DW_TAG_CALL_SITE || tag == GT_DW_TAG_GNU_CALL_SITE;
}

/* The function a call site calls: 0, or -1 when it does not say (a call
 * through a pointer gives DW_AT_call_target instead). */
static int callee_of(const gt_dwarf_entry *d, gt_dwarf_value *out)
{
    enum gt_dwarf_slot slot =
        gt_dwarf_has(d, GT_DW_CALL_ORIGIN) ? GT_DW_CALL_ORIGIN : GT_DW_ABSTRACT_ORIGIN;
    if (!gt_dwarf_has(d, slot) || !gt_dwarf_is_ref(&d->v[slot])) return -1;
    *out = d->v[slot];
    return 0;
}

/* A call site's return address: 0, or -1. */
static int return_pc(const gt_elf *e, const gt_dwarf_unit *u, const gt_dwarf_entry *d,
                     uint64_t *out)
{
    enum gt_dwarf_slot slot =
        gt_dwarf_has(d, GT_DW_CALL_RETURN_PC) ? GT_DW_CALL_RETURN_PC : GT_DW_LOW_PC;
    return gt_dwarf_has(d, slot) ? gt_dwarf_address(e, u, &d->v[slot], out) : -1;
}

/* The function called by the call returning to ret: 0 (into *callee), or
 * -1 when the debug information has no such call. */
static int call_at(gt_elf *e, uint64_t ret, gt_dwarf_value *callee)
{
    size_t die;
    const gt_dwarf_unit *u = ret ? gt_dwarf_function_at(e, ret - 1, &die) : NULL;
    gt_dwarf_walk w;
    gt_dwarf_entry d;
    if (!u || gt_dwarf_walk_start(e, u, die, &w, &d) != 0) return -1;
    for (size_t at; gt_dwarf_walk_next(e, u, &w, &d, &at);) {
        int site = is_call_site(d.ab->tag);
        uint64_t pc;
        if (site && !gt_dwarf_has(&d, GT_DW_CALL_TAIL) && return_pc(e, u, &d, &pc) == 0 &&
            pc == ret)
            return callee_of(&d, callee);
        /* A call site's children are its parameters. */
        gt_dwarf_walk_into(e, u, &w, &d, !site);
    }
    return -1;
}

/* The function defined in this object whose ELF symbol is named `name`
 * (a declaration's names lead to a definition in another unit). */
static const gt_dwarf_unit *defined_as(gt_elf *e, const char *name, size_t *die)
{
    if (!name[0]) return NULL;
    for (size_t i = 0; i < e->nsyms; i++)
        if (strcmp(e->syms[i].name, name) == 0)
            return gt_dwarf_function_at(e, e->syms[i].addr, die);
    return NULL;
}

/* The function that reference `ref` (whose names are `names`) names, by
 * its entry with addresses. */
static const gt_dwarf_unit *function_of(gt_elf *e, gt_dwarf_value ref, const gt_inlined *names,
                                        size_t *die)
{
    const gt_dwarf_unit *u = gt_dwarf_definition(e, ref, die);
    if (u) return u;
    u = defined_as(e, names->linkage, die);
    return u ? u : defined_as(e, names->name, die);
}

static int holds_addr(uint64_t lo, uint64_t hi, void *ctx)
{
    uint64_t addr = *(const uint64_t *)ctx;
    return lo <= addr && addr < hi;
}

int gt_dwarf_tail_call(gt_elf *e, uint64_t ret, uint64_t inner, gt_dwarf_callee_fn leads, void *ctx,
                       uint64_t *at)
{
    gt_dwarf_value ref;
    size_t die;
    if (call_at(e, ret, &ref) != 0) return 0;
    /* A call straight to where the stack went (the glue itself). */
    gt_inlined names;
    gt_dwarf_names(e, ref, &names);
    if (leads(&names, ctx)) return 0;
    const gt_dwarf_unit *u = function_of(e, ref, &names, &die);
    gt_dwarf_walk w;
    gt_dwarf_entry d;
    if (!u || gt_dwarf_walk_start(e, u, die, &w, &d) != 0) return 0;
    /* The stack went into G itself: G made an ordinary call. */
    if (inner != UINT64_MAX && gt_dwarf_ranges(e, u, &d, holds_addr, &inner) == 1) return 0;
    unsigned found = 0;
    for (size_t where; gt_dwarf_walk_next(e, u, &w, &d, &where);) {
        int site = is_call_site(d.ab->tag);
        gt_dwarf_walk_into(e, u, &w, &d, !site);
        gt_dwarf_value callee;
        uint64_t pc;
        if (!site || !gt_dwarf_has(&d, GT_DW_CALL_TAIL) || callee_of(&d, &callee) != 0) continue;
        /* The jump's own address, or its return address's byte before. */
        if (gt_dwarf_has(&d, GT_DW_CALL_PC)) {
            if (gt_dwarf_address(e, u, &d.v[GT_DW_CALL_PC], &pc) != 0) continue;
        } else if (return_pc(e, u, &d, &pc) != 0 || !pc--) {
            continue;
        }
        gt_dwarf_names(e, callee, &names);
        if (!leads(&names, ctx)) continue;
        if (++found > 1) return 0;
        *at = pc;
    }
    return found == 1;
}
