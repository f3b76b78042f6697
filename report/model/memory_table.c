#include "callsite_table.h"
#include "event.h"
#include "memory_table.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum address_space { SPACE_DEVICE, SPACE_HOST, SPACE_VMM_HANDLE };

static uint8_t space_of(uint8_t mem_kind)
{
    if (mem_kind == GT_MEM_PINNED) return SPACE_HOST;
    if (mem_kind == GT_MEM_VMM) return SPACE_VMM_HANDLE;
    return SPACE_DEVICE;
}

int32_t gt_memory_device_of(const gt_event *ev)
{
    if (ev->u.mem.mem_kind == GT_MEM_PINNED || ev->device == GT_NO_DEVICE)
        return GT_MEM_HOST_DEVICE;
    return ev->device;
}

/* Devices are few: a sorted array, searched linearly. */
gt_mem_device *gt_memory_device_row(gt_memory *m, int32_t device)
{
    uint32_t i = 0;
    while (i < m->ndevices && m->devices[i].device < device)
        i++;
    if (i < m->ndevices && m->devices[i].device == device) return &m->devices[i];
    gt_mem_device *grown = realloc(m->devices, (m->ndevices + 1) * sizeof(*grown));
    if (!grown) return NULL;
    m->devices = grown;
    memmove(&m->devices[i + 1], &m->devices[i], (m->ndevices - i) * sizeof(*grown));
    m->ndevices++;
    memset(&m->devices[i], 0, sizeof(*grown));
    m->devices[i].device = device;
    return &m->devices[i];
}

static uint32_t bucket_of(const gt_block_map *map, uint64_t addr, uint8_t space)
{
    uint64_t h = (addr ^ ((uint64_t)space << 61)) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32) & (map->nbuckets - 1);
}

static int rehash(gt_block_map *map, uint32_t nbuckets)
{
    uint32_t *buckets = calloc(nbuckets, sizeof(*buckets));
    if (!buckets) return -1;
    free(map->buckets);
    map->buckets = buckets;
    map->nbuckets = nbuckets;
    for (uint32_t b = 0; b < map->nblocks; b++) {
        gt_mem_block *blk = &map->blocks[b];
        if (blk->next == UINT32_MAX) continue; /* on the free list */
        uint32_t bucket = bucket_of(map, blk->addr, blk->space);
        blk->next = buckets[bucket];
        buckets[bucket] = b + 1;
    }
    return 0;
}

/* Unused blocks are chained through `addr` with next == UINT32_MAX. */
static gt_mem_block *map_insert(gt_block_map *map, const gt_mem_block *value)
{
    if ((map->count + 1) > map->nbuckets &&
        rehash(map, map->nbuckets ? map->nbuckets * 2 : 64) != 0)
        return NULL;
    uint32_t b;
    if (map->free_list) {
        b = map->free_list - 1;
        map->free_list = (uint32_t)map->blocks[b].addr;
    } else {
        if (map->nblocks == map->capacity) {
            uint32_t cap = map->capacity ? map->capacity * 2 : 64;
            gt_mem_block *grown = realloc(map->blocks, cap * sizeof(*grown));
            if (!grown) return NULL;
            map->blocks = grown;
            map->capacity = cap;
        }
        b = map->nblocks++;
    }
    gt_mem_block *blk = &map->blocks[b];
    *blk = *value;
    uint32_t bucket = bucket_of(map, blk->addr, blk->space);
    blk->next = map->buckets[bucket];
    map->buckets[bucket] = b + 1;
    map->count++;
    return blk;
}

static void map_remove(gt_block_map *map, gt_mem_block *blk)
{
    uint32_t b = (uint32_t)(blk - map->blocks);
    uint32_t *link = &map->buckets[bucket_of(map, blk->addr, blk->space)];
    while (*link != b + 1)
        link = &map->blocks[*link - 1].next;
    *link = blk->next;
    blk->next = UINT32_MAX;
    blk->addr = map->free_list;
    map->free_list = b + 1;
    map->count--;
}

/* The block of (addr, space) whose time is closest to `time` on the side
 * `before` says (latest at or before it, else earliest at or after it). */
static gt_mem_block *map_find(gt_block_map *map, uint64_t addr, uint8_t space, uint64_t time,
                              bool before)
{
    if (map->count == 0) return NULL;
    gt_mem_block *best = NULL;
    for (uint32_t b = map->buckets[bucket_of(map, addr, space)]; b; b = map->blocks[b - 1].next) {
        gt_mem_block *blk = &map->blocks[b - 1];
        if (blk->addr != addr || blk->space != space) continue;
        bool eligible = before ? blk->time <= time : blk->time >= time;
        bool closer = !best || (before ? blk->time > best->time : blk->time < best->time);
        if (eligible && closer) best = blk;
    }
    return best;
}

static void map_release(gt_block_map *map)
{
    free(map->blocks);
    free(map->buckets);
    memset(map, 0, sizeof(*map));
}

static int by_time(const void *a, const void *b)
{
    const gt_mem_delta *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    /* At the same moment frees come first: no peak that never was. */
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* Folds the first n deltas (sorted): the bytes in use and their peak
 * move on past them, and the sink hears of each. */
static void fold_first(const gt_memory *m, gt_mem_device *d, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        d->folded_bytes += d->deltas[i].bytes;
        if (!d->deltas[i].counted) continue;
        if (d->folded_bytes > d->folded_peak) d->folded_peak = d->folded_bytes;
        uint64_t in_use = d->folded_bytes > 0 ? (uint64_t)d->folded_bytes : 0;
        for (unsigned s = 0; s < GT_MEM_SINKS; s++)
            if (m->sinks[s].changed)
                m->sinks[s].changed(m->sinks[s].ctx, d->device, d->deltas[i].time, in_use);
    }
    if (n) d->folded_time = d->deltas[n - 1].time;
    d->ndeltas -= n;
    memmove(d->deltas, d->deltas + n, d->ndeltas * sizeof(*d->deltas));
}

/* The older half of the deltas goes into the fold. */
static void fold(const gt_memory *m, gt_mem_device *d)
{
    if (d->ndeltas < 2) return;
    qsort(d->deltas, d->ndeltas, sizeof(*d->deltas), by_time);
    fold_first(m, d, d->ndeltas / 2);
}

static void note_delta(const gt_memory *m, gt_mem_device *d, uint64_t time, int64_t bytes,
                       bool counted)
{
    if (d->ndeltas == d->deltas_cap) {
        uint32_t cap = d->deltas_cap ? d->deltas_cap * 2 : 64;
        gt_mem_delta *grown =
            cap <= GT_MEM_DELTAS_MAX ? realloc(d->deltas, cap * sizeof(*grown)) : NULL;
        if (grown) {
            d->deltas = grown;
            d->deltas_cap = cap;
        } else {
            fold(m, d);
        }
    }
    if (d->ndeltas == d->deltas_cap) return; /* no memory at all: the arrival-order peak stays */
    if (time < d->folded_time) time = d->folded_time;
    d->deltas[d->ndeltas++] = (gt_mem_delta){time, bytes, counted ? -1 : 0};
}

void gt_memory_finish(gt_memory *m)
{
    for (uint32_t i = 0; i < m->ndevices; i++) {
        gt_mem_device *d = &m->devices[i];
        if (!d->deltas) continue;
        qsort(d->deltas, d->ndeltas, sizeof(*d->deltas), by_time);
        fold_first(m, d, d->ndeltas);
        d->peak_bytes = d->folded_peak > 0 ? (uint64_t)d->folded_peak : 0;
    }
}

int gt_memory_set_sink(gt_memory *m, gt_mem_sink_fn changed, void *ctx)
{
    gt_mem_sink *slot = NULL;
    for (unsigned s = 0; s < GT_MEM_SINKS; s++) {
        if (m->sinks[s].changed && m->sinks[s].ctx == ctx) {
            slot = &m->sinks[s];
            break;
        }
        if (!slot && !m->sinks[s].changed) slot = &m->sinks[s];
    }
    if (!slot) return changed ? -1 : 0;
    *slot = changed ? (gt_mem_sink){changed, ctx} : (gt_mem_sink){NULL, NULL};
    return 0;
}

void gt_memory_window_open(gt_memory *m, uint64_t time)
{
    for (uint32_t i = 0; i < m->ndevices; i++)
        note_delta(m, &m->devices[i], time, 0, true);
}

/* An allocation ends: no longer live, its bytes no longer in use (a
 * moment of a capture window when in_window), nor held by its call site. */
static void end_allocation(const gt_memory *m, gt_mem_device *d, uint64_t bytes, uint64_t time,
                           bool in_window, uint32_t site)
{
    if (m->sites) gt_callsites_release(m->sites, site, bytes);
    d->live_allocs--;
    d->current_bytes -= bytes;
    note_delta(m, d, time, -(int64_t)bytes, in_window);
}

static bool counted(const gt_event *ev)
{
    return !(ev->flags & GT_EVF_UNCAPTURED);
}

static void release_bytes(const gt_memory *m, gt_mem_device *d, uint64_t bytes, uint64_t time,
                          bool in_window, uint32_t site)
{
    d->frees += in_window;
    end_allocation(m, d, bytes, time, in_window, site);
}

static void add_alloc(gt_memory *m, const gt_event *ev)
{
    uint8_t space = space_of(ev->u.mem.mem_kind);
    gt_mem_block *early_free = map_find(&m->pending, ev->u.mem.addr, space, ev->host_start, false);
    uint64_t early_free_time = early_free ? early_free->time : 0;
    bool early_free_counted = early_free && early_free->counted;
    if (early_free) {
        /* the free's row exists: it was counted there when the free arrived */
        gt_mem_device *fd = gt_memory_device_row(m, early_free->device);
        if (fd) fd->pending_frees--;
        map_remove(&m->pending, early_free);
    }
    gt_mem_device *d = gt_memory_device_row(m, gt_memory_device_of(ev));
    if (!d) return;
    uint32_t site = m->sites ? gt_callsites_alloc(m->sites, ev) : 0;
    if (!early_free) {
        gt_mem_block blk = {.addr = ev->u.mem.addr,
                            .time = ev->host_start,
                            .bytes = ev->bytes,
                            .ctx = space == SPACE_VMM_HANDLE ? 0 : ev->u.mem.ctx,
                            .device = d->device,
                            .space = space,
                            .kind = ev->u.mem.mem_kind,
                            .counted = counted(ev),
                            .site = site};
        /* Without room to remember the block, forget the allocation rather
         * than report a leak that may not be one. */
        if (!map_insert(&m->live, &blk)) {
            if (m->sites) gt_callsites_release(m->sites, site, ev->bytes);
            return;
        }
    }
    d->allocs += counted(ev);
    d->live_allocs++;
    d->current_bytes += ev->bytes;
    if (counted(ev) && d->current_bytes > d->peak_bytes) d->peak_bytes = d->current_bytes;
    note_delta(m, d, ev->host_start, (int64_t)ev->bytes, counted(ev));
    if (early_free) release_bytes(m, d, ev->bytes, early_free_time, early_free_counted, site);
}

static void add_free(gt_memory *m, const gt_event *ev)
{
    uint8_t space = space_of(ev->u.mem.mem_kind);
    gt_mem_block *blk = map_find(&m->live, ev->u.mem.addr, space, ev->host_start, true);
    if (blk) {
        gt_mem_device *d = gt_memory_device_row(m, blk->device);
        if (d) release_bytes(m, d, blk->bytes, ev->host_start, counted(ev), blk->site);
        map_remove(&m->live, blk);
        return;
    }
    gt_mem_device *d = gt_memory_device_row(m, gt_memory_device_of(ev));
    if (!d) return;
    gt_mem_block wait = {.addr = ev->u.mem.addr,
                         .time = ev->host_start,
                         .device = d->device,
                         .space = space,
                         .kind = ev->u.mem.mem_kind,
                         .counted = counted(ev)};
    if (m->pending.count < GT_MEM_PENDING_FREES && map_insert(&m->pending, &wait))
        d->pending_frees++;
    else
        d->unknown_frees++;
}

/* The live allocations of the context, made before its end, go with it.
 * Rare (a few per process): a walk over every live block. */
static void end_context(gt_memory *m, const gt_event *ev)
{
    uint64_t ctx = ev->u.mem.ctx;
    if (!ctx) return;
    for (uint32_t b = 0; b < m->live.nblocks; b++) {
        gt_mem_block *blk = &m->live.blocks[b];
        if (blk->next == UINT32_MAX || blk->ctx != ctx || blk->time > ev->host_start) continue;
        gt_mem_device *d = gt_memory_device_row(m, blk->device);
        if (d) {
            d->ctx_released_allocs++;
            d->ctx_released_bytes += blk->bytes;
            end_allocation(m, d, blk->bytes, ev->host_start, counted(ev), blk->site);
        }
        map_remove(&m->live, blk);
    }
}

void gt_memory_add(gt_memory *m, const gt_event *ev)
{
    if (ev->kind == GT_EV_CTX_END) {
        end_context(m, ev);
        return;
    }
    if (ev->u.mem.addr == 0) return; /* freeing NULL does nothing */
    if (ev->kind == GT_EV_ALLOC)
        add_alloc(m, ev);
    else if (ev->kind == GT_EV_FREE)
        add_free(m, ev);
}

void gt_memory_free(gt_memory *m)
{
    map_release(&m->live);
    map_release(&m->pending);
    for (uint32_t i = 0; i < m->ndevices; i++)
        free(m->devices[i].deltas);
    free(m->devices);
    memset(m, 0, sizeof(*m));
}

uint64_t gt_memory_device_bytes(const gt_memory *m)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < m->ndevices; i++)
        if (m->devices[i].device != GT_MEM_HOST_DEVICE) bytes += m->devices[i].current_bytes;
    return bytes;
}

uint64_t gt_memory_unknown_frees(const gt_mem_device *d)
{
    return d->unknown_frees + d->pending_frees;
}

/* The label of a block's call site, 0 none. */
static uint32_t site_label(const gt_memory *m, const gt_mem_block *blk)
{
    if (!m->sites || !blk->site || blk->site > m->sites->nrows) return 0;
    uint32_t site = m->sites->rows[blk->site - 1].site;
    return site < m->sites->nsites ? m->sites->labels[site] : 0;
}

size_t gt_memory_largest_leaks(const gt_memory *m, int32_t device, gt_mem_leak *out, size_t max)
{
    size_t n = 0;
    for (uint32_t b = 0; b < m->live.nblocks && max > 0; b++) {
        const gt_mem_block *blk = &m->live.blocks[b];
        if (blk->next == UINT32_MAX || blk->device != device) continue;
        if (n == max && blk->bytes <= out[n - 1].bytes) continue;
        size_t i = n < max ? n++ : n - 1;
        while (i > 0 && out[i - 1].bytes < blk->bytes) {
            out[i] = out[i - 1];
            i--;
        }
        out[i] = (gt_mem_leak){blk->addr, blk->bytes, blk->time, blk->kind, site_label(m, blk)};
    }
    return n;
}

int gt_memory_keep_leak(gt_memory *m, int32_t device, const gt_mem_leak *leak)
{
    gt_mem_block blk = {.addr = leak->addr,
                        .time = leak->time,
                        .bytes = leak->bytes,
                        .device = device,
                        .space = space_of(leak->kind),
                        .kind = leak->kind};
    /* Its site's row, found again from the label (the sites were read first). */
    int32_t site = m->sites && leak->site ? gt_callsites_site_of(m->sites, leak->site) : -1;
    gt_site_row *row =
        site < 0 ? NULL : gt_callsites_row(m->sites, GT_EV_ALLOC, leak->kind, 0, (uint32_t)site);
    if (row) blk.site = (uint32_t)(row - m->sites->rows) + 1;
    return map_insert(&m->live, &blk) ? 0 : -1;
}
