#include "counter_table.h"
#include "event.h"
#include "idmap.h"
#include "nvtx_numbers.h"
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

static gt_counter_row *row_of(gt_counter_table *t, uint32_t domain, uint32_t name)
{
    uint64_t key = (uint64_t)domain << 32 | name;
    uint32_t i;
    if (gt_idmap_get(&t->index, key, &i)) return &t->rows[i];
    if (t->n >= GT_COUNTERS_MAX) return NULL;
    if (t->n == t->capacity) {
        uint32_t cap = t->capacity ? 2 * t->capacity : 8;
        gt_counter_row *grown = realloc(t->rows, cap * sizeof(*grown));
        if (!grown) return NULL;
        t->rows = grown;
        t->capacity = cap;
    }
    if (gt_idmap_set(&t->index, key, t->n) != 0) return NULL;
    gt_counter_row *r = &t->rows[t->n++];
    memset(r, 0, sizeof(*r));
    r->domain = domain;
    r->name = name;
    return r;
}

void gt_counter_table_add(gt_counter_table *t, const gt_event *ev)
{
    gt_counter_row *r = row_of(t, ev->u.counter.domain, ev->name);
    if (!r) {
        t->untracked++;
        return;
    }
    double v = gt_number_value(ev->u.counter.kind, ev->u.counter.value);
    uint8_t kind = ev->u.counter.kind;
    if (!r->unit) r->unit = ev->u.counter.unit;
    if (r->count == 0) {
        r->kind = kind;
        r->min = r->max = r->last = v;
        r->first_ns = r->last_ns = ev->host_start;
    } else {
        if (r->kind != kind) r->kind = GT_NUM_MIXED;
        if (v < r->min) r->min = v;
        if (v > r->max) r->max = v;
        if (ev->host_start >= r->last_ns) {
            r->last = v;
            r->last_ns = ev->host_start;
        }
        if (ev->host_start < r->first_ns) r->first_ns = ev->host_start;
    }
    r->count++;
}

int gt_counter_table_fold(gt_counter_table *t, const gt_counter_row *in)
{
    gt_counter_row *r = row_of(t, in->domain, in->name);
    if (!r) return -1;
    if (r->count == 0) {
        *r = *in;
        return 0;
    }
    if (r->kind != in->kind) r->kind = GT_NUM_MIXED;
    if (!r->unit) r->unit = in->unit;
    if (in->min < r->min) r->min = in->min;
    if (in->max > r->max) r->max = in->max;
    if (in->last_ns >= r->last_ns) {
        r->last = in->last;
        r->last_ns = in->last_ns;
    }
    if (in->first_ns < r->first_ns) r->first_ns = in->first_ns;
    r->count += in->count;
    return 0;
}

typedef struct named {
    const gt_counter_row *row;
    const char *domain, *name;
} named;

static int by_name(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->domain, y->domain);
    return c ? c : strcmp(x->name, y->name);
}

const gt_counter_row **gt_counter_table_sorted(const gt_counter_table *t,
                                               const struct gt_strtab *names, size_t *n)
{
    *n = 0;
    if (t->n == 0) return NULL;
    named *tmp = malloc(t->n * sizeof(*tmp));
    const gt_counter_row **out = malloc(t->n * sizeof(*out));
    if (!tmp || !out) {
        free(tmp);
        free(out);
        return NULL;
    }
    for (uint32_t i = 0; i < t->n; i++)
        tmp[i] = (named){&t->rows[i], gt_strtab_get(names, t->rows[i].domain),
                         gt_strtab_get(names, t->rows[i].name)};
    qsort(tmp, t->n, sizeof(*tmp), by_name);
    for (uint32_t i = 0; i < t->n; i++)
        out[i] = tmp[i].row;
    free(tmp);
    *n = t->n;
    return out;
}

void gt_counter_table_free(gt_counter_table *t)
{
    free(t->rows);
    gt_idmap_free(&t->index);
    memset(t, 0, sizeof(*t));
}
