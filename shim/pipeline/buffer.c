/* DESIGN §6: per-thread chunks of fixed-size records, the lock-free
 * publish list, recycled chunks and the memory cap.
 *
 * Free chunks: a lock-free stack shared by all threads (the drain pushes,
 * any thread pops). Its head packs a 32-bit pop counter with the chunk's
 * table index + 1 in one 64-bit word, so a pop that read a stale head
 * fails its CAS (no ABA) - chunks are never unmapped while the pipeline
 * runs, so reading a stale chunk's link is always safe. A shared stack,
 * rather than a return list per thread, lets a thread that records in
 * bursts reuse what others freed, so a short cap is not split per thread;
 * and no operation on it can block.
 *
 * Memory cap: chunks are mapped on demand while fewer than cap / chunk
 * size have been mapped; past that a record that finds no free chunk is
 * dropped, and counted in its thread's counter (thread.c). */
#include "buffer.h"

#include "event.h"
#include "pipeline.h"
#include "record.h"
#include "thread.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

static struct {
    size_t chunk_bytes;
    uint32_t capacity;   /* records per chunk */
    uint32_t max_chunks; /* the cap */
    gt_chunk **table;    /* every chunk mapped, by index */
    size_t table_bytes;
    uint32_t wake_threshold; /* pending chunks that wake the drain early */
    gt_pool_hooks hooks;     /* the drain's, given at init */
    /* Chunks mapped so far (<= max_chunks; a failed mapping still uses up
     * its slot). CAS relaxed: table entries are published by the chunk's
     * own hand-over, not by this counter. */
    _Atomic uint32_t mapped;
    /* Free stack head: pop counter << 32 | (table index + 1). Push: CAS
     * release (the drain's last reads of the chunk happen-before its next
     * owner's writes); pop: load/CAS acquire. */
    _Atomic uint64_t free_head;
    /* Publish list: CAS push with release (the chunk's records and header
     * happen-before the drain's acquire exchange that takes the list). */
    _Atomic(gt_chunk *) publish_head;
    _Atomic uint32_t pending; /* relaxed: a wake-up hint and a statistic */
    /* 1 while records may be begun. Store release (open) / seq_cst (close);
     * load acquire on the slow path. */
    _Atomic int open;
} pool;

/* ------------------------------------------------------------ the pool */

static void unmap_all(void)
{
    uint32_t n = atomic_load_explicit(&pool.mapped, memory_order_relaxed);
    if (pool.table) {
        for (uint32_t i = 0; i < n && i < pool.max_chunks; i++)
            if (pool.table[i]) munmap(pool.table[i], pool.chunk_bytes);
        munmap(pool.table, pool.table_bytes);
    }
    pool.table = NULL;
}

int gt_pool_init(size_t chunk_bytes, size_t cap_bytes, const gt_pool_hooks *hooks)
{
    atomic_store_explicit(&pool.open, 0, memory_order_seq_cst);
    unmap_all();
    if (chunk_bytes < GT_CHUNK_MIN_BYTES) chunk_bytes = GT_CHUNK_MIN_BYTES;
    chunk_bytes &= ~(size_t)(GT_CHUNK_MIN_BYTES - 1);
    size_t max_chunks = cap_bytes / chunk_bytes;
    if (max_chunks < 1) max_chunks = 1;
    if (max_chunks > UINT32_MAX / 2) max_chunks = UINT32_MAX / 2;
    pool.chunk_bytes = chunk_bytes;
    pool.capacity = (uint32_t)((chunk_bytes - sizeof(gt_chunk)) / sizeof(gt_event));
    pool.max_chunks = (uint32_t)max_chunks;
    pool.wake_threshold = pool.max_chunks / 8 > 64 ? 64 : pool.max_chunks / 8 + 1;
    pool.hooks = *hooks;
    pool.table_bytes = max_chunks * sizeof(gt_chunk *);
    void *table =
        mmap(NULL, pool.table_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    pool.table = table == MAP_FAILED ? NULL : table;
    atomic_store_explicit(&pool.mapped, 0, memory_order_relaxed);
    atomic_store_explicit(&pool.free_head, 0, memory_order_relaxed);
    atomic_store_explicit(&pool.publish_head, NULL, memory_order_relaxed);
    atomic_store_explicit(&pool.pending, 0, memory_order_relaxed);
    return pool.table ? 0 : -1;
}

void gt_buffer_open(void)
{
    atomic_store_explicit(&pool.open, pool.table != NULL, memory_order_release);
}

void gt_buffer_close(void)
{
    /* seq_cst: a thread whose slow path still sees the pipeline open took
     * its chunk before the collector's walk, which then finds it. */
    atomic_store_explicit(&pool.open, 0, memory_order_seq_cst);
}

uint32_t gt_pool_capacity(void)
{
    return pool.capacity;
}

void gt_pool_stats_get(gt_pool_stats *s)
{
    s->chunk_bytes = pool.chunk_bytes;
    s->chunk_capacity = pool.capacity;
    s->max_chunks = pool.max_chunks;
    s->mapped_chunks = atomic_load_explicit(&pool.mapped, memory_order_relaxed);
    s->pending_chunks = atomic_load_explicit(&pool.pending, memory_order_relaxed);
}

static gt_chunk *map_chunk(void)
{
    uint32_t n = atomic_load_explicit(&pool.mapped, memory_order_relaxed);
    do {
        if (n >= pool.max_chunks) return NULL;
    } while (!atomic_compare_exchange_weak_explicit(&pool.mapped, &n, n + 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    void *p =
        mmap(NULL, pool.chunk_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    gt_chunk *c = p;
    c->h.index = n;
    pool.table[n] = c;
    return c;
}

void gt_pool_recycle(gt_chunk *c)
{
    uint64_t head = atomic_load_explicit(&pool.free_head, memory_order_relaxed), next;
    do {
        atomic_store_explicit(&c->h.free_next, (uint32_t)head, memory_order_relaxed);
        next = (head & 0xffffffff00000000ull) | (c->h.index + 1u);
    } while (!atomic_compare_exchange_weak_explicit(&pool.free_head, &head, next,
                                                    memory_order_release, memory_order_relaxed));
}

static gt_chunk *pop_free(void)
{
    uint64_t head = atomic_load_explicit(&pool.free_head, memory_order_acquire), next;
    gt_chunk *c;
    do {
        uint32_t index = (uint32_t)head;
        if (index == 0) return NULL;
        c = pool.table[index - 1];
        next =
            ((head >> 32) + 1) << 32 | atomic_load_explicit(&c->h.free_next, memory_order_relaxed);
    } while (!atomic_compare_exchange_weak_explicit(&pool.free_head, &head, next,
                                                    memory_order_acquire, memory_order_acquire));
    return c;
}

/* ------------------------------------------------------ owner side */

static void install(struct gt_tls *t, gt_chunk *c)
{
    c->h.next = NULL;
    c->h.owner = t->thr->serial;
    c->h.thr = t->thr;
    c->h.first_seq = t->seq;
    c->h.limit = c->h.done = 0;
    atomic_store_explicit(&c->h.committed, 0, memory_order_relaxed);
    /* Release: a collector holding a stale pointer to this chunk that wins
     * the state CAS sees the header above, committed = 0 included. */
    atomic_store_explicit(&c->h.state, GT_CHUNK_OPEN, memory_order_release);
    t->chunk = c;
    t->count = 0;
    t->capacity = pool.capacity;
    /* Release: the collector loads `current` with acquire. */
    atomic_store_explicit(&t->thr->current, c, memory_order_release);
}

/* Takes the chunk from OPEN to PUBLISHED; 0 when an end step stole it
 * first (the drain then reads it where it is). */
static int claim_for_publish(gt_chunk *c)
{
    uint32_t open = GT_CHUNK_OPEN;
    return atomic_compare_exchange_strong_explicit(&c->h.state, &open, GT_CHUNK_PUBLISHED,
                                                   memory_order_acq_rel, memory_order_acquire);
}

static void publish(gt_chunk *c)
{
    gt_chunk *head = atomic_load_explicit(&pool.publish_head, memory_order_relaxed);
    do {
        c->h.next = head;
    } while (!atomic_compare_exchange_weak_explicit(&pool.publish_head, &head, c,
                                                    memory_order_release, memory_order_relaxed));
    uint32_t pending = atomic_fetch_add_explicit(&pool.pending, 1, memory_order_relaxed) + 1;
    if (pending == pool.wake_threshold) pool.hooks.wake();
}

/* Hands the thread's chunk over (to the drain, or back to the pool when
 * empty) and leaves the thread without one. */
static void release_current(struct gt_tls *t)
{
    gt_chunk *c = t->chunk;
    if (!c) return;
    if (claim_for_publish(c)) {
        if (t->count)
            publish(c);
        else
            gt_pool_recycle(c);
    }
    t->chunk = NULL;
    t->count = t->capacity = 0;
    atomic_store_explicit(&t->thr->current, NULL, memory_order_release);
}

void gt_buffer_release_thread(void)
{
    release_current(&gt_tls);
}

gt_event *gt_ev_begin_slow(void)
{
    struct gt_tls *t = &gt_tls;
    if (t->guard) return NULL; /* nested in a hook, or a shim thread */
    if (!atomic_load_explicit(&pool.open, memory_order_acquire)) return NULL;
    int saved = errno;
    gt_event *ev = NULL;
    t->guard = 1;
    if (t->state == GT_TLS_FRESH && !gt_thread_register()) {
        gt_thread_count_dropped();
        goto out;
    }
    release_current(t);
    gt_chunk *c = pop_free();
    if (!c) c = map_chunk();
    if (!c) {
        gt_thread_count_dropped();
        goto out;
    }
    install(t, c);
    pool.hooks.first_use();
    ev = &c->ev[0];
    gt_event_zero(ev);
    ev->seq = t->seq++;
    ev->tid = t->tid;
out:
    if (!ev) t->guard = 0;
    errno = saved;
    return ev;
}

void gt_ev_flush(void)
{
    struct gt_tls *t = &gt_tls;
    if (t->guard || !t->count) return;
    int saved = errno;
    t->guard = 1;
    release_current(t);
    t->guard = 0;
    errno = saved;
}

/* ------------------------------------------------------ drain side */

gt_chunk *gt_publish_take(uint32_t *n)
{
    gt_chunk *c = atomic_exchange_explicit(&pool.publish_head, NULL, memory_order_acquire);
    gt_chunk *fifo = NULL;
    uint32_t count = 0;
    while (c) { /* the list is newest first: reverse it */
        gt_chunk *next = c->h.next;
        c->h.next = fifo;
        c->h.limit = atomic_load_explicit(&c->h.committed, memory_order_relaxed);
        fifo = c;
        c = next;
        count++;
    }
    if (count) atomic_fetch_sub_explicit(&pool.pending, count, memory_order_relaxed);
    *n = count;
    return fifo;
}

typedef struct stolen_list {
    gt_chunk *head, **tail;
} stolen_list;

static void steal_current(gt_thread *thr, void *ctx)
{
    stolen_list *l = ctx;
    /* A PUBLISHED current chunk means the owner is between chunks: look
     * again. A thread that keeps changing chunks meanwhile publishes them,
     * and the drain takes them from the publish list. */
    for (int tries = 0; tries < 8; tries++) {
        gt_chunk *c = atomic_load_explicit(&thr->current, memory_order_acquire);
        if (!c) return;
        uint32_t state = GT_CHUNK_OPEN;
        if (atomic_compare_exchange_strong_explicit(&c->h.state, &state, GT_CHUNK_STOLEN,
                                                    memory_order_acq_rel, memory_order_acquire)) {
            /* Acquire: every record below the count is complete. */
            c->h.limit = atomic_load_explicit(&c->h.committed, memory_order_acquire);
            c->h.next = NULL;
            *l->tail = c;
            l->tail = &c->h.next;
            return;
        }
        if (state == GT_CHUNK_STOLEN) return;
    }
}

gt_chunk *gt_buffer_steal_live(void)
{
    stolen_list l = {NULL, &l.head};
    gt_threads_for_each(steal_current, &l);
    return l.head;
}
