/* How long ranges were open, overlaps counted once (nvtx.h): per thread,
 * the time it had any range open, and per thread and row, the time a
 * range of that row was. A row's share of the former can then never pass
 * 100%, however its ranges nest or overlap (recursion, several domains,
 * start/end ranges that outlive the push range they began in).
 *
 * An entry counts the ranges open under its key and remembers when the
 * first of them opened and the latest close so far; when the count falls
 * to 0 the stretch is over. A thread's opens come in its own order, and
 * its closes come where its records reach the close time (a start/end
 * range ended elsewhere is settled there), so stretches of one key never
 * overlap, and a row's stretches lie within its thread's. */
#include "idmap.h"
#include "nvtx_table.h"
#include "table.h"

#include <stdlib.h>

#define THREAD_KEY UINT32_MAX /* the row part of a thread's own key */

static uint64_t key_of(uint32_t tid, uint32_t row)
{
    return (uint64_t)tid << 32 | row;
}

static void cover_open(gt_nvtx *n, uint64_t key, uint64_t t)
{
    uint32_t i;
    if (!gt_idmap_get(&n->cover_index, key, &i)) {
        if (n->free_cover) {
            i = n->free_cover - 1;
            n->free_cover = n->covers[i].next_free;
        } else {
            if (n->ncovers == n->covers_capacity) {
                uint32_t cap = n->covers_capacity ? 2 * n->covers_capacity : 16;
                gt_nvtx_cover *grown = realloc(n->covers, cap * sizeof(*grown));
                if (!grown) return; /* then the close finds nothing: no time, never too much */
                n->covers = grown;
                n->covers_capacity = cap;
            }
            i = n->ncovers++;
        }
        if (gt_idmap_set(&n->cover_index, key, i) != 0) {
            n->covers[i].next_free = n->free_cover;
            n->free_cover = i + 1;
            return;
        }
        n->covers[i] = (gt_nvtx_cover){.since = t, .until = t};
    }
    n->covers[i].open++;
}

/* The stretch that ends with this close, or 0 while it goes on. */
static uint64_t cover_close(gt_nvtx *n, uint64_t key, uint64_t t)
{
    uint32_t i;
    if (!gt_idmap_get(&n->cover_index, key, &i)) return 0;
    gt_nvtx_cover *c = &n->covers[i];
    if (t > c->until) c->until = t;
    if (--c->open) return 0;
    uint64_t span = c->until - c->since;
    gt_idmap_remove(&n->cover_index, key);
    c->next_free = n->free_cover;
    n->free_cover = i + 1;
    return span;
}

void gt_nvtx_cover_open(gt_nvtx *n, uint32_t tid, int32_t row, uint64_t t)
{
    cover_open(n, key_of(tid, THREAD_KEY), t);
    cover_open(n, key_of(tid, (uint32_t)row), t);
}

void gt_nvtx_cover_close(gt_nvtx *n, gt_table *table, uint32_t tid, int32_t row, uint64_t t)
{
    table->rows[row].open_ns += cover_close(n, key_of(tid, (uint32_t)row), t);
    n->open_ns += cover_close(n, key_of(tid, THREAD_KEY), t);
}

void gt_nvtx_cover_free(gt_nvtx *n)
{
    free(n->covers);
    gt_idmap_free(&n->cover_index);
}
