/* Python line tables, decoded as CPython decodes them (PyCode_Addr2Line
 * and the address ranges behind it), so that a frame read from memory
 * gets the line the interpreter itself would report. */
#include "python_lines.h"

#include <stddef.h>
#include <stdint.h>

/* 3.9: pairs of unsigned address and signed line increments. */
static int lnotab_line(const uint8_t *t, size_t len, int line, int64_t offset)
{
    int64_t addr = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        addr += t[i];
        if (addr > offset) break;
        line += (int8_t)t[i + 1];
    }
    return line;
}

/* 3.10: each pair is a range of `delta` bytes on the line moved by a
 * signed delta, -128 for no line; empty ranges only move the line. */
static int linetable_line(const uint8_t *t, size_t len, int line, int64_t offset)
{
    int64_t end = 0;
    int computed = line;
    for (size_t i = 0; i + 1 < len; i += 2) {
        int64_t start = end;
        end += t[i];
        int8_t ldelta = (int8_t)t[i + 1];
        int here = -1;
        if (ldelta != -128) {
            computed += ldelta;
            here = computed;
        }
        if (end > start && offset >= start && offset < end) return here;
    }
    return -1;
}

typedef struct cursor {
    const uint8_t *p, *end;
} cursor;

static unsigned varint(cursor *c)
{
    unsigned read = c->p < c->end ? *c->p++ : 0, val = read & 63, shift = 0;
    while ((read & 64) && c->p < c->end) {
        read = *c->p++;
        shift += 6;
        if (shift < 32) val |= (read & 63) << shift;
    }
    return val;
}

static int signed_varint(cursor *c)
{
    unsigned u = varint(c);
    return (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
}

/* 3.11 on: entries start with a byte with the top bit set; bits 3-6 are
 * the entry's code, bits 0-2 its length in code units less one. */
static int locations_line(const uint8_t *t, size_t len, int line, int64_t offset)
{
    cursor c = {t, t + len};
    int64_t end = 0;
    while (c.p < c.end) {
        uint8_t first = *c.p;
        int code = (first >> 3) & 15;
        int64_t start = end;
        end += ((first & 7) + 1) * 2;
        c.p++;
        int delta = 0;
        if (code == 13 || code == 14) {
            delta = signed_varint(&c);
        } else if (code >= 10 && code <= 12) {
            delta = code - 10;
        }
        line += delta;
        int here = code == 15 ? -1 : line;
        if (offset >= start && offset < end) return here;
        while (c.p < c.end && !(*c.p & 128))
            c.p++;
    }
    return -1;
}

int gt_python_line(enum gt_py_line_format format, const uint8_t *table, size_t len, int firstlineno,
                   int64_t offset)
{
    if (offset < 0) return firstlineno;
    switch (format) {
    case GT_PY_LNOTAB:
        return lnotab_line(table, len, firstlineno, offset);
    case GT_PY_LINETABLE:
        return linetable_line(table, len, firstlineno, offset);
    case GT_PY_LOCATIONS:
        return locations_line(table, len, firstlineno, offset);
    }
    return -1;
}
