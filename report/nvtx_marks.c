#include "nvtx_marks.h"

#include <stdlib.h>
#include <string.h>

void gt_nvtx_marks_add(gt_nvtx_marks *m, const gt_event *ev)
{
    uint64_t key = (uint64_t)ev->u.nvtx.domain << 32 | ev->name;
    uint64_t t = ev->host_start;
    uint32_t i;
    if (!gt_idmap_get(&m->index, key, &i)) {
        if (m->n == m->capacity) {
            uint32_t cap = m->capacity ? 2 * m->capacity : 16;
            gt_nvtx_mark *grown = realloc(m->marks, cap * sizeof(*grown));
            if (!grown) {
                m->untracked++;
                return;
            }
            m->marks = grown;
            m->capacity = cap;
        }
        if (gt_idmap_set(&m->index, key, m->n) != 0) {
            m->untracked++;
            return;
        }
        i = m->n++;
        m->marks[i] =
            (gt_nvtx_mark){.domain = ev->u.nvtx.domain, .name = ev->name, .first = t, .last = t};
    }
    gt_nvtx_mark *k = &m->marks[i];
    k->count++;
    /* Threads' records interleave in any order: the earliest and latest. */
    if (t < k->first) k->first = t;
    if (t > k->last) k->last = t;
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
