/* Call sites: rows by (kind, name, site), their totals, estimates. */
#include "callsite_table.h"

#include "aggregate.h"
#include "event.h"
#include "idmap.h"
#include "strtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const language_names[GT_SITE_LANGUAGE_COUNT] = {"native", "python"};

const char *gt_site_language_name(enum gt_site_language l)
{
    return (unsigned)l < GT_SITE_LANGUAGE_COUNT ? language_names[l] : "native";
}

int gt_site_language_of(const char *name)
{
    for (int i = 0; i < GT_SITE_LANGUAGE_COUNT; i++)
        if (!strcmp(name, language_names[i])) return i;
    return -1;
}

size_t gt_site_label(const gt_strtab *names, const gt_site *s, char *buf, size_t cap)
{
    const char *file = gt_strtab_get(names, s->file), *fn = gt_strtab_get(names, s->function);
    const char *via = gt_strtab_get(names, s->via), *module = gt_strtab_get(names, s->module);
    size_t len = 0;
    int n;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        n = snprintf(buf + len, len < cap ? cap - len : 0, __VA_ARGS__);                           \
        if (n > 0) len += (size_t)n;                                                               \
    } while (0)
    if (cap) buf[0] = '\0';
    if (file[0]) PUT("%s:%d", file, (int)s->line);
    if (fn[0]) PUT("%s%s", file[0] ? " in " : "", fn);
    if (via[0]) PUT("%svia %s", len ? " " : "", via);
    if (module[0]) PUT("%s[%s]", len ? " " : "", module);
    if (!len) PUT("(unknown)");
#undef PUT
    return len < cap ? len : (cap ? cap - 1 : 0);
}

/* A path's last component; a package's __init__.py keeps its directory. */
static const char *base_name(const char *path)
{
    const char *base = strrchr(path, '/');
    if (!base) return path;
    if (strcmp(base, "/__init__.py") != 0) return base + 1;
    const char *dir = base;
    while (dir > path && dir[-1] != '/')
        dir--;
    return dir;
}

size_t gt_site_short(const gt_strtab *names, const gt_site *s, char *buf, size_t cap)
{
    const char *file = gt_strtab_get(names, s->file), *fn = gt_strtab_get(names, s->function);
    const char *via = gt_strtab_get(names, s->via), *module = gt_strtab_get(names, s->module);
    int n;
    if (file[0])
        n = snprintf(buf, cap, "%s:%d%s%s%s%s", base_name(file), (int)s->line, fn[0] ? " in " : "",
                     fn, via[0] ? " via " : "", via);
    else if (fn[0])
        n = snprintf(buf, cap, "%s%s%s", fn, module[0] ? " in " : "", base_name(module));
    else
        n = snprintf(buf, cap, "%s", module[0] ? base_name(module) : "(unknown)");
    if (n < 0) n = 0;
    return (size_t)n < cap ? (size_t)n : (cap ? cap - 1 : 0);
}

static const char *const kind_names[] = {
    [GT_EV_KERNEL] = "kernel",
    [GT_EV_MEMCPY] = "memcpy",
    [GT_EV_MEMSET] = "memset",
    [GT_EV_ALLOC] = "alloc",
};

const char *gt_site_kind_name(uint8_t kind)
{
    if (kind == GT_EV_GRAPH) kind = GT_EV_KERNEL;
    return kind < sizeof kind_names / sizeof kind_names[0] && kind_names[kind] ? kind_names[kind]
                                                                               : "";
}

int gt_site_kind_of(const char *name)
{
    for (unsigned k = 0; k < sizeof kind_names / sizeof kind_names[0]; k++)
        if (kind_names[k] && !strcmp(kind_names[k], name)) return (int)k;
    return -1;
}

size_t gt_site_row_name(const gt_strtab *names, const gt_site_row *row, char *buf, size_t cap)
{
    const char *kernel = row->a ? gt_strtab_get(names, row->a) : "(unnamed kernel)";
    switch (row->kind) {
    case GT_EV_KERNEL:
        snprintf(buf, cap, "%s", row->b ? GT_GRAPH_LAUNCH_NAME : kernel);
        break;
    case GT_EV_MEMCPY:
        gt_copy_label_format(buf, cap, row->a, row->b & 0xffu, (row->b >> 8) != 0);
        break;
    case GT_EV_MEMSET:
        snprintf(buf, cap, "memset %s", row->a ? "async" : "sync");
        break;
    default:
        snprintf(buf, cap, "%s", gt_mem_kind_name(row->a));
    }
    size_t len = strlen(buf);
    return len;
}

int32_t gt_callsites_site_of(const gt_site_table *cs, uint32_t label)
{
    uint32_t i;
    return gt_idmap_get(&cs->by_label, label, &i) ? (int32_t)i : -1;
}

int32_t gt_callsites_add_site(gt_site_table *cs, uint32_t label, const gt_site *s)
{
    int32_t known = gt_callsites_site_of(cs, label);
    if (known >= 0) return known;
    if (cs->nsites == cs->sites_cap) {
        uint32_t cap = cs->sites_cap ? cs->sites_cap * 2 : 16;
        gt_site *sites = realloc(cs->sites, cap * sizeof *sites);
        if (sites) cs->sites = sites;
        uint32_t *labels = realloc(cs->labels, cap * sizeof *labels);
        if (labels) cs->labels = labels;
        if (!sites || !labels) return -1;
        cs->sites_cap = cap;
    }
    if (gt_idmap_set(&cs->by_label, label, cs->nsites) != 0) return -1;
    cs->sites[cs->nsites] = *s;
    cs->labels[cs->nsites] = label;
    return (int32_t)cs->nsites++;
}

static uint32_t hash_key(uint8_t kind, uint32_t a, uint32_t b, uint32_t site)
{
    uint64_t h = ((uint64_t)kind << 56) ^ ((uint64_t)a << 24) ^ b;
    h = (h ^ (uint64_t)site * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32);
}

static int same_key(const gt_site_row *r, uint8_t kind, uint32_t a, uint32_t b, uint32_t site)
{
    return r->kind == kind && r->a == a && r->b == b && r->site == site;
}

static int reindex(gt_site_table *cs, uint32_t size)
{
    uint32_t *index = calloc(size, sizeof *index);
    if (!index) return -1;
    for (uint32_t r = 0; r < cs->nrows; r++) {
        const gt_site_row *row = &cs->rows[r];
        uint32_t i = hash_key(row->kind, row->a, row->b, row->site) & (size - 1);
        while (index[i])
            i = (i + 1) & (size - 1);
        index[i] = r + 1;
    }
    free(cs->index);
    cs->index = index;
    cs->index_size = size;
    return 0;
}

gt_site_row *gt_callsites_row(gt_site_table *cs, uint8_t kind, uint32_t a, uint32_t b,
                              uint32_t site)
{
    if (cs->index_size) {
        uint32_t i = hash_key(kind, a, b, site) & (cs->index_size - 1);
        for (; cs->index[i]; i = (i + 1) & (cs->index_size - 1))
            if (same_key(&cs->rows[cs->index[i] - 1], kind, a, b, site))
                return &cs->rows[cs->index[i] - 1];
    }
    if ((cs->nrows + 1) * 2 > cs->index_size &&
        reindex(cs, cs->index_size ? cs->index_size * 2 : 64) != 0)
        return NULL;
    if (cs->nrows == cs->rows_cap) {
        uint32_t cap = cs->rows_cap ? cs->rows_cap * 2 : 32;
        gt_site_row *rows = realloc(cs->rows, cap * sizeof *rows);
        if (!rows) return NULL;
        cs->rows = rows;
        cs->rows_cap = cap;
    }
    gt_site_row *row = &cs->rows[cs->nrows];
    memset(row, 0, sizeof *row);
    row->kind = kind, row->a = a, row->b = b, row->site = site;
    uint32_t i = hash_key(kind, a, b, site) & (cs->index_size - 1);
    while (cs->index[i])
        i = (i + 1) & (cs->index_size - 1);
    cs->index[i] = ++cs->nrows;
    cs->settled = false;
    return row;
}

/* The name of a record, as row keys have it. */
static void name_of(const gt_event *ev, uint8_t *kind, uint32_t *a, uint32_t *b)
{
    *kind = ev->kind == GT_EV_GRAPH ? GT_EV_KERNEL : ev->kind;
    *a = *b = 0;
    switch (ev->kind) {
    case GT_EV_KERNEL:
        *a = ev->name;
        break;
    case GT_EV_GRAPH:
        *b = 1;
        break;
    case GT_EV_MEMCPY:
        *a = ev->u.copy.dir;
        *b = ev->u.copy.host_mem | (uint32_t)((ev->flags & GT_EVF_ASYNC) != 0) << 8;
        break;
    case GT_EV_MEMSET:
        *a = (ev->flags & GT_EVF_ASYNC) != 0;
        break;
    case GT_EV_ALLOC:
        *a = ev->u.mem.mem_kind;
        break;
    default:
        break;
    }
}

static void count(gt_site_row *r, bool sampled, uint64_t gpu_ns, uint64_t bytes)
{
    if (sampled) {
        r->sampled_calls++;
        r->sampled_gpu_ns += gpu_ns;
        r->sampled_bytes += bytes;
    } else {
        r->exact_calls++;
        r->exact_gpu_ns += gpu_ns;
        r->exact_bytes += bytes;
    }
}

void gt_callsites_add_work(gt_site_table *cs, const gt_event *ev, uint64_t gpu_ns)
{
    if (!ev->site) return;
    uint8_t kind;
    uint32_t a, b;
    name_of(ev, &kind, &a, &b);
    cs->settled = false;
    if (ev->site == GT_SITE_SKIPPED) {
        gt_site_row *total = gt_callsites_row(cs, kind, a, b, GT_SITE_TOTAL);
        if (!total) return;
        total->skipped_calls++;
        total->skipped_gpu_ns += gpu_ns;
        total->skipped_bytes += ev->bytes;
        return;
    }
    int32_t site = gt_callsites_site_of(cs, GT_SITE_ID(ev->site));
    gt_site_row *row = site < 0 ? NULL : gt_callsites_row(cs, kind, a, b, (uint32_t)site);
    if (!row) return;
    size_t at = (size_t)(row - cs->rows); /* a new totals row may move the rows */
    gt_site_row *total = gt_callsites_row(cs, kind, a, b, GT_SITE_TOTAL);
    if (!total) return;
    bool sampled = (ev->site & GT_SITE_SAMPLED) != 0;
    count(&cs->rows[at], sampled, gpu_ns, ev->bytes);
    count(total, sampled, gpu_ns, ev->bytes);
}

uint32_t gt_callsites_alloc(gt_site_table *cs, const gt_event *ev)
{
    if (!ev->site || ev->site == GT_SITE_SKIPPED) return 0;
    int32_t site = gt_callsites_site_of(cs, GT_SITE_ID(ev->site));
    if (site < 0) return 0;
    uint8_t kind;
    uint32_t a, b;
    name_of(ev, &kind, &a, &b);
    gt_site_row *row = gt_callsites_row(cs, kind, a, b, (uint32_t)site);
    if (!row) return 0;
    row->exact_calls++;
    row->exact_bytes += ev->bytes;
    row->held_bytes += ev->bytes;
    row->held_allocs++;
    if (row->held_bytes > row->peak_bytes) row->peak_bytes = row->held_bytes;
    cs->settled = false;
    return (uint32_t)(row - cs->rows) + 1;
}

void gt_callsites_release(gt_site_table *cs, uint32_t ref, uint64_t bytes)
{
    if (!ref || ref > cs->nrows || cs->loaded) return;
    gt_site_row *row = &cs->rows[ref - 1];
    row->held_bytes -= bytes < row->held_bytes ? bytes : row->held_bytes;
    if (row->held_allocs) row->held_allocs--;
    cs->settled = false;
}

const gt_site_row *gt_callsites_total(const gt_site_table *cs, const gt_site_row *row)
{
    if (!cs->index_size) return NULL;
    uint32_t i = hash_key(row->kind, row->a, row->b, GT_SITE_TOTAL) & (cs->index_size - 1);
    for (; cs->index[i]; i = (i + 1) & (cs->index_size - 1))
        if (same_key(&cs->rows[cs->index[i] - 1], row->kind, row->a, row->b, GT_SITE_TOTAL))
            return &cs->rows[cs->index[i] - 1];
    return NULL;
}

/* x * num / den without overflow for the sizes seen here. */
static uint64_t scaled(uint64_t x, uint64_t num, uint64_t den)
{
    return den ? (uint64_t)((long double)x * (long double)num / (long double)den + 0.5L) : 0;
}

int gt_callsites_add_shown(gt_site_table *cs, const gt_site_row *from, uint32_t site)
{
    /* The name's totals row first: making it may move the rows. */
    gt_site_row *total = gt_callsites_row(cs, from->kind, from->a, from->b, GT_SITE_TOTAL);
    if (!total) return -1;
    size_t at = (size_t)(total - cs->rows);
    gt_site_row *row = gt_callsites_row(cs, from->kind, from->a, from->b, site);
    if (!row) return -1;
    total = &cs->rows[at];
    total->calls += from->calls;
    total->gpu_ns += from->gpu_ns;
    total->bytes += from->bytes;
    row->calls += from->calls;
    row->gpu_ns += from->gpu_ns;
    row->bytes += from->bytes;
    row->samples += from->samples;
    row->held_bytes += from->held_bytes;
    row->held_allocs += from->held_allocs;
    row->peak_bytes += from->peak_bytes;
    cs->loaded = true;
    return 0;
}

int gt_callsites_merge(gt_site_table *to, const gt_site_table *from)
{
    for (uint32_t r = 0; r < from->nrows; r++) {
        const gt_site_row *row = &from->rows[r];
        if (row->site == GT_SITE_TOTAL || row->site >= from->nsites) continue;
        int32_t site = gt_callsites_add_site(to, from->labels[row->site], &from->sites[row->site]);
        if (site < 0 || gt_callsites_add_shown(to, row, (uint32_t)site) != 0) return -1;
    }
    return 0;
}

void gt_callsites_settle(gt_site_table *cs)
{
    if (cs->settled || cs->loaded) return;
    for (uint32_t r = 0; r < cs->nrows; r++) {
        gt_site_row *row = &cs->rows[r];
        const gt_site_row *t = row->site == GT_SITE_TOTAL ? row : gt_callsites_total(cs, row);
        /* The sampled calls of the name stand for themselves and the
         * skipped ones; without a sample, the skipped stay unattributed. */
        uint64_t num = t ? t->sampled_calls + t->skipped_calls : 0;
        uint64_t den = t ? t->sampled_calls : 0;
        if (row->site == GT_SITE_TOTAL) {
            row->calls = row->exact_calls + row->sampled_calls + row->skipped_calls;
            row->gpu_ns = row->exact_gpu_ns + row->sampled_gpu_ns + row->skipped_gpu_ns;
            row->bytes = row->exact_bytes + row->sampled_bytes + row->skipped_bytes;
        } else {
            row->calls = row->exact_calls + scaled(row->sampled_calls, num, den);
            row->gpu_ns = row->exact_gpu_ns + scaled(row->sampled_gpu_ns, num, den);
            row->bytes = row->exact_bytes + scaled(row->sampled_bytes, num, den);
        }
        row->samples = row->sampled_calls;
    }
    cs->settled = true;
}

/* Sorting: a row's weight is its GPU time, an allocation's its bytes. */
static uint64_t weight(const gt_site_row *r)
{
    return r->kind == GT_EV_ALLOC ? r->bytes : r->gpu_ns ? r->gpu_ns : r->calls;
}

static int kind_rank(uint8_t kind)
{
    switch (kind) {
    case GT_EV_KERNEL:
        return 0;
    case GT_EV_MEMCPY:
        return 1;
    case GT_EV_MEMSET:
        return 2;
    default:
        return 3;
    }
}

/* A row with what orders it, worked out before the sort. */
typedef struct sort_item {
    const gt_site_row *row;
    int rank;
    uint64_t name_weight, weight;
    const char *name; /* kernels: the name; else NULL (ordered by key) */
    const char *label;
} sort_item;

static int cmp_u64_desc(uint64_t x, uint64_t y)
{
    return (x < y) - (x > y);
}

static int by_report_order(const void *pa, const void *pb)
{
    const sort_item *x = pa, *y = pb;
    int c = x->rank - y->rank;
    if (c || (c = cmp_u64_desc(x->name_weight, y->name_weight))) return c;
    if (x->row->a != y->row->a || x->row->b != y->row->b) {
        if (x->name && y->name && (c = strcmp(x->name, y->name))) return c;
        if (x->row->a != y->row->a) return x->row->a < y->row->a ? -1 : 1;
        return x->row->b < y->row->b ? -1 : 1;
    }
    if ((c = cmp_u64_desc(x->weight, y->weight))) return c;
    return strcmp(x->label, y->label);
}

size_t gt_callsites_listed(const gt_site_table *cs)
{
    size_t count = 0;
    for (uint32_t r = 0; r < cs->nrows; r++)
        count += cs->rows[r].site != GT_SITE_TOTAL && cs->rows[r].site < cs->nsites;
    return count;
}

const gt_site_row **gt_callsites_sorted(const gt_site_table *cs, const gt_strtab *names, size_t *n)
{
    *n = 0;
    size_t count = gt_callsites_listed(cs);
    if (!count) return NULL;
    sort_item *items = malloc(count * sizeof *items);
    const gt_site_row **out = malloc(count * sizeof *out);
    if (!items || !out) {
        free(items);
        free(out);
        return NULL;
    }
    size_t k = 0;
    for (uint32_t r = 0; r < cs->nrows; r++) {
        const gt_site_row *row = &cs->rows[r];
        if (row->site == GT_SITE_TOTAL || row->site >= cs->nsites) continue;
        const gt_site_row *t = gt_callsites_total(cs, row);
        /* Allocations are one list by bytes, whatever their kind. */
        items[k++] = (sort_item){row,
                                 kind_rank(row->kind),
                                 t && row->kind != GT_EV_ALLOC ? weight(t) : weight(row),
                                 weight(row),
                                 row->kind == GT_EV_KERNEL ? gt_strtab_get(names, row->a) : NULL,
                                 gt_strtab_get(names, cs->labels[row->site])};
    }
    qsort(items, k, sizeof *items, by_report_order);
    for (size_t i = 0; i < k; i++)
        out[i] = items[i].row;
    free(items);
    *n = k;
    return out;
}

void gt_callsites_free(gt_site_table *cs)
{
    free(cs->sites);
    free(cs->labels);
    free(cs->rows);
    free(cs->index);
    gt_idmap_free(&cs->by_label);
    memset(cs, 0, sizeof *cs);
}
