/* The call frame information of x86-64 objects: from .eh_frame_hdr's
 * sorted table to the FDE that covers an address, then its CIE's and its
 * own instructions run up to the address (DWARF 5 §6.4, the LSB's
 * .eh_frame encodings). Only what stepping to a caller needs is kept: the
 * CFA rule and where rbp and the return address were saved. A rule this
 * reader does not follow (a CFA computed by a DWARF expression, as stack
 * realignment and signal frames have) ends the walk there: GT_CFI_UNKNOWN,
 * never a guess. */
#include "cfi.h"

#include "dwarf_reader.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define REG_RBP 6u
#define REG_RSP 7u

enum { PE_OMIT = 0xff, PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_TABLE = 0x3b };

/* A pointer in encoding `enc` (indirect pointers are not followed: only
 * the personality routine uses them, and it is skipped). */
static uintptr_t encoded(gt_dwarf_reader *r, uint8_t enc, uintptr_t datarel)
{
    if (enc == PE_OMIT) return 0;
    uintptr_t field = (uintptr_t)r->p;
    uint64_t v;
    switch (enc & 0x0f) {
    case 0x00:
    case 0x04:
    case 0x0c:
        v = gt_dwarf_fixed(r, 8);
        break;
    case 0x01:
        v = gt_dwarf_uleb(r);
        break;
    case 0x02:
        v = gt_dwarf_fixed(r, 2);
        break;
    case 0x03:
        v = gt_dwarf_fixed(r, 4);
        break;
    case 0x09:
        v = (uint64_t)gt_dwarf_sleb(r);
        break;
    case 0x0a:
        v = (uint64_t)(int64_t)(int16_t)gt_dwarf_fixed(r, 2);
        break;
    case 0x0b:
        v = (uint64_t)(int64_t)(int32_t)gt_dwarf_fixed(r, 4);
        break;
    default:
        r->bad = 1;
        return 0;
    }
    switch (enc & 0x70) {
    case 0x00:
        break;
    case PE_PCREL:
        v += field;
        break;
    case PE_DATAREL:
        v += datarel;
        break;
    default:
        r->bad = 1;
    }
    return (uintptr_t)v;
}

/* Where a tracked register is: unchanged, at CFA + off, or anywhere else
 * (undefined, another register, an expression). */
enum how { SAME, AT_OFFSET, UNDEFINED, ELSEWHERE };

typedef struct reg_rule {
    uint8_t how;
    int64_t off;
} reg_rule;

typedef struct state {
    uint64_t cfa_reg;
    int64_t cfa_off;
    int cfa_expr;
    reg_rule rbp, ra;
} state;

typedef struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;
    int has_aug_data;
    const uint8_t *insns, *end;
} cie;

/* The entry's length and where it ends; NULL for a 0 length (a terminator). */
static const uint8_t *entry_end(gt_dwarf_reader *r)
{
    uint64_t len = gt_dwarf_fixed(r, 4);
    if (len == 0xffffffffu) len = gt_dwarf_fixed(r, 8);
    if (r->bad || len == 0) return NULL;
    return r->p + len;
}

static int parse_cie(const uint8_t *at, cie *c)
{
    gt_dwarf_reader r = {at, at + 16, 0};
    const uint8_t *end = entry_end(&r);
    if (!end) return -1;
    r.end = end;
    if (gt_dwarf_fixed(&r, 4) != 0) return -1; /* a CIE's id in .eh_frame */
    uint8_t version = (uint8_t)gt_dwarf_fixed(&r, 1);
    const char *aug = (const char *)r.p;
    size_t aug_len = strnlen(aug, (size_t)(r.end - r.p));
    if (aug_len == (size_t)(r.end - r.p)) return -1;
    r.p += aug_len + 1;
    if (aug[0] && aug[0] != 'z') return -1; /* old "eh" augmentations: not followed */
    c->code_align = gt_dwarf_uleb(&r);
    c->data_align = gt_dwarf_sleb(&r);
    c->ra_reg = version == 1 ? gt_dwarf_fixed(&r, 1) : gt_dwarf_uleb(&r);
    c->fde_enc = 0;
    c->has_aug_data = aug[0] == 'z';
    if (c->has_aug_data) {
        uint64_t n = gt_dwarf_uleb(&r);
        const uint8_t *data_end = r.p + n;
        for (const char *a = aug + 1; *a && !r.bad; a++) {
            if (*a == 'R') {
                c->fde_enc = (uint8_t)gt_dwarf_fixed(&r, 1);
            } else if (*a == 'P') {
                uint8_t enc = (uint8_t)gt_dwarf_fixed(&r, 1);
                encoded(&r, enc & 0x7f, 0);
            } else if (*a == 'L') {
                gt_dwarf_fixed(&r, 1);
            } else if (*a != 'S' && *a != 'B' && *a != 'G') {
                break; /* an unknown letter: the data's length still skips it */
            }
        }
        r.p = data_end;
    }
    if (r.bad || r.p > r.end) return -1;
    c->insns = r.p;
    c->end = r.end;
    return 0;
}

static void set_reg(state *s, uint64_t reg, const cie *c, uint8_t how, int64_t off)
{
    reg_rule rule = {how, off};
    if (reg == REG_RBP) s->rbp = rule;
    if (reg == c->ra_reg) s->ra = rule;
}

#define REMEMBER_MAX 8

/* Runs instructions from location `loc` until one would move past
 * `target`. `init` is the state after the CIE's instructions (for
 * DW_CFA_restore). Returns -1 on an instruction it does not know. */
static int run(gt_dwarf_reader *r, const cie *c, uintptr_t loc, uintptr_t target, state *s,
               const state *init)
{
    state saved[REMEMBER_MAX];
    int depth = 0;
    while (r->p < r->end && !r->bad) {
        uint8_t op = *r->p++;
        uint64_t reg, delta = 0;
        int advance = 0;
        switch (op & 0xc0) {
        case 0x40:
            delta = (op & 0x3f) * c->code_align, advance = 1;
            break;
        case 0x80:
            set_reg(s, op & 0x3f, c, AT_OFFSET, (int64_t)gt_dwarf_uleb(r) * c->data_align);
            continue;
        case 0xc0:
            reg = op & 0x3f;
            if (reg == REG_RBP) s->rbp = init->rbp;
            if (reg == c->ra_reg) s->ra = init->ra;
            continue;
        }
        if (!advance) switch (op) {
            case 0x00:
                break;
            case 0x01: {
                uintptr_t to = encoded(r, c->fde_enc, 0);
                if (to > target) return 0;
                loc = to;
                break;
            }
            case 0x02:
            case 0x03:
            case 0x04:
                delta = gt_dwarf_fixed(r, op == 0x02   ? 1
                                          : op == 0x03 ? 2
                                                       : 4) *
                        c->code_align,
                advance = 1;
                break;
            case 0x05:
                reg = gt_dwarf_uleb(r);
                set_reg(s, reg, c, AT_OFFSET, (int64_t)gt_dwarf_uleb(r) * c->data_align);
                break;
            case 0x06:
                reg = gt_dwarf_uleb(r);
                if (reg == REG_RBP) s->rbp = init->rbp;
                if (reg == c->ra_reg) s->ra = init->ra;
                break;
            case 0x07:
                set_reg(s, gt_dwarf_uleb(r), c, UNDEFINED, 0);
                break;
            case 0x08:
                set_reg(s, gt_dwarf_uleb(r), c, SAME, 0);
                break;
            case 0x09:
                reg = gt_dwarf_uleb(r);
                gt_dwarf_uleb(r);
                set_reg(s, reg, c, ELSEWHERE, 0);
                break;
            case 0x0a:
                if (depth == REMEMBER_MAX) return -1;
                saved[depth++] = *s;
                break;
            case 0x0b:
                if (depth == 0) return -1;
                *s = saved[--depth];
                break;
            case 0x0c:
                s->cfa_reg = gt_dwarf_uleb(r);
                s->cfa_off = (int64_t)gt_dwarf_uleb(r);
                s->cfa_expr = 0;
                break;
            case 0x0d:
                s->cfa_reg = gt_dwarf_uleb(r);
                s->cfa_expr = 0;
                break;
            case 0x0e:
                s->cfa_off = (int64_t)gt_dwarf_uleb(r);
                break;
            case 0x0f:
                gt_dwarf_skip(r, gt_dwarf_uleb(r));
                s->cfa_expr = 1;
                break;
            case 0x10:
            case 0x16:
                reg = gt_dwarf_uleb(r);
                gt_dwarf_skip(r, gt_dwarf_uleb(r));
                set_reg(s, reg, c, ELSEWHERE, 0);
                break;
            case 0x11:
                reg = gt_dwarf_uleb(r);
                set_reg(s, reg, c, AT_OFFSET, gt_dwarf_sleb(r) * c->data_align);
                break;
            case 0x12:
                s->cfa_reg = gt_dwarf_uleb(r);
                s->cfa_off = gt_dwarf_sleb(r) * c->data_align;
                s->cfa_expr = 0;
                break;
            case 0x13:
                s->cfa_off = gt_dwarf_sleb(r) * c->data_align;
                break;
            case 0x14:
            case 0x15:
                reg = gt_dwarf_uleb(r);
                gt_dwarf_uleb(r);
                set_reg(s, reg, c, ELSEWHERE, 0);
                break;
            case 0x2e:
                gt_dwarf_uleb(r);
                break;
            case 0x2f:
                reg = gt_dwarf_uleb(r);
                set_reg(s, reg, c, AT_OFFSET, -(int64_t)gt_dwarf_uleb(r) * c->data_align);
                break;
            default:
                return -1;
            }
        if (advance) {
            if (loc + delta > target) return 0;
            loc += delta;
        }
    }
    return r->bad || r->p > r->end ? -1 : 0;
}

/* The FDE covering target, through the header's binary search table. */
static const uint8_t *find_fde(const uint8_t *hdr, uintptr_t target)
{
    if (hdr[0] != 1 || hdr[3] != PE_TABLE) return NULL;
    gt_dwarf_reader r = {hdr + 4, hdr + 4 + 16, 0};
    encoded(&r, hdr[1], (uintptr_t)hdr); /* the .eh_frame pointer: the table suffices */
    uint64_t count = encoded(&r, hdr[2], (uintptr_t)hdr);
    if (r.bad || count == 0) return NULL;
    const int32_t *table = (const int32_t *)(const void *)r.p;
    uint64_t lo = 0, hi = count;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)hdr + (intptr_t)table[2 * mid] <= target)
            lo = mid;
        else
            hi = mid;
    }
    if ((uintptr_t)hdr + (intptr_t)table[2 * lo] > target) return NULL;
    return hdr + table[2 * lo + 1];
}

gt_cfi_rule gt_cfi_find(const void *eh_frame_hdr, uintptr_t target)
{
    gt_cfi_rule unknown = {.kind = GT_CFI_UNKNOWN};
    if (!eh_frame_hdr) return unknown;
    const uint8_t *fde = find_fde(eh_frame_hdr, target);
    if (!fde) return unknown;
    gt_dwarf_reader r = {fde, fde + 16, 0};
    const uint8_t *end = entry_end(&r);
    if (!end) return unknown;
    r.end = end;
    const uint8_t *cie_field = r.p;
    uint32_t cie_off = (uint32_t)gt_dwarf_fixed(&r, 4);
    cie c;
    if (r.bad || cie_off == 0 || parse_cie(cie_field - cie_off, &c) != 0) return unknown;
    uintptr_t begin = encoded(&r, c.fde_enc, 0);
    uintptr_t range = encoded(&r, c.fde_enc & 0x0f, 0);
    if (r.bad || target < begin || target - begin >= range) return unknown;
    if (c.has_aug_data) gt_dwarf_skip(&r, gt_dwarf_uleb(&r));
    /* The CIE's defaults before its instructions: CFA = rsp + 8 (at a
     * call's target), the return address just below it, rbp untouched. */
    state s = {.cfa_reg = REG_RSP, .cfa_off = 8, .rbp = {SAME, 0}, .ra = {AT_OFFSET, -8}};
    gt_dwarf_reader ci = {c.insns, c.end, 0};
    if (run(&ci, &c, begin, UINTPTR_MAX, &s, &s) != 0) return unknown;
    state init = s;
    if (run(&r, &c, begin, target, &s, &init) != 0) return unknown;
    if (s.ra.how == UNDEFINED) return (gt_cfi_rule){.kind = GT_CFI_END};
    if (s.cfa_expr || (s.cfa_reg != REG_RSP && s.cfa_reg != REG_RBP) || s.ra.how != AT_OFFSET ||
        s.ra.off != -8 || s.rbp.how == ELSEWHERE || s.cfa_off <= 0 || s.cfa_off > INT32_MAX ||
        (s.rbp.how == AT_OFFSET && (s.rbp.off < INT32_MIN || s.rbp.off >= 0)))
        return unknown;
    return (gt_cfi_rule){.kind = GT_CFI_STEP,
                         .cfa_rbp = s.cfa_reg == REG_RBP,
                         .rbp_saved = s.rbp.how == AT_OFFSET,
                         .cfa_off = (int32_t)s.cfa_off,
                         .rbp_off = (int32_t)s.rbp.off};
}
