#include "event.h"
#include "idmap.h"
#include "nvtx_marks.h"

#include <stdlib.h>
#include <string.h>

/* The row of (domain, name), made when new; NULL for want of memory. */
static gt_nvtx_mark *row_of(gt_nvtx_marks *m, uint32_t domain, uint32_t name, uint64_t t)
{
    uint64_t key = (uint64_t)domain << 32 | name;
    uint32_t i;
    if (gt_idmap_get(&m->index, key, &i)) return &m->marks[i];
    if (m->n == m->capacity) {
        uint32_t cap = m->capacity ? 2 * m->capacity : 16;
        gt_nvtx_mark *grown = realloc(m->marks, cap * sizeof(*grown));
        if (!grown) return NULL;
        m->marks = grown;
        m->capacity = cap;
    }
    if (gt_idmap_set(&m->index, key, m->n) != 0) return NULL;
    m->marks[m->n] = (gt_nvtx_mark){.domain = domain, .name = name, .first = t, .last = t};
    return &m->marks[m->n++];
}

/* Threads' records interleave in any order, and merged reports come from
 * several processes: the earliest first and the latest last. */
static void fold(gt_nvtx_mark *k, uint64_t count, uint64_t first, uint64_t last)
{
    k->count += count;
    if (first < k->first) k->first = first;
    if (last > k->last) k->last = last;
}

int32_t gt_nvtx_marks_add(gt_nvtx_marks *m, const gt_event *ev)
{
    gt_nvtx_mark *k = row_of(m, ev->u.nvtx.domain, ev->name, ev->host_start);
    if (!k) {
        m->untracked++;
        return -1;
    }
    fold(k, 1, ev->host_start, ev->host_start);
    gt_number_add(&k->payload, ev->u.nvtx.payload_kind, ev->u.nvtx.payload);
    return (int32_t)(k - m->marks);
}

int gt_nvtx_marks_fold(gt_nvtx_marks *m, const gt_nvtx_mark *in)
{
    gt_nvtx_mark *k = row_of(m, in->domain, in->name, in->first);
    if (!k) return -1;
    fold(k, in->count, in->first, in->last);
    gt_number_merge(&k->payload, &in->payload);
    return 0;
}

const gt_nvtx_mark *gt_nvtx_marks_find(const gt_nvtx_marks *m, uint32_t domain, uint32_t name)
{
    uint32_t i;
    return gt_idmap_get(&m->index, (uint64_t)domain << 32 | name, &i) ? &m->marks[i] : NULL;
}

static int by_count(const void *a, const void *b)
{
    const gt_nvtx_mark *x = *(const gt_nvtx_mark *const *)a, *y = *(const gt_nvtx_mark *const *)b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x < y ? -1 : x > y;
}

const gt_nvtx_mark **gt_nvtx_marks_sorted(const gt_nvtx_marks *m, size_t *n)
{
    *n = 0;
    if (!m->n) return NULL;
    const gt_nvtx_mark **sorted = malloc(m->n * sizeof(*sorted));
    if (!sorted) return NULL;
    for (uint32_t i = 0; i < m->n; i++)
        sorted[i] = &m->marks[i];
    qsort(sorted, m->n, sizeof(*sorted), by_count);
    *n = m->n;
    return sorted;
}

void gt_nvtx_marks_free(gt_nvtx_marks *m)
{
    free(m->marks);
    gt_idmap_free(&m->index);
    memset(m, 0, sizeof(*m));
}
