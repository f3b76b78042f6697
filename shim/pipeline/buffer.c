/* DESIGN §6: per-thread chunks of fixed-size records, the lock-free
 * publish list, recycled chunks and the memory cap.
 *
 * Free chunks: a lock-free stack per chunk size shared by all threads (the
 * drain pushes, any thread pops). Its head packs a 32-bit pop counter with
 * the chunk's table index + 1 in one 64-bit word, so a pop that read a
 * stale head fails its CAS (no ABA) - chunks are never unmapped while the
 * pipeline runs, so reading a stale chunk's link is always safe. A shared
 * stack, rather than a return list per thread, lets a thread that records
 * in bursts reuse what others freed, so a short cap is not split per
 * thread; and no operation on it can block.
 *
 * Chunk sizes: every thread holds a chunk while it lives, recording or
 * not, so the cap bounds how many threads can record at once. While few
 * threads are alive a thread's chunks are all of the full size (the
 * configured chunk_bytes). Once more than half as many threads are alive
 * as full chunks fit in the cap, a new thread starts with the smallest
 * size, and each chunk it fills doubles the next one's: a thread pool of
 * thousands of threads that each record a little (servers, data loaders)
 * then holds a page each, while a thread that records much soon has full
 * chunks again. The hot path is the same for every size (the chunk's
 * capacity is in the thread's TLS).
 *
 * Memory cap: chunks are mapped on demand while the bytes mapped stay
 * within the cap; past that a chunk of any size another thread freed is
 * taken, else the smallest size is mapped if it still fits, else the
 * record is dropped and counted in its thread's counter (thread.c), and the
 * first drop says why (gt_pool_drops_get). */
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

#define MAX_CLASSES 16 /* chunk sizes: GT_CHUNK_MIN_BYTES doubled up to chunk_bytes */

static struct {
    size_t class_bytes[MAX_CLASSES];      /* each size's bytes, the last one chunk_bytes */
    uint32_t class_capacity[MAX_CLASSES]; /* records a chunk of each size holds */
    unsigned top;                         /* the full size's class */
    size_t cap_bytes;
    uint32_t max_chunks; /* full-size chunks within the cap */
    uint32_t max_slots;  /* table entries: the smallest chunks within the cap */
    gt_chunk **table;    /* every chunk mapped, by index */
    size_t table_bytes;
    uint32_t wake_threshold; /* pending chunks that wake the drain early */
    gt_pool_hooks hooks;     /* the drain's, given at init */
    /* Bytes mapped so far (<= cap_bytes; a failed mapping still uses its
     * bytes up) and chunks mapped (table indices handed out). CAS and
     * fetch-add relaxed: table entries are published by the chunk's own
     * hand-over, not by these counters. */
    _Atomic size_t mapped_bytes;
    _Atomic uint32_t mapped;
    /* Free stack heads, one per size: pop counter << 32 | (table index +
     * 1). Push: CAS release (the drain's last reads of the chunk
     * happen-before its next owner's writes); pop: load/CAS acquire. */
    _Atomic uint64_t free_head[MAX_CLASSES];
    /* Publish list: CAS push with release (the chunk's records and header
     * happen-before the drain's acquire exchange that takes the list). */
    _Atomic(gt_chunk *) publish_head;
    _Atomic uint32_t pending; /* relaxed: a wake-up hint and a statistic */
    /* 1 while records may be begun. Store release (open) / seq_cst (close);
     * load acquire on the slow path. */
    _Atomic int open;
    /* The first drop's circumstances: claimed by CAS (0 -> 1, relaxed),
     * written, then published (2, release); read with acquire. */
    _Atomic int drops_state;
    gt_pool_drops drops;
} pool;

/* ------------------------------------------------------------ the pool */

static void unmap_all(void)
{
    uint32_t n = atomic_load_explicit(&pool.mapped, memory_order_relaxed);
    if (pool.table) {
        for (uint32_t i = 0; i < n && i < pool.max_slots; i++)
            if (pool.table[i]) munmap(pool.table[i], pool.class_bytes[pool.table[i]->h.size_class]);
        munmap(pool.table, pool.table_bytes);
    }
    pool.table = NULL;
}

/* The sizes: the smallest doubled while below chunk_bytes, then it. */
static void set_classes(size_t chunk_bytes)
{
    unsigned k = 0;
    for (size_t b = GT_CHUNK_MIN_BYTES; b < chunk_bytes && k < MAX_CLASSES - 1; b *= 2)
        pool.class_bytes[k++] = b;
    pool.class_bytes[k] = chunk_bytes;
    pool.top = k;
    for (unsigned i = 0; i <= k; i++)
        pool.class_capacity[i] =
            (uint32_t)((pool.class_bytes[i] - sizeof(gt_chunk)) / sizeof(gt_event));
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
    size_t max_slots = cap_bytes / GT_CHUNK_MIN_BYTES;
    if (max_slots < max_chunks) max_slots = max_chunks;
    if (max_slots > UINT32_MAX / 2) max_slots = UINT32_MAX / 2;
    set_classes(chunk_bytes);
    pool.cap_bytes = max_chunks * chunk_bytes > cap_bytes ? max_chunks * chunk_bytes : cap_bytes;
    pool.max_chunks = (uint32_t)max_chunks;
    pool.max_slots = (uint32_t)max_slots;
    pool.wake_threshold = pool.max_chunks / 8 > 64 ? 64 : pool.max_chunks / 8 + 1;
    pool.hooks = *hooks;
    pool.table_bytes = max_slots * sizeof(gt_chunk *);
    void *table =
        mmap(NULL, pool.table_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    pool.table = table == MAP_FAILED ? NULL : table;
    atomic_store_explicit(&pool.mapped_bytes, 0, memory_order_relaxed);
    atomic_store_explicit(&pool.mapped, 0, memory_order_relaxed);
    for (unsigned k = 0; k < MAX_CLASSES; k++)
        atomic_store_explicit(&pool.free_head[k], 0, memory_order_relaxed);
    atomic_store_explicit(&pool.publish_head, NULL, memory_order_relaxed);
    atomic_store_explicit(&pool.pending, 0, memory_order_relaxed);
    atomic_store_explicit(&pool.drops_state, 0, memory_order_relaxed);
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
    return pool.class_capacity[pool.top];
}

void gt_pool_stats_get(gt_pool_stats *s)
{
    s->chunk_bytes = pool.class_bytes[pool.top];
    s->chunk_capacity = pool.class_capacity[pool.top];
    s->max_chunks = pool.max_chunks;
    s->mapped_chunks = atomic_load_explicit(&pool.mapped, memory_order_relaxed);
    s->mapped_bytes = atomic_load_explicit(&pool.mapped_bytes, memory_order_relaxed);
    s->pending_chunks = atomic_load_explicit(&pool.pending, memory_order_relaxed);
}

static gt_chunk *map_chunk(unsigned k)
{
    size_t bytes = pool.class_bytes[k];
    size_t used = atomic_load_explicit(&pool.mapped_bytes, memory_order_relaxed);
    do {
        if (used + bytes > pool.cap_bytes) return NULL;
    } while (!atomic_compare_exchange_weak_explicit(&pool.mapped_bytes, &used, used + bytes,
                                                    memory_order_relaxed, memory_order_relaxed));
    uint32_t n = atomic_fetch_add_explicit(&pool.mapped, 1, memory_order_relaxed);
    if (n >= pool.max_slots) return NULL;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    gt_chunk *c = p;
    c->h.index = n;
    c->h.size_class = (uint8_t)k;
    pool.table[n] = c;
    return c;
}

void gt_pool_recycle(gt_chunk *c)
{
    _Atomic uint64_t *free_head = &pool.free_head[c->h.size_class];
    uint64_t head = atomic_load_explicit(free_head, memory_order_relaxed), next;
    do {
        atomic_store_explicit(&c->h.free_next, (uint32_t)head, memory_order_relaxed);
        next = (head & 0xffffffff00000000ull) | (c->h.index + 1u);
    } while (!atomic_compare_exchange_weak_explicit(free_head, &head, next, memory_order_release,
                                                    memory_order_relaxed));
}

static gt_chunk *pop_free(unsigned k)
{
    _Atomic uint64_t *free_head = &pool.free_head[k];
    uint64_t head = atomic_load_explicit(free_head, memory_order_acquire), next;
    gt_chunk *c;
    do {
        uint32_t index = (uint32_t)head;
        if (index == 0) return NULL;
        c = pool.table[index - 1];
        next =
            ((head >> 32) + 1) << 32 | atomic_load_explicit(&c->h.free_next, memory_order_relaxed);
    } while (!atomic_compare_exchange_weak_explicit(free_head, &head, next, memory_order_acquire,
                                                    memory_order_acquire));
    return c;
}

/* A chunk of size k, else (the cap reached) a free one of any size, the
 * largest first, else the smallest size if it still fits. */
static gt_chunk *take_chunk(unsigned k)
{
    gt_chunk *c = pop_free(k);
    if (!c) c = map_chunk(k);
    for (unsigned i = pool.top + 1; !c && i-- > 0;)
        if (i != k) c = pop_free(i);
    if (!c && k) c = map_chunk(0);
    return c;
}

/* The size a thread that just registered starts with: the full one, unless
 * the threads alive could not each have a full chunk in half the cap. */
static unsigned first_class(void)
{
    return gt_threads_live() > pool.max_chunks / 2 ? 0 : pool.top;
}

/* --------------------------------------------------- why records drop */

static void add_held(gt_thread *thr, void *ctx)
{
    gt_pool_drops *d = ctx;
    gt_chunk *c = atomic_load_explicit(&thr->current, memory_order_acquire);
    if (!c) return;
    d->threads++;
    d->held_bytes += pool.class_bytes[c->h.size_class];
}

/* The first drop: where the memory was (a racy picture, which is all the
 * warning needs). */
static void note_drop(int no_memory)
{
    int expected = 0;
    if (atomic_load_explicit(&pool.drops_state, memory_order_relaxed) ||
        !atomic_compare_exchange_strong_explicit(&pool.drops_state, &expected, 1,
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    gt_pool_drops d = {.cap_bytes = pool.cap_bytes, .no_memory = no_memory};
    gt_threads_for_each(add_held, &d);
    size_t mapped = atomic_load_explicit(&pool.mapped_bytes, memory_order_relaxed);
    d.waiting_bytes = mapped > d.held_bytes ? mapped - d.held_bytes : 0;
    pool.drops = d;
    atomic_store_explicit(&pool.drops_state, 2, memory_order_release);
}

int gt_pool_drops_get(gt_pool_drops *out)
{
    if (atomic_load_explicit(&pool.drops_state, memory_order_acquire) != 2) return 0;
    *out = pool.drops;
    return 1;
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
    t->capacity = pool.class_capacity[c->h.size_class];
    t->chunk_class = c->h.size_class;
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
    if (t->state == GT_TLS_FRESH) {
        if (!gt_thread_register()) {
            gt_thread_count_dropped();
            note_drop(1);
            goto out;
        }
        t->chunk_class = (uint8_t)first_class();
    } else if (t->chunk && t->count == t->capacity && t->chunk_class < pool.top) {
        t->chunk_class++; /* it filled its chunk: the next one is twice as large */
    }
    release_current(t);
    gt_chunk *c = take_chunk(t->chunk_class);
    if (!c) {
        gt_thread_count_dropped();
        note_drop(atomic_load_explicit(&pool.mapped_bytes, memory_order_relaxed) +
                      GT_CHUNK_MIN_BYTES <=
                  pool.cap_bytes);
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
