/* File and line from the DWARF line table (DWARF 5 §6.2; the header of
 * versions 2 to 4 differs only in its directory and file lists).
 *
 * The first lookup in an object runs every unit's line program once to
 * learn the addresses each covers; a lookup then runs the programs of the
 * units that cover its address only. A sequence at address 0 (a function
 * the linker dropped) is passed over. An inlined call's line in its caller
 * is in the debug information (dwarf_inline.c), whose file names are this
 * table's (gt_dwarf_line_file). */
#include "dwarf_line.h"

#include "dwarf_reader.h"
#include "elf_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gt_line_cu {
    size_t offset; /* of the unit in .debug_line */
    uint64_t lo, hi;
};

static const char *cstring(gt_dwarf_reader *r)
{
    const char *s = (const char *)r->p;
    const uint8_t *nul = memchr(r->p, 0, (size_t)(r->end - r->p));
    if (!nul) {
        r->bad = 1;
        return "";
    }
    r->p = nul + 1;
    return s;
}

static const char *str_at(const uint8_t *sec, size_t len, uint64_t off)
{
    if (!sec || off >= len || !memchr(sec + off, 0, len - off)) return "";
    return (const char *)sec + off;
}

#define NAMES_MAX 4096u /* directories or files of a unit that are kept */

typedef struct unit {
    int version, offset8;
    uint8_t min_len, line_range, opcode_base;
    int8_t line_base;
    const uint8_t *lengths; /* standard opcodes' operand counts */
    const char *dirs[NAMES_MAX];
    unsigned ndirs;
    const char *files[NAMES_MAX];
    unsigned file_dir[NAMES_MAX];
    unsigned nfiles;
    const uint8_t *program, *end;
} unit;

/* A v5 entry's path and directory index, by its format. */
static int v5_entry(gt_dwarf_reader *r, const gt_elf *e, const uint64_t *format, unsigned nformat,
                    const char **path, uint64_t *dir, int offset8)
{
    *path = "";
    *dir = 0;
    for (unsigned i = 0; i < nformat; i++) {
        uint64_t type = format[2 * i], form = format[2 * i + 1], v = 0;
        const char *s = NULL;
        switch (form) {
        case 0x08:
            s = cstring(r);
            break; /* string */
        case 0x1f:
            s = str_at(e->line_str, e->line_str_len, gt_dwarf_fixed(r, offset8 ? 8 : 4));
            break; /* line_strp */
        case 0x0e:
            s = str_at(e->str, e->str_len, gt_dwarf_fixed(r, offset8 ? 8 : 4));
            break; /* strp */
        case 0x0f:
            v = gt_dwarf_uleb(r);
            break; /* udata */
        case 0x0b:
            v = gt_dwarf_fixed(r, 1);
            break;
        case 0x05:
            v = gt_dwarf_fixed(r, 2);
            break;
        case 0x06:
            v = gt_dwarf_fixed(r, 4);
            break;
        case 0x07:
            v = gt_dwarf_fixed(r, 8);
            break;
        case 0x1e:
            gt_dwarf_fixed(r, 16);
            break; /* data16: an MD5 */
        case 0x09:
            gt_dwarf_skip(r, gt_dwarf_uleb(r));
            break; /* block */
        default:
            return -1;
        }
        if (type == 1 && s) *path = s;
        if (type == 2) *dir = v;
    }
    return r->bad ? -1 : 0;
}

static int v5_list(gt_dwarf_reader *r, const gt_elf *e, unit *u, int files)
{
    uint64_t format[2 * 16];
    unsigned nformat = (unsigned)gt_dwarf_fixed(r, 1);
    if (nformat > 16) return -1;
    for (unsigned i = 0; i < 2 * nformat; i++)
        format[i] = gt_dwarf_uleb(r);
    uint64_t count = gt_dwarf_uleb(r);
    for (uint64_t i = 0; i < count && !r->bad; i++) {
        const char *path;
        uint64_t dir;
        if (v5_entry(r, e, format, nformat, &path, &dir, u->offset8) != 0) return -1;
        if (files && u->nfiles < NAMES_MAX) {
            u->file_dir[u->nfiles] = (unsigned)dir;
            u->files[u->nfiles++] = path;
        } else if (!files && u->ndirs < NAMES_MAX) {
            u->dirs[u->ndirs++] = path;
        }
    }
    return r->bad ? -1 : 0;
}

/* The unit at `at`; its end goes into *next. */
static int read_unit(const gt_elf *e, size_t at, unit *u, size_t *next)
{
    gt_dwarf_reader r = {e->line + at, e->line + e->line_len, 0};
    uint64_t len = gt_dwarf_fixed(&r, 4);
    u->offset8 = len == 0xffffffffu;
    if (u->offset8) len = gt_dwarf_fixed(&r, 8);
    if (r.bad || len > (uint64_t)(r.end - r.p)) return -1;
    r.end = r.p + len;
    *next = (size_t)(r.end - e->line);
    u->version = (int)gt_dwarf_fixed(&r, 2);
    if (u->version < 2 || u->version > 5) return -1;
    if (u->version == 5) gt_dwarf_fixed(&r, 2); /* address and segment selector sizes */
    uint64_t hlen = gt_dwarf_fixed(&r, u->offset8 ? 8 : 4);
    if (hlen > (uint64_t)(r.end - r.p)) return -1;
    u->program = r.p + hlen;
    u->end = r.end;
    u->min_len = (uint8_t)gt_dwarf_fixed(&r, 1);
    if (u->version >= 4) gt_dwarf_fixed(&r, 1); /* operations per instruction */
    gt_dwarf_fixed(&r, 1);                      /* default is_stmt */
    u->line_base = (int8_t)gt_dwarf_fixed(&r, 1);
    u->line_range = (uint8_t)gt_dwarf_fixed(&r, 1);
    u->opcode_base = (uint8_t)gt_dwarf_fixed(&r, 1);
    if (!u->line_range || !u->opcode_base || r.end - r.p < u->opcode_base - 1) return -1;
    u->lengths = r.p;
    r.p += u->opcode_base - 1;
    u->ndirs = u->nfiles = 0;
    if (u->version == 5) return v5_list(&r, e, u, 0) || v5_list(&r, e, u, 1) ? -1 : 0;
    u->dirs[u->ndirs++] = ""; /* directory 0: the unit's own */
    for (const char *d = cstring(&r); d[0] && !r.bad; d = cstring(&r))
        if (u->ndirs < NAMES_MAX) u->dirs[u->ndirs++] = d;
    u->files[u->nfiles++] = ""; /* files count from 1 before version 5 */
    for (const char *f = cstring(&r); f[0] && !r.bad; f = cstring(&r)) {
        uint64_t dir = gt_dwarf_uleb(&r);
        gt_dwarf_uleb(&r), gt_dwarf_uleb(&r); /* time, size */
        if (u->nfiles < NAMES_MAX) {
            u->file_dir[u->nfiles] = (unsigned)dir;
            u->files[u->nfiles++] = f;
        }
    }
    return r.bad ? -1 : 0;
}

/* A row of the table, as the program emits it. */
typedef struct row {
    uint64_t addr;
    uint64_t file;
    int64_t line;
    int end_sequence;
} row;

/* Runs a unit's program; `emit` sees each row (and returns non-zero to
 * stop). */
static void run(const unit *u, int (*emit)(const row *rw, void *ctx), void *ctx)
{
    gt_dwarf_reader r = {u->program, u->end, 0};
    row rw = {0, 1, 1, 0};
    while (r.p < r.end && !r.bad) {
        uint8_t op = (uint8_t)gt_dwarf_fixed(&r, 1);
        if (op >= u->opcode_base) {
            unsigned adj = op - u->opcode_base;
            rw.addr += (uint64_t)(adj / u->line_range) * u->min_len;
            rw.line += u->line_base + (int)(adj % u->line_range);
            if (emit(&rw, ctx)) return;
            continue;
        }
        switch (op) {
        case 0: {
            uint64_t len = gt_dwarf_uleb(&r);
            const uint8_t *next = r.p + len;
            if (len == 0 || len > (uint64_t)(r.end - r.p)) return;
            uint8_t sub = (uint8_t)gt_dwarf_fixed(&r, 1);
            if (sub == 1) {
                rw.end_sequence = 1;
                if (emit(&rw, ctx)) return;
                rw = (row){0, 1, 1, 0};
            } else if (sub == 2) {
                rw.addr = gt_dwarf_fixed(&r, len - 1 >= 8 ? 8 : len - 1);
            }
            r.p = next;
            break;
        }
        case 1:
            if (emit(&rw, ctx)) return;
            break;
        case 2:
            rw.addr += gt_dwarf_uleb(&r) * u->min_len;
            break;
        case 3:
            rw.line += gt_dwarf_sleb(&r);
            break;
        case 4:
            rw.file = gt_dwarf_uleb(&r);
            break;
        case 8:
            rw.addr += (uint64_t)((255 - u->opcode_base) / u->line_range) * u->min_len;
            break;
        case 9:
            rw.addr += gt_dwarf_fixed(&r, 2);
            break;
        default:
            for (unsigned i = 0; i < u->lengths[op - 1]; i++)
                gt_dwarf_uleb(&r);
        }
    }
}

/* The range a unit covers. */
typedef struct span {
    uint64_t lo, hi, seq_start;
    int in_seq;
} span;

static int note_span(const row *rw, void *ctx)
{
    span *s = ctx;
    if (!s->in_seq) s->in_seq = 1, s->seq_start = rw->addr;
    if (rw->end_sequence) {
        s->in_seq = 0;
        if (s->seq_start && rw->addr > s->seq_start) {
            if (s->seq_start < s->lo) s->lo = s->seq_start;
            if (rw->addr > s->hi) s->hi = rw->addr;
        }
    }
    return 0;
}

static void build_index(gt_elf *e)
{
    e->cus_built = 1;
    if (!e->line || e->line_len > GT_DWARF_LINE_MAX_BYTES) return;
    size_t cap = 0;
    unit *u = malloc(sizeof *u);
    if (!u) return;
    for (size_t at = 0, next = 0; at < e->line_len; at = next) {
        if (read_unit(e, at, u, &next) != 0) {
            if (next <= at) break;
            continue;
        }
        span s = {UINT64_MAX, 0, 0, 0};
        run(u, note_span, &s);
        if (s.lo >= s.hi) continue;
        if (e->ncus == cap) {
            size_t grown_cap = cap ? cap * 2 : 64;
            gt_line_cu *grown = realloc(e->cus, grown_cap * sizeof *grown);
            if (!grown) break;
            e->cus = grown;
            cap = grown_cap;
        }
        e->cus[e->ncus++] = (gt_line_cu){at, s.lo, s.hi};
    }
    free(u);
}

typedef struct query {
    uint64_t addr;
    row prev;
    int have_prev, found;
    uint64_t seq_start;
    row hit;
} query;

static int find_row(const row *rw, void *ctx)
{
    query *q = ctx;
    if (!q->have_prev) q->seq_start = rw->addr;
    if (q->have_prev && q->seq_start && q->prev.addr <= q->addr && rw->addr > q->addr) {
        q->hit = q->prev;
        q->found = 1;
        return 1;
    }
    q->prev = *rw;
    q->have_prev = !rw->end_sequence;
    return 0;
}

/* File f of unit u's list, joined to its directory. */
static int path_of(const unit *u, uint64_t f, char *file, size_t cap)
{
    if (f >= u->nfiles) return -1;
    const char *name = u->files[f];
    const char *dir = u->file_dir[f] < u->ndirs ? u->dirs[u->file_dir[f]] : "";
    if (name[0] == '/' || !dir[0])
        snprintf(file, cap, "%s", name);
    else
        snprintf(file, cap, "%s/%s", dir, name);
    return 0;
}

int gt_dwarf_line_file(const gt_elf *e, uint64_t table, uint64_t f, char *file, size_t cap)
{
    if (!e->line || e->line_len > GT_DWARF_LINE_MAX_BYTES || table >= e->line_len) return -1;
    unit *u = malloc(sizeof *u);
    size_t next;
    int ok = u && read_unit(e, (size_t)table, u, &next) == 0 ? path_of(u, f, file, cap) : -1;
    free(u);
    return ok;
}

int gt_dwarf_line(gt_elf *e, uint64_t addr, char *file, size_t cap, int *line)
{
    if (!e->cus_built) build_index(e);
    unit *u = NULL;
    int ok = -1;
    for (size_t i = 0; i < e->ncus && ok != 0; i++) {
        if (addr < e->cus[i].lo || addr >= e->cus[i].hi) continue;
        size_t next;
        if (!u && !(u = malloc(sizeof *u))) return -1;
        if (read_unit(e, e->cus[i].offset, u, &next) != 0) continue;
        query q = {.addr = addr};
        run(u, find_row, &q);
        if (!q.found) continue;
        /* Before version 5 files count from 1; from 5, from 0. */
        if (q.hit.line <= 0 || path_of(u, q.hit.file, file, cap) != 0) continue;
        *line = (int)q.hit.line;
        ok = 0;
    }
    free(u);
    return ok;
}
