#include "event.h"
#include "heap_table.h"
#include "idmap.h"

#include <stdlib.h>
#include <string.h>

static gt_heap_row *new_row(gt_heap_table *t, uint64_t address)
{
    if (t->n >= GT_HEAPS_MAX) return NULL;
    if (t->n == t->capacity) {
        uint32_t cap = t->capacity ? 2 * t->capacity : 8;
        gt_heap_row *grown = realloc(t->rows, cap * sizeof(*grown));
        if (!grown) return NULL;
        t->rows = grown;
        t->capacity = cap;
    }
    if (gt_idmap_set(&t->index, address, t->n) != 0) return NULL;
    gt_heap_row *r = &t->rows[t->n++];
    memset(r, 0, sizeof(*r));
    r->address = address;
    return r;
}

static gt_heap_row *row_of(gt_heap_table *t, uint64_t address, bool create)
{
    uint32_t i;
    if (gt_idmap_get(&t->index, address, &i)) return &t->rows[i];
    return create ? new_row(t, address) : NULL;
}

static void peaks(gt_heap_row *r)
{
    if (r->regions > r->regions_peak) r->regions_peak = r->regions;
    if (r->region_bytes > r->region_bytes_peak) r->region_bytes_peak = r->region_bytes;
}

static void drop_region(gt_heap_table *t, uint32_t slot)
{
    gt_heap_region *g = &t->regions[slot];
    gt_heap_row *r = &t->rows[g->heap];
    r->regions--;
    r->region_bytes -= g->bytes;
    gt_idmap_remove(&t->region_index, g->address);
    g->next_free = t->free_slot;
    t->free_slot = slot + 1;
    t->in_use--;
}

/* Every region of heap row h goes (the heap is reset or unregistered). A
 * walk over the slots: heaps are reset and unregistered rarely. */
static void drop_regions_of(gt_heap_table *t, uint32_t h)
{
    for (uint32_t s = 0; s < t->nslots && t->rows[h].regions; s++) {
        gt_heap_region *g = &t->regions[s];
        uint32_t check;
        if (g->heap == h && gt_idmap_get(&t->region_index, g->address, &check) && check == s)
            drop_region(t, s);
    }
}

static int32_t new_slot(gt_heap_table *t)
{
    if (t->free_slot) {
        uint32_t s = t->free_slot - 1;
        t->free_slot = t->regions[s].next_free;
        return (int32_t)s;
    }
    if (t->nslots == t->slots_capacity) {
        uint32_t cap = t->slots_capacity ? 2 * t->slots_capacity : 64;
        gt_heap_region *grown = realloc(t->regions, cap * sizeof(*grown));
        if (!grown) return -1;
        t->regions = grown;
        t->slots_capacity = cap;
    }
    return (int32_t)t->nslots++;
}

static void add_region(gt_heap_table *t, const gt_event *ev, bool counted)
{
    uint32_t slot;
    if (gt_idmap_get(&t->region_index, ev->u.heap.region, &slot)) drop_region(t, slot);
    gt_heap_row *r = row_of(t, ev->u.heap.heap, true);
    int32_t s = r && t->in_use < GT_HEAP_REGIONS_MAX ? new_slot(t) : -1;
    if (s < 0 || gt_idmap_set(&t->region_index, ev->u.heap.region, (uint32_t)s) != 0) {
        if (s >= 0) {
            t->regions[s].next_free = t->free_slot;
            t->free_slot = (uint32_t)s + 1;
        }
        t->untracked++;
        return;
    }
    t->regions[s] = (gt_heap_region){ev->u.heap.region, ev->bytes, (uint32_t)(r - t->rows), 0};
    t->in_use++;
    r->regions++;
    r->region_bytes += ev->bytes;
    if (counted) {
        r->regions_added++;
        peaks(r);
    }
}

static void resize_region(gt_heap_table *t, const gt_event *ev, bool counted)
{
    uint32_t slot;
    if (!gt_idmap_get(&t->region_index, ev->u.heap.region, &slot)) return;
    gt_heap_region *g = &t->regions[slot];
    gt_heap_row *r = &t->rows[g->heap];
    r->region_bytes = r->region_bytes - g->bytes + ev->bytes;
    g->bytes = ev->bytes;
    if (counted) peaks(r);
}

void gt_heap_table_add(gt_heap_table *t, const gt_event *ev)
{
    bool counted = !(ev->flags & GT_EVF_UNCAPTURED);
    uint32_t slot;
    gt_heap_row *r;
    switch (ev->u.heap.op) {
    case GT_HEAP_REGISTER:
        r = row_of(t, ev->u.heap.heap, true);
        if (!r) {
            t->untracked++;
            return;
        }
        if (r->live) drop_regions_of(t, (uint32_t)(r - t->rows));
        r->domain = ev->u.heap.domain;
        if (ev->name) r->name = ev->name;
        r->bytes = ev->bytes;
        r->registrations += counted;
        r->live = true;
        break;
    case GT_HEAP_UNREGISTER:
    case GT_HEAP_RESET:
        r = row_of(t, ev->u.heap.heap, false);
        if (!r) return;
        drop_regions_of(t, (uint32_t)(r - t->rows));
        if (ev->u.heap.op == GT_HEAP_UNREGISTER) r->live = false;
        break;
    case GT_HEAP_REGION_ADD:
        add_region(t, ev, counted);
        break;
    case GT_HEAP_REGION_RESIZE:
        resize_region(t, ev, counted);
        break;
    case GT_HEAP_REGION_REMOVE:
        if (gt_idmap_get(&t->region_index, ev->u.heap.region, &slot)) drop_region(t, slot);
        break;
    default:
        break;
    }
}

int gt_heap_table_fold(gt_heap_table *t, const gt_heap_row *in)
{
    /* Rows read back are keyed by their domain and name (the same pool in
     * several runs is one row, wherever its memory was), unnamed ones by
     * their address. */
    uint64_t key = in->name ? 1ull << 63 | (uint64_t)in->domain << 32 | in->name : in->address;
    gt_heap_row *r = row_of(t, key, true);
    if (!r) return -1;
    uint64_t address = r->registrations || r->regions_added ? r->address : in->address;
    r->domain = in->domain;
    r->name = in->name;
    r->address = address;
    if (in->bytes > r->bytes) r->bytes = in->bytes;
    r->registrations += in->registrations;
    r->regions += in->regions;
    r->region_bytes += in->region_bytes;
    /* Summed, as the memory table sums the devices' peaks of merged runs. */
    r->regions_peak += in->regions_peak;
    r->region_bytes_peak += in->region_bytes_peak;
    r->regions_added += in->regions_added;
    r->live = r->live || in->live;
    return 0;
}

static int by_peak(const void *a, const void *b)
{
    const gt_heap_row *x = *(const gt_heap_row *const *)a;
    const gt_heap_row *y = *(const gt_heap_row *const *)b;
    if (x->region_bytes_peak != y->region_bytes_peak)
        return x->region_bytes_peak > y->region_bytes_peak ? -1 : 1;
    return (x->address > y->address) - (x->address < y->address);
}

const gt_heap_row **gt_heap_table_sorted(const gt_heap_table *t, size_t *n)
{
    *n = 0;
    if (t->n == 0) return NULL;
    const gt_heap_row **out = malloc(t->n * sizeof(*out));
    if (!out) return NULL;
    for (uint32_t i = 0; i < t->n; i++)
        out[i] = &t->rows[i];
    qsort(out, t->n, sizeof(*out), by_peak);
    *n = t->n;
    return out;
}

void gt_heap_table_free(gt_heap_table *t)
{
    free(t->rows);
    free(t->regions);
    gt_idmap_free(&t->index);
    gt_idmap_free(&t->region_index);
    memset(t, 0, sizeof(*t));
}
