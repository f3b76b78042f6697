/* The DWARF debug information's entries (DWARF 5 §7.5), read bounded.
 *
 * A unit's entries are a tree written in preorder: each names its
 * abbreviation (a tag, whether children follow, and the attributes'
 * forms, in .debug_abbrev), then gives its attributes' values. Only the
 * attributes call sites use are kept; every form of DWARF 2 to 5 and GNU's
 * extensions is understood well enough to be passed over, and one this
 * reader does not know ends the entry (its end cannot be found). Type
 * units and split DWARF's skeleton units (their entries are in .dwo
 * files) are not read. */
#include "dwarf_info.h"

#include "dwarf_reader.h"
#include "elf_file.h"

#include <stdlib.h>
#include <string.h>

#define ABBREVS_MAX (1u << 16) /* abbreviations kept per unit */

enum { TAG_COMPILE_UNIT = 0x11, TAG_PARTIAL_UNIT = 0x3c }; /* the units read */

/* The attributes kept (DWARF 5 §7.5.4). */
enum {
    AT_SIBLING = 0x01,
    AT_NAME = 0x03,
    AT_STMT_LIST = 0x10,
    AT_LOW_PC = 0x11,
    AT_HIGH_PC = 0x12,
    AT_ABSTRACT_ORIGIN = 0x31,
    AT_SPECIFICATION = 0x47,
    AT_RANGES = 0x55,
    AT_CALL_FILE = 0x58,
    AT_CALL_LINE = 0x59,
    AT_LINKAGE_NAME = 0x6e,
    AT_STR_OFFSETS_BASE = 0x72,
    AT_ADDR_BASE = 0x73,
    AT_RNGLISTS_BASE = 0x74,
    AT_CALL_RETURN_PC = 0x7d,
    AT_CALL_ORIGIN = 0x7f,
    AT_CALL_PC = 0x81,
    AT_CALL_TAIL_CALL = 0x82,
    AT_MIPS_LINKAGE_NAME = 0x2007,
    AT_GNU_TAIL_CALL = 0x2115,
};

/* Every form of DWARF 2 to 5 (§7.5.6), and GNU's. */
enum {
    F_ADDR = 0x01,
    F_BLOCK2 = 0x03,
    F_BLOCK4 = 0x04,
    F_DATA2 = 0x05,
    F_DATA4 = 0x06,
    F_DATA8 = 0x07,
    F_STRING = 0x08,
    F_BLOCK = 0x09,
    F_BLOCK1 = 0x0a,
    F_DATA1 = 0x0b,
    F_FLAG = 0x0c,
    F_SDATA = 0x0d,
    F_STRP = 0x0e,
    F_UDATA = 0x0f,
    F_REF_ADDR = 0x10,
    F_REF1 = 0x11,
    F_REF2 = 0x12,
    F_REF4 = 0x13,
    F_REF8 = 0x14,
    F_REF_UDATA = 0x15,
    F_INDIRECT = 0x16,
    F_SEC_OFFSET = 0x17,
    F_EXPRLOC = 0x18,
    F_FLAG_PRESENT = 0x19,
    F_STRX = 0x1a,
    F_ADDRX = 0x1b,
    F_REF_SUP4 = 0x1c,
    F_STRP_SUP = 0x1d,
    F_DATA16 = 0x1e,
    F_LINE_STRP = 0x1f,
    F_REF_SIG8 = 0x20,
    F_IMPLICIT_CONST = 0x21,
    F_LOCLISTX = 0x22,
    F_RNGLISTX = 0x23,
    F_REF_SUP8 = 0x24,
    F_STRX1 = 0x25,
    F_STRX4 = 0x28,
    F_ADDRX1 = 0x29,
    F_ADDRX4 = 0x2c,
    F_GNU_ADDR_INDEX = 0x1f01,
    F_GNU_STR_INDEX = 0x1f02,
    F_GNU_REF_ALT = 0x1f20,
    F_GNU_STRP_ALT = 0x1f21,
};

static int slot_of(uint64_t attr)
{
    switch (attr) {
    case AT_SIBLING:
        return GT_DW_SIBLING;
    case AT_NAME:
        return GT_DW_NAME;
    case AT_LINKAGE_NAME:
    case AT_MIPS_LINKAGE_NAME:
        return GT_DW_LINKAGE_NAME;
    case AT_LOW_PC:
        return GT_DW_LOW_PC;
    case AT_HIGH_PC:
        return GT_DW_HIGH_PC;
    case AT_RANGES:
        return GT_DW_RANGES;
    case AT_ABSTRACT_ORIGIN:
        return GT_DW_ABSTRACT_ORIGIN;
    case AT_SPECIFICATION:
        return GT_DW_SPECIFICATION;
    case AT_CALL_FILE:
        return GT_DW_CALL_FILE;
    case AT_CALL_LINE:
        return GT_DW_CALL_LINE;
    case AT_STMT_LIST:
        return GT_DW_STMT_LIST;
    case AT_STR_OFFSETS_BASE:
        return GT_DW_STR_OFFSETS_BASE;
    case AT_ADDR_BASE:
        return GT_DW_ADDR_BASE;
    case AT_RNGLISTS_BASE:
        return GT_DW_RNGLISTS_BASE;
    case AT_CALL_RETURN_PC:
        return GT_DW_CALL_RETURN_PC;
    case AT_CALL_ORIGIN:
        return GT_DW_CALL_ORIGIN;
    case AT_CALL_PC:
        return GT_DW_CALL_PC;
    case AT_CALL_TAIL_CALL:
    case AT_GNU_TAIL_CALL:
        return GT_DW_CALL_TAIL;
    default:
        return -1;
    }
}

/* Reads one value of `form`: 0, or -1 when the form is not known (the
 * rest of the entry cannot be found). */
static int read_value(const gt_dwarf_unit *u, gt_dwarf_reader *r, uint64_t form, int64_t implicit,
                      gt_dwarf_value *v)
{
    size_t off = u->offset8 ? 8 : 4;
    if (form == F_INDIRECT) form = gt_dwarf_uleb(r);
    *v = (gt_dwarf_value){form, 0, NULL};
    switch (form) {
    case F_ADDR:
        v->u = gt_dwarf_fixed(r, u->addr_size);
        break;
    case F_DATA1:
    case F_REF1:
    case F_FLAG:
    case F_STRX1:
    case F_ADDRX1:
        v->u = gt_dwarf_fixed(r, 1);
        break;
    case F_DATA2:
    case F_REF2:
    case F_STRX1 + 1: /* strx2 */
    case F_ADDRX1 + 1:
        v->u = gt_dwarf_fixed(r, 2);
        break;
    case F_STRX1 + 2: /* strx3 */
    case F_ADDRX1 + 2:
        v->u = gt_dwarf_fixed(r, 3);
        break;
    case F_DATA4:
    case F_REF4:
    case F_REF_SUP4:
    case F_STRX4:
    case F_ADDRX4:
        v->u = gt_dwarf_fixed(r, 4);
        break;
    case F_DATA8:
    case F_REF8:
    case F_REF_SIG8:
    case F_REF_SUP8:
        v->u = gt_dwarf_fixed(r, 8);
        break;
    case F_DATA16:
        gt_dwarf_skip(r, 16);
        break;
    case F_SDATA:
        v->u = (uint64_t)gt_dwarf_sleb(r);
        break;
    case F_UDATA:
    case F_REF_UDATA:
    case F_STRX:
    case F_ADDRX:
    case F_LOCLISTX:
    case F_RNGLISTX:
    case F_GNU_ADDR_INDEX:
    case F_GNU_STR_INDEX:
        v->u = gt_dwarf_uleb(r);
        break;
    case F_STRP:
    case F_LINE_STRP:
    case F_SEC_OFFSET:
    case F_STRP_SUP:
    case F_GNU_REF_ALT:
    case F_GNU_STRP_ALT:
        v->u = gt_dwarf_fixed(r, off);
        break;
    case F_REF_ADDR:
        v->u = gt_dwarf_fixed(r, u->version == 2 ? u->addr_size : off);
        break;
    case F_STRING: {
        const uint8_t *nul = memchr(r->p, 0, (size_t)(r->end - r->p));
        if (!nul) return -1;
        v->s = (const char *)r->p;
        r->p = nul + 1;
        break;
    }
    case F_BLOCK1:
        gt_dwarf_skip(r, gt_dwarf_fixed(r, 1));
        break;
    case F_BLOCK2:
        gt_dwarf_skip(r, gt_dwarf_fixed(r, 2));
        break;
    case F_BLOCK4:
        gt_dwarf_skip(r, gt_dwarf_fixed(r, 4));
        break;
    case F_BLOCK:
    case F_EXPRLOC:
        gt_dwarf_skip(r, gt_dwarf_uleb(r));
        break;
    case F_FLAG_PRESENT:
        v->u = 1;
        break;
    case F_IMPLICIT_CONST:
        v->u = (uint64_t)implicit;
        break;
    default:
        return -1;
    }
    /* References within the unit are made absolute. */
    if (form == F_REF1 || form == F_REF2 || form == F_REF4 || form == F_REF8 || form == F_REF_UDATA)
        v->u += u->start;
    return r->bad ? -1 : 0;
}

/* One abbreviation from r: 0, 1 at the end of the table, -1 when bad. */
static int next_abbrev(gt_dwarf_reader *r, gt_dwarf_abbrev *a)
{
    a->code = gt_dwarf_uleb(r);
    if (r->bad) return -1;
    if (!a->code) return 1;
    a->tag = gt_dwarf_uleb(r);
    a->children = gt_dwarf_fixed(r, 1) != 0;
    a->specs = r->p;
    for (;;) {
        uint64_t attr = gt_dwarf_uleb(r), form = gt_dwarf_uleb(r);
        if (r->bad) return -1;
        if (!attr && !form) return 0;
        if (form == F_IMPLICIT_CONST) gt_dwarf_sleb(r);
    }
}

static int by_code(const void *a, const void *b)
{
    const gt_dwarf_abbrev *x = a, *y = b;
    return (x->code > y->code) - (x->code < y->code);
}

int gt_dwarf_abbrevs_read(const gt_elf *e, gt_dwarf_unit *u)
{
    if (u->abbrevs) return 0;
    if (u->abbrevs_at >= e->abbrev_len) return -1;
    gt_dwarf_reader r = {e->abbrev + u->abbrevs_at, e->abbrev + e->abbrev_len, 0};
    size_t cap = 0, n = 0;
    gt_dwarf_abbrev *all = NULL, a;
    int sorted = 1, got;
    while ((got = next_abbrev(&r, &a)) == 0 && n < ABBREVS_MAX) {
        if (n == cap) {
            size_t grown_cap = cap ? cap * 2 : 64;
            gt_dwarf_abbrev *grown = realloc(all, grown_cap * sizeof *grown);
            if (!grown) break;
            all = grown;
            cap = grown_cap;
        }
        if (n && all[n - 1].code >= a.code) sorted = 0;
        all[n++] = a;
    }
    if (!n) {
        free(all);
        return -1;
    }
    if (!sorted) qsort(all, n, sizeof *all, by_code);
    u->abbrevs = all;
    u->nabbrevs = n;
    return 0;
}

static const gt_dwarf_abbrev *find_abbrev(const gt_dwarf_unit *u, uint64_t code)
{
    if (!u->nabbrevs) return NULL;
    /* Compilers number abbreviations 1, 2, 3...: mostly found at once. */
    if (code - 1 < u->nabbrevs && u->abbrevs[code - 1].code == code) return &u->abbrevs[code - 1];
    gt_dwarf_abbrev key = {.code = code};
    return bsearch(&key, u->abbrevs, u->nabbrevs, sizeof key, by_code);
}

/* The attributes of the entry whose abbreviation is ab, from r (after its
 * code): 0, or -1 when they cannot be read. */
static int read_attrs(const gt_elf *e, const gt_dwarf_unit *u, gt_dwarf_reader *r,
                      const gt_dwarf_abbrev *ab, gt_dwarf_entry *d)
{
    d->ab = ab;
    d->have = 0;
    gt_dwarf_reader specs = {ab->specs, e->abbrev + e->abbrev_len, 0};
    for (;;) {
        uint64_t attr = gt_dwarf_uleb(&specs), form = gt_dwarf_uleb(&specs);
        int64_t implicit = form == F_IMPLICIT_CONST ? gt_dwarf_sleb(&specs) : 0;
        if (specs.bad) return -1;
        if (!attr && !form) return 0;
        gt_dwarf_value v;
        if (read_value(u, r, form, implicit, &v) != 0) return -1;
        int slot = slot_of(attr);
        if (slot >= 0) {
            d->v[slot] = v;
            d->have |= 1u << slot;
        }
    }
}

int gt_dwarf_is_ref(const gt_dwarf_value *v)
{
    return v->form == F_REF_ADDR || (v->form >= F_REF1 && v->form <= F_REF_UDATA);
}

static int is_address(uint64_t form)
{
    return form == F_ADDR || form == F_ADDRX || form == F_GNU_ADDR_INDEX ||
           (form >= F_ADDRX1 && form <= F_ADDRX4);
}

int gt_dwarf_entry_read(const gt_elf *e, const gt_dwarf_unit *u, gt_dwarf_reader *r,
                        gt_dwarf_entry *d)
{
    uint64_t code = gt_dwarf_uleb(r);
    d->ab = NULL;
    if (r->bad) return -1;
    if (!code) return 0;
    const gt_dwarf_abbrev *ab = find_abbrev(u, code);
    return ab ? read_attrs(e, u, r, ab, d) : -1;
}

static const char *str_in(const uint8_t *sec, size_t len, uint64_t off)
{
    if (!sec || off >= len || !memchr(sec + off, 0, len - off)) return "";
    return (const char *)sec + off;
}

/* An offset-sized value at `at` in a section: 0, or -1 outside it. */
static int offset_in(const uint8_t *sec, size_t len, uint64_t at, size_t size, uint64_t *out)
{
    if (!sec || at > len || size > len - at) return -1;
    gt_dwarf_reader r = {sec + at, sec + len, 0};
    *out = gt_dwarf_fixed(&r, size);
    return 0;
}

/* Strings of a supplementary file (DW_FORM_strp_sup) cannot be had. */
const char *gt_dwarf_string(const gt_elf *e, const gt_dwarf_unit *u, const gt_dwarf_value *v)
{
    size_t off = u->offset8 ? 8 : 4;
    uint64_t at;
    switch (v->form) {
    case F_STRING:
        return v->s;
    case F_STRP:
        return str_in(e->str, e->str_len, v->u);
    case F_LINE_STRP:
        return str_in(e->line_str, e->line_str_len, v->u);
    case F_STRX:
    case F_STRX1:
    case F_STRX1 + 1:
    case F_STRX1 + 2:
    case F_STRX4:
    case F_GNU_STR_INDEX:
        if (u->str_offsets_base == GT_DWARF_NONE ||
            v->u > (UINT64_MAX - u->str_offsets_base) / off ||
            offset_in(e->str_offsets, e->str_offsets_len, u->str_offsets_base + v->u * off, off,
                      &at) != 0)
            return "";
        return str_in(e->str, e->str_len, at);
    default:
        return "";
    }
}

int gt_dwarf_address(const gt_elf *e, const gt_dwarf_unit *u, const gt_dwarf_value *v,
                     uint64_t *out)
{
    if (v->form == F_ADDR) {
        *out = v->u;
        return 0;
    }
    if (!is_address(v->form) || u->addr_base == GT_DWARF_NONE ||
        v->u > (UINT64_MAX - u->addr_base) / u->addr_size)
        return -1;
    return offset_in(e->addr, e->addr_len, u->addr_base + v->u * u->addr_size, u->addr_size, out);
}

static int emit(gt_dwarf_range_fn fn, void *ctx, uint64_t lo, uint64_t hi)
{
    return lo && lo < hi ? fn(lo, hi, ctx) : 0;
}

/* DWARF 5 range lists (§2.17.3). */
static int rnglist(const gt_elf *e, const gt_dwarf_unit *u, uint64_t at, gt_dwarf_range_fn fn,
                   void *ctx)
{
    if (!e->rnglists || at >= e->rnglists_len) return -1;
    gt_dwarf_reader r = {e->rnglists + at, e->rnglists + e->rnglists_len, 0};
    uint64_t base = u->low_pc;
    while (!r.bad) {
        uint8_t kind = (uint8_t)gt_dwarf_fixed(&r, 1);
        uint64_t a = 0, b = 0;
        gt_dwarf_value x = {F_ADDRX, 0, NULL}, y = {F_ADDRX, 0, NULL};
        int stop = 0;
        switch (kind) {
        case 0: /* end_of_list */
            return 0;
        case 1: /* base_addressx */
            x.u = gt_dwarf_uleb(&r);
            if (gt_dwarf_address(e, u, &x, &base) != 0) return 0;
            break;
        case 2: /* startx_endx */
            x.u = gt_dwarf_uleb(&r);
            y.u = gt_dwarf_uleb(&r);
            if (gt_dwarf_address(e, u, &x, &a) == 0 && gt_dwarf_address(e, u, &y, &b) == 0)
                stop = emit(fn, ctx, a, b);
            break;
        case 3: /* startx_length */
            x.u = gt_dwarf_uleb(&r);
            b = gt_dwarf_uleb(&r);
            if (gt_dwarf_address(e, u, &x, &a) == 0) stop = emit(fn, ctx, a, a + b);
            break;
        case 4: /* offset_pair */
            a = gt_dwarf_uleb(&r);
            b = gt_dwarf_uleb(&r);
            stop = emit(fn, ctx, base + a, base + b);
            break;
        case 5: /* base_address */
            base = gt_dwarf_fixed(&r, u->addr_size);
            break;
        case 6: /* start_end */
            a = gt_dwarf_fixed(&r, u->addr_size);
            b = gt_dwarf_fixed(&r, u->addr_size);
            stop = emit(fn, ctx, a, b);
            break;
        case 7: /* start_length */
            a = gt_dwarf_fixed(&r, u->addr_size);
            b = gt_dwarf_uleb(&r);
            stop = emit(fn, ctx, a, a + b);
            break;
        default:
            return 0;
        }
        if (stop) return stop;
    }
    return 0;
}

/* Range lists before DWARF 5: pairs of addresses, (0, 0) at the end, a
 * first address of all ones setting the base. */
static int ranges_v4(const gt_elf *e, const gt_dwarf_unit *u, uint64_t at, gt_dwarf_range_fn fn,
                     void *ctx)
{
    if (!e->ranges || at >= e->ranges_len) return -1;
    gt_dwarf_reader r = {e->ranges + at, e->ranges + e->ranges_len, 0};
    uint64_t base = u->low_pc, all_ones = u->addr_size == 8 ? UINT64_MAX : 0xffffffffu;
    while (!r.bad) {
        uint64_t a = gt_dwarf_fixed(&r, u->addr_size), b = gt_dwarf_fixed(&r, u->addr_size);
        if (r.bad || (!a && !b)) return 0;
        if (a == all_ones) {
            base = b;
            continue;
        }
        int stop = emit(fn, ctx, base + a, base + b);
        if (stop) return stop;
    }
    return 0;
}

int gt_dwarf_ranges(const gt_elf *e, const gt_dwarf_unit *u, const gt_dwarf_entry *d,
                    gt_dwarf_range_fn fn, void *ctx)
{
    if (gt_dwarf_has(d, GT_DW_LOW_PC) && gt_dwarf_has(d, GT_DW_HIGH_PC)) {
        uint64_t lo, hi;
        const gt_dwarf_value *h = &d->v[GT_DW_HIGH_PC];
        if (gt_dwarf_address(e, u, &d->v[GT_DW_LOW_PC], &lo) != 0) return -1;
        if (!is_address(h->form))
            hi = lo + h->u; /* a constant: the length */
        else if (gt_dwarf_address(e, u, h, &hi) != 0)
            return -1;
        return emit(fn, ctx, lo, hi);
    }
    if (!gt_dwarf_has(d, GT_DW_RANGES)) return -1;
    const gt_dwarf_value *v = &d->v[GT_DW_RANGES];
    if (u->version < 5) return ranges_v4(e, u, v->u, fn, ctx);
    uint64_t at = v->u;
    if (v->form == F_RNGLISTX) {
        size_t off = u->offset8 ? 8 : 4;
        if (u->rnglists_base == GT_DWARF_NONE || v->u > (UINT64_MAX - u->rnglists_base) / off ||
            offset_in(e->rnglists, e->rnglists_len, u->rnglists_base + v->u * off, off, &at) != 0)
            return -1;
        at += u->rnglists_base;
    }
    return rnglist(e, u, at, fn, ctx);
}

int gt_dwarf_unit_read(const gt_elf *e, size_t at, gt_dwarf_unit *u, gt_dwarf_abbrev *ab,
                       gt_dwarf_entry *d, size_t *next)
{
    gt_dwarf_reader r = {e->info + at, e->info + e->info_len, 0};
    memset(u, 0, sizeof *u);
    *next = at;
    uint64_t len = gt_dwarf_fixed(&r, 4);
    u->offset8 = len == 0xffffffffu;
    if (u->offset8) len = gt_dwarf_fixed(&r, 8);
    if (r.bad || (!u->offset8 && len >= 0xfffffff0u) || len > (uint64_t)(r.end - r.p)) return -1;
    r.end = r.p + len;
    *next = (size_t)(r.end - e->info);
    u->start = at;
    u->end = *next;
    u->version = (uint8_t)gt_dwarf_fixed(&r, 2);
    size_t off = u->offset8 ? 8 : 4;
    if (u->version < 2 || u->version > 5) return -1;
    if (u->version == 5) {
        uint8_t type = (uint8_t)gt_dwarf_fixed(&r, 1);
        if (type != 1 && type != 3) return -1; /* compile and partial units only */
        u->addr_size = (uint8_t)gt_dwarf_fixed(&r, 1);
        u->abbrevs_at = (size_t)gt_dwarf_fixed(&r, off);
    } else {
        u->abbrevs_at = (size_t)gt_dwarf_fixed(&r, off);
        u->addr_size = (uint8_t)gt_dwarf_fixed(&r, 1);
    }
    if (r.bad || (u->addr_size != 4 && u->addr_size != 8) || u->abbrevs_at >= e->abbrev_len)
        return -1;
    u->die = (size_t)(r.p - e->info);
    u->addr_base = u->str_offsets_base = u->rnglists_base = u->lines = GT_DWARF_NONE;

    /* Its abbreviation is found without keeping the table: most units are
     * never looked into. */
    uint64_t code = gt_dwarf_uleb(&r);
    gt_dwarf_reader table = {e->abbrev + u->abbrevs_at, e->abbrev + e->abbrev_len, 0};
    int got;
    while ((got = next_abbrev(&table, ab)) == 0 && ab->code != code)
        ;
    if (got != 0 || (ab->tag != TAG_COMPILE_UNIT && ab->tag != TAG_PARTIAL_UNIT) ||
        read_attrs(e, u, &r, ab, d) != 0)
        return -1;
    if (gt_dwarf_has(d, GT_DW_ADDR_BASE)) u->addr_base = d->v[GT_DW_ADDR_BASE].u;
    if (gt_dwarf_has(d, GT_DW_STR_OFFSETS_BASE))
        u->str_offsets_base = d->v[GT_DW_STR_OFFSETS_BASE].u;
    if (gt_dwarf_has(d, GT_DW_RNGLISTS_BASE)) u->rnglists_base = d->v[GT_DW_RNGLISTS_BASE].u;
    if (gt_dwarf_has(d, GT_DW_STMT_LIST)) u->lines = d->v[GT_DW_STMT_LIST].u;
    if (gt_dwarf_has(d, GT_DW_LOW_PC) &&
        gt_dwarf_address(e, u, &d->v[GT_DW_LOW_PC], &u->low_pc) != 0)
        u->low_pc = 0;
    return 0;
}

int gt_dwarf_to_sibling(const gt_elf *e, const gt_dwarf_unit *u, gt_dwarf_reader *r,
                        const gt_dwarf_entry *d)
{
    if (!gt_dwarf_has(d, GT_DW_SIBLING)) return 0;
    const gt_dwarf_value *v = &d->v[GT_DW_SIBLING];
    if (!gt_dwarf_is_ref(v) || v->u <= (uint64_t)(r->p - e->info) || v->u >= u->end) return 0;
    r->p = e->info + v->u;
    return 1;
}

void gt_dwarf_unit_free(gt_dwarf_unit *u)
{
    free(u->abbrevs);
    u->abbrevs = NULL;
    u->nabbrevs = 0;
}

int gt_dwarf_walk_start(const gt_elf *e, const gt_dwarf_unit *u, size_t at, gt_dwarf_walk *w,
                        gt_dwarf_entry *d)
{
    *w = (gt_dwarf_walk){{e->info + at, e->info + u->end, 0}, 0, 0, SIZE_MAX};
    if (gt_dwarf_entry_read(e, u, &w->r, d) != 0 || !d->ab) return -1;
    w->depth = (size_t)d->ab->children;
    return 0;
}

int gt_dwarf_walk_next(const gt_elf *e, const gt_dwarf_unit *u, gt_dwarf_walk *w, gt_dwarf_entry *d,
                       size_t *at)
{
    while (w->depth > w->floor && w->r.p < w->r.end) {
        *at = (size_t)(w->r.p - e->info);
        if (gt_dwarf_entry_read(e, u, &w->r, d) != 0) return 0;
        if (!d->ab) {
            if (--w->depth < w->passing) w->passing = SIZE_MAX;
        } else if (w->depth >= w->passing) {
            w->depth += (size_t)d->ab->children;
        } else {
            return 1;
        }
    }
    return 0;
}

void gt_dwarf_walk_into(const gt_elf *e, const gt_dwarf_unit *u, gt_dwarf_walk *w,
                        const gt_dwarf_entry *d, int into)
{
    if (!d->ab->children || (!into && gt_dwarf_to_sibling(e, u, &w->r, d))) return;
    w->depth++;
    if (!into) w->passing = w->depth;
}
