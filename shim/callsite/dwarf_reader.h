/* A bounded reader of DWARF's encodings (DWARF 5 §7.6, §7.7), shared by
 * the call frame reader (cfi.c), the line table reader (dwarf_line.c) and
 * the debug information's reader (dwarf_inline.c):
 * every read stays within [p, end); one that would pass the end sets
 * `bad`, leaves p at the end and yields 0. */
#ifndef GT_DWARF_READER_H
#define GT_DWARF_READER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct gt_dwarf_reader {
    const uint8_t *p, *end;
    int bad;
} gt_dwarf_reader;

static inline uint64_t gt_dwarf_uleb(gt_dwarf_reader *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; r->p < r->end; shift += 7) {
        uint8_t b = *r->p++;
        if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    r->bad = 1;
    return 0;
}

static inline int64_t gt_dwarf_sleb(gt_dwarf_reader *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; r->p < r->end;) {
        uint8_t b = *r->p++;
        if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40)) v |= ~(uint64_t)0 << shift;
            return (int64_t)v;
        }
    }
    r->bad = 1;
    return 0;
}

/* An n-byte little-endian value (x86-64 objects are little-endian); of
 * more than 8 bytes, the first 8. */
static inline uint64_t gt_dwarf_fixed(gt_dwarf_reader *r, size_t n)
{
    uint64_t v = 0;
    if ((size_t)(r->end - r->p) < n) {
        r->bad = 1;
        r->p = r->end;
        return 0;
    }
    memcpy(&v, r->p, n > 8 ? 8 : n);
    r->p += n;
    return v;
}

/* Passes over n bytes. */
static inline void gt_dwarf_skip(gt_dwarf_reader *r, uint64_t n)
{
    if (n > (uint64_t)(r->end - r->p)) {
        r->bad = 1;
        r->p = r->end;
        return;
    }
    r->p += n;
}

#endif
