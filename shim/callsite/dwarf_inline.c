/* Inlined calls from the DWARF debug information (DWARF 5 §3.3.8).
 *
 * The line table gives an address the line of the code there. When that
 * code was inlined, the line of its call is in the debug information: a
 * DW_TAG_inlined_subroutine entry inside its caller's DW_TAG_subprogram
 * covers the inlined code's addresses, and says where the call was
 * (DW_AT_call_file, DW_AT_call_line) and what was called
 * (DW_AT_abstract_origin, whose entry, or the declaration it refers to,
 * has the names).
 *
 * Read lazily (dwarf_info.c reads the entries): the first lookup in an
 * object reads each unit's header and own entry (the addresses the unit
 * covers); the first lookup in a unit reads its abbreviations and where
 * its functions lie (one pass over its entries, passing over each
 * function's own); a lookup then reads the entries of one function, and
 * only those of the scopes that hold its address. Reading moves forward
 * only, and an entry that cannot be read ends the lookup with what was
 * found. What is kept, per object, stays until the end of the run. The
 * same index gives dwarf_tailcall.c the function holding an address and
 * the definition a call names. */
#include "dwarf_inline.h"

#include "dwarf_info.h"
#include "dwarf_reader.h"
#include "elf_file.h"

#include <stdlib.h>
#include <string.h>

/* At most this many units are kept per object (about 120 bytes each),
 * this many address ranges of units and functions (24 bytes each), and
 * this many abbreviations of the units looked into (32 bytes each). */
#define UNITS_MAX (1u << 18)
#define RANGES_MAX (1u << 20)
#define ABBREVS_KEPT_MAX (1u << 20)
#define NESTING_MAX 64u /* inlined calls within one another */
#define ORIGIN_HOPS 8u  /* DW_AT_abstract_origin / DW_AT_specification followed */

/* Addresses [lo, hi) of a unit (`at` its index) or of a function (`at`
 * its DW_TAG_subprogram entry's offset in .debug_info). */
typedef struct span {
    uint64_t lo, hi;
    size_t at;
} span;

typedef struct unit {
    gt_dwarf_unit dw;
    int state;   /* abbreviations and functions: 0 not read, 1 read, -1 unusable */
    span *funcs; /* by address */
    size_t nfuncs;
} unit;

struct gt_inline_index {
    unit *units; /* by offset */
    size_t nunits;
    span *spans; /* the units' addresses, by address */
    size_t nspans;
    size_t ranges;  /* spans and functions' ranges held, at most RANGES_MAX */
    size_t abbrevs; /* abbreviations held, at most ABBREVS_KEPT_MAX */
};

/* Appends to a growing array of spans, within RANGES_MAX an object. */
typedef struct spans_ctx {
    gt_inline_index *ix;
    span **v;
    size_t *n, cap, at;
} spans_ctx;

static int add_span(uint64_t lo, uint64_t hi, void *ctx)
{
    spans_ctx *c = ctx;
    if (c->ix->ranges >= RANGES_MAX) return 1;
    if (*c->n == c->cap) {
        size_t grown_cap = c->cap ? c->cap * 2 : 64;
        span *grown = realloc(*c->v, grown_cap * sizeof *grown);
        if (!grown) return 1;
        *c->v = grown;
        c->cap = grown_cap;
    }
    (*c->v)[(*c->n)++] = (span){lo, hi, c->at};
    c->ix->ranges++;
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* The span holding addr among n sorted by address, NULL when none. */
static const span *span_of(const span *v, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && addr < v[lo - 1].hi ? &v[lo - 1] : NULL;
}

static int holds_addr(uint64_t lo, uint64_t hi, void *ctx)
{
    uint64_t addr = *(const uint64_t *)ctx;
    return lo <= addr && addr < hi;
}

/* 1 when the entry's addresses hold addr, 0 when not, -1 when it gives
 * none. */
static int holds(const gt_elf *e, const gt_dwarf_unit *u, const gt_dwarf_entry *d, uint64_t addr)
{
    return gt_dwarf_ranges(e, u, d, holds_addr, &addr);
}

/* The units and the addresses each covers. */
static void build_index(gt_elf *e)
{
    e->inlines_built = 1;
    if (!e->info || !e->abbrev || e->info_len > GT_DWARF_INFO_MAX_BYTES) return;
    gt_inline_index *ix = calloc(1, sizeof *ix);
    if (!ix) return;
    e->inlines = ix;
    size_t cap = 0;
    spans_ctx c = {ix, &ix->spans, &ix->nspans, 0, 0};
    for (size_t at = 0, next = 0; at < e->info_len && ix->nunits < UNITS_MAX; at = next) {
        gt_dwarf_unit u;
        gt_dwarf_abbrev ab;
        gt_dwarf_entry d;
        int ok = gt_dwarf_unit_read(e, at, &u, &ab, &d, &next);
        if (next <= at) break;
        if (ok != 0) continue;
        if (ix->nunits == cap) {
            size_t grown_cap = cap ? cap * 2 : 16;
            unit *grown = realloc(ix->units, grown_cap * sizeof *grown);
            if (!grown) break;
            ix->units = grown;
            cap = grown_cap;
        }
        c.at = ix->nunits;
        ix->units[ix->nunits++] = (unit){.dw = u};
        gt_dwarf_ranges(e, &u, &d, add_span, &c);
    }
    if (ix->nspans) qsort(ix->spans, ix->nspans, sizeof *ix->spans, by_lo);
}

/* The unit's abbreviations, read once: 0, or -1. */
static int unit_abbrevs(const gt_elf *e, gt_inline_index *ix, unit *un)
{
    if (un->dw.abbrevs) return 0;
    if (ix->abbrevs >= ABBREVS_KEPT_MAX || gt_dwarf_abbrevs_read(e, &un->dw) != 0) return -1;
    ix->abbrevs += un->dw.nabbrevs;
    return 0;
}

/* Where the unit's functions lie: one pass over its entries, passing over
 * each function's own. */
static void read_funcs(const gt_elf *e, gt_inline_index *ix, unit *un)
{
    const gt_dwarf_unit *u = &un->dw;
    un->state = -1;
    gt_dwarf_walk w;
    gt_dwarf_entry d;
    if (unit_abbrevs(e, ix, un) != 0 || gt_dwarf_walk_start(e, u, u->die, &w, &d) != 0) return;
    spans_ctx c = {ix, &un->funcs, &un->nfuncs, 0, 0};
    for (size_t at; gt_dwarf_walk_next(e, u, &w, &d, &at);) {
        int function = d.ab->tag == GT_DW_TAG_SUBPROGRAM;
        if (function) {
            c.at = at;
            gt_dwarf_ranges(e, u, &d, add_span, &c);
        }
        gt_dwarf_walk_into(e, u, &w, &d, !function);
    }
    if (un->nfuncs) qsort(un->funcs, un->nfuncs, sizeof *un->funcs, by_lo);
    un->state = 1;
}

/* An inlined call as found: what was called, and from where. */
typedef struct call {
    gt_dwarf_value origin;
    uint64_t file, line;
} call;

static int is_scope(uint64_t tag)
{
    return tag == GT_DW_TAG_INLINED_SUBROUTINE || tag == GT_DW_TAG_LEXICAL_BLOCK ||
           tag == GT_DW_TAG_TRY_BLOCK || tag == GT_DW_TAG_CATCH_BLOCK;
}

static uint64_t value_or_0(const gt_dwarf_entry *d, enum gt_dwarf_slot slot)
{
    return gt_dwarf_has(d, slot) ? d->v[slot].u : 0;
}

/* The inlined calls holding addr within the function whose entry is at
 * `die`, outermost first: how many (0 when there are more than
 * NESTING_MAX). Only the entries of scopes that hold addr are read into. */
static unsigned calls_at(const gt_elf *e, const gt_dwarf_unit *u, size_t die, uint64_t addr,
                         call *calls)
{
    gt_dwarf_walk w;
    gt_dwarf_entry d;
    if (gt_dwarf_walk_start(e, u, die, &w, &d) != 0) return 0;
    unsigned n = 0;
    for (size_t at; gt_dwarf_walk_next(e, u, &w, &d, &at);) {
        int inside = is_scope(d.ab->tag) ? holds(e, u, &d, addr) : 0;
        if (d.ab->tag == GT_DW_TAG_INLINED_SUBROUTINE && inside == 1) {
            if (n == NESTING_MAX) return 0;
            calls[n++] =
                (call){gt_dwarf_has(&d, GT_DW_ABSTRACT_ORIGIN) ? d.v[GT_DW_ABSTRACT_ORIGIN]
                                                               : (gt_dwarf_value){0, 0, NULL},
                       value_or_0(&d, GT_DW_CALL_FILE), value_or_0(&d, GT_DW_CALL_LINE)};
            w.floor = w.depth; /* past its entries, nothing else holds addr */
        }
        /* Into a scope that holds addr, or one that does not say. */
        gt_dwarf_walk_into(e, u, &w, &d, inside != 0);
    }
    return n;
}

/* The unit holding entry `at` (an offset in .debug_info), NULL when none. */
static unit *unit_of(gt_inline_index *ix, uint64_t at)
{
    size_t lo = 0, hi = ix->nunits;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->units[mid].dw.start <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return NULL;
    unit *un = &ix->units[lo - 1];
    return at >= un->dw.die && at < un->dw.end ? un : NULL;
}

/* The called function's names, from its entry and those it refers to
 * (an inlined call's abstract origin, a definition's declaration). */
static void name_call(const gt_elf *e, gt_inline_index *ix, gt_dwarf_value origin, gt_inlined *out)
{
    out->name = out->linkage = "";
    for (unsigned hop = 0; hop < ORIGIN_HOPS; hop++) {
        unit *un = gt_dwarf_is_ref(&origin) ? unit_of(ix, origin.u) : NULL;
        if (!un || unit_abbrevs(e, ix, un) != 0) return;
        const gt_dwarf_unit *u = &un->dw;
        gt_dwarf_reader r = {e->info + origin.u, e->info + u->end, 0};
        gt_dwarf_entry d;
        if (gt_dwarf_entry_read(e, u, &r, &d) != 0 || !d.ab) return;
        if (!out->name[0] && gt_dwarf_has(&d, GT_DW_NAME))
            out->name = gt_dwarf_string(e, u, &d.v[GT_DW_NAME]);
        if (gt_dwarf_has(&d, GT_DW_LINKAGE_NAME))
            out->linkage = gt_dwarf_string(e, u, &d.v[GT_DW_LINKAGE_NAME]);
        if (out->linkage[0]) return;
        if (gt_dwarf_has(&d, GT_DW_ABSTRACT_ORIGIN))
            origin = d.v[GT_DW_ABSTRACT_ORIGIN];
        else if (gt_dwarf_has(&d, GT_DW_SPECIFICATION))
            origin = d.v[GT_DW_SPECIFICATION];
        else
            return;
    }
}

/* The span of the function holding addr, and its unit (*un), whose
 * functions are read; NULL when none. */
static const span *function_span(gt_elf *e, uint64_t addr, unit **un)
{
    if (!e->inlines_built) build_index(e);
    gt_inline_index *ix = e->inlines;
    const span *s = ix ? span_of(ix->spans, ix->nspans, addr) : NULL;
    if (!s) return NULL;
    *un = &ix->units[s->at];
    if (!(*un)->state) read_funcs(e, ix, *un);
    return (*un)->state > 0 ? span_of((*un)->funcs, (*un)->nfuncs, addr) : NULL;
}

unsigned gt_dwarf_inlined(gt_elf *e, uint64_t addr, gt_inlined *out, unsigned max)
{
    unit *un = NULL;
    const span *f = function_span(e, addr, &un);
    if (!f) return 0;
    call calls[NESTING_MAX];
    unsigned n = calls_at(e, &un->dw, f->at, addr, calls), k;
    for (k = 0; k < n && k < max; k++) {
        const call *c = &calls[n - 1 - k];
        name_call(e, e->inlines, c->origin, &out[k]);
        out[k].call_file = c->file;
        out[k].call_line = c->line <= INT32_MAX ? (int)c->line : 0;
        out[k].lines = un->dw.lines;
    }
    return k;
}

const gt_dwarf_unit *gt_dwarf_function_at(gt_elf *e, uint64_t addr, size_t *die)
{
    unit *un = NULL;
    const span *f = function_span(e, addr, &un);
    if (!f) return NULL;
    *die = f->at;
    return &un->dw;
}

/* Whether entry `at` refers to `to` by its abstract origin or
 * specification. */
static int refers_to(const gt_elf *e, const gt_dwarf_unit *u, size_t at, uint64_t to)
{
    gt_dwarf_reader r = {e->info + at, e->info + u->end, 0};
    gt_dwarf_entry d;
    if (gt_dwarf_entry_read(e, u, &r, &d) != 0 || !d.ab) return 0;
    const enum gt_dwarf_slot slots[] = {GT_DW_ABSTRACT_ORIGIN, GT_DW_SPECIFICATION};
    for (unsigned i = 0; i < 2; i++)
        if (gt_dwarf_has(&d, slots[i]) && gt_dwarf_is_ref(&d.v[slots[i]]) && d.v[slots[i]].u == to)
            return 1;
    return 0;
}

static int has_addresses(uint64_t lo, uint64_t hi, void *ctx)
{
    (void)lo, (void)hi, (void)ctx;
    return 1;
}

const gt_dwarf_unit *gt_dwarf_definition(gt_elf *e, gt_dwarf_value ref, size_t *die)
{
    if (!e->inlines_built) build_index(e);
    gt_inline_index *ix = e->inlines;
    unit *un = ix && gt_dwarf_is_ref(&ref) ? unit_of(ix, ref.u) : NULL;
    if (!un || unit_abbrevs(e, ix, un) != 0) return NULL;
    const gt_dwarf_unit *u = &un->dw;
    gt_dwarf_reader r = {e->info + ref.u, e->info + u->end, 0};
    gt_dwarf_entry d;
    if (gt_dwarf_entry_read(e, u, &r, &d) != 0 || !d.ab || d.ab->tag != GT_DW_TAG_SUBPROGRAM)
        return NULL;
    *die = (size_t)ref.u;
    if (gt_dwarf_ranges(e, u, &d, has_addresses, NULL) == 1) return u;
    /* A declaration, or an abstract function: its definition in its unit. */
    if (!un->state) read_funcs(e, ix, un);
    for (size_t i = 0; un->state > 0 && i < un->nfuncs; i++) {
        if (refers_to(e, u, un->funcs[i].at, ref.u)) {
            *die = un->funcs[i].at;
            return u;
        }
    }
    return NULL;
}

void gt_dwarf_names(gt_elf *e, gt_dwarf_value ref, gt_inlined *out)
{
    if (!e->inlines_built) build_index(e);
    if (e->inlines)
        name_call(e, e->inlines, ref, out);
    else
        out->name = out->linkage = "";
}

void gt_dwarf_inline_free(gt_elf *e)
{
    gt_inline_index *ix = e->inlines;
    for (size_t i = 0; ix && i < ix->nunits; i++) {
        gt_dwarf_unit_free(&ix->units[i].dw);
        free(ix->units[i].funcs);
    }
    if (ix) {
        free(ix->units);
        free(ix->spans);
        free(ix);
    }
    e->inlines = NULL;
    e->inlines_built = 0;
}
