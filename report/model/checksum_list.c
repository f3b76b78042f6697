/* The checksum list (checksum_list.h). */
#include "checksum_list.h"

#include <stdlib.h>
#include <string.h>

#include "checksum_mode.h"
#include "idmap.h"
#include "xxh3.h"

void gt_checksums_set_mode(gt_checksums *c, gt_checksum_mode m)
{
    c->mode = m;
    c->on = m.kind != GT_CHECKSUM_OFF;
}

uint64_t gt_checksum_entry_digest(const gt_checksum_entry *e)
{
    uint64_t words[4] = {e->index, e->bytes, e->status == GT_CK_HASHED ? e->hash : 0, e->status};
    return gt_xxh3_64(words, sizeof words);
}

static uint64_t thread_key(uint32_t rank, uint32_t thread)
{
    return (uint64_t)rank << 32 | thread;
}

/* The summary of (rank, thread), made when new; NULL without memory. */
static gt_checksum_thread *thread_of(gt_checksums *c, uint32_t rank, uint32_t thread)
{
    uint32_t at;
    if (gt_idmap_get(&c->thread_index, thread_key(rank, thread), &at)) return &c->threads[at];
    if (c->nthreads == c->threads_cap) {
        size_t cap = c->threads_cap ? c->threads_cap * 2 : 16;
        gt_checksum_thread *grown = realloc(c->threads, cap * sizeof(*grown));
        if (!grown) return NULL;
        c->threads = grown;
        c->threads_cap = cap;
    }
    if (c->nthreads >= UINT32_MAX ||
        gt_idmap_set(&c->thread_index, thread_key(rank, thread), (uint32_t)c->nthreads) != 0)
        return NULL;
    gt_checksum_thread *t = &c->threads[c->nthreads++];
    *t = (gt_checksum_thread){.rank = rank, .thread = thread};
    return t;
}

int gt_checksums_list(gt_checksums *c, const gt_checksum_entry *e)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        gt_checksum_entry *grown = realloc(c->entries, cap * sizeof(*grown));
        if (!grown) return -1;
        c->entries = grown;
        c->cap = cap;
    }
    c->entries[c->n++] = *e;
    return 0;
}

static bool list(gt_checksums *c, const gt_checksum_entry *e)
{
    if (c->n == GT_CHECKSUMS_LISTED_MAX) return false;
    if (gt_checksums_list(c, e) == 0) return true;
    c->incomplete = true;
    return false;
}

void gt_checksums_add(gt_checksums *c, const gt_checksum_entry *e, uint64_t cost_ns)
{
    if (e->status == GT_CK_HASHED) {
        c->hashed++;
        c->hashed_bytes += e->bytes;
    } else {
        c->unhashed++;
    }
    if (e->status < GT_CK_STATUS_COUNT) c->by_status[e->status]++;
    c->cost_ns += cost_ns;
    if (!list(c, e)) c->unlisted++;
    gt_checksum_thread *t = thread_of(c, e->rank, e->thread);
    if (!t) {
        c->incomplete = true;
        return;
    }
    t->copies++;
    t->bytes += e->bytes;
    t->digest += gt_checksum_entry_digest(e);
}

void gt_checksums_set_thread(gt_checksums *c, const gt_checksum_thread *t)
{
    gt_checksum_thread *mine = thread_of(c, t->rank, t->thread);
    if (mine)
        *mine = *t;
    else
        c->incomplete = true;
}

static int by_position(const void *x, const void *y)
{
    const gt_checksum_entry *a = x, *b = y;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

gt_checksum_entry *gt_checksums_sorted(const gt_checksums *c)
{
    if (!c->n) return NULL;
    gt_checksum_entry *s = malloc(c->n * sizeof(*s));
    if (!s) return NULL;
    memcpy(s, c->entries, c->n * sizeof(*s));
    qsort(s, c->n, sizeof(*s), by_position);
    return s;
}

static int by_thread(const void *x, const void *y)
{
    const gt_checksum_thread *a = x, *b = y;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return (a->thread > b->thread) - (a->thread < b->thread);
}

gt_checksum_thread *gt_checksums_threads_sorted(const gt_checksums *c)
{
    if (!c->nthreads) return NULL;
    gt_checksum_thread *s = malloc(c->nthreads * sizeof(*s));
    if (!s) return NULL;
    memcpy(s, c->threads, c->nthreads * sizeof(*s));
    qsort(s, c->nthreads, sizeof(*s), by_thread);
    return s;
}

const gt_checksum_thread *gt_checksums_find_thread(const gt_checksums *c, uint32_t rank,
                                                   uint32_t thread)
{
    uint32_t at;
    return gt_idmap_get(&c->thread_index, thread_key(rank, thread), &at) ? &c->threads[at] : NULL;
}

void gt_checksums_free(gt_checksums *c)
{
    free(c->entries);
    free(c->threads);
    gt_idmap_free(&c->thread_index);
    memset(c, 0, sizeof *c);
}
