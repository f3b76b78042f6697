/* The registry of page-locked and managed host ranges (hostmem_registry.h).
 *
 * A sequence lock without fences: a writer, one at a time under the mutex,
 * makes the sequence odd, changes the ranges with store-release, and makes
 * the sequence even again with a store-release. A reader loads the
 * sequence, then the ranges, with load-acquire, and the sequence again: a
 * range value a writer stored carries (by its release) the odd sequence
 * stored before it, so the second load cannot miss that a writer was at
 * work; an odd or changed sequence makes the reader retry. (Acquire and
 * release cost nothing more than plain moves on x86.) Every field a reader
 * loads is atomic, so a torn read is only ever retried, never undefined. */
#include "event.h"
#include "fork_lock.h"
#include "hostmem_registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

/* A reader gives up after this many attempts (a writer moving a large
 * array, or a signal handler interrupting a writer on its own thread). */
#define LOOKUP_TRIES 1024u
#define FIRST_CAPACITY 64u

typedef struct range {
    _Atomic uint64_t start;
    _Atomic uint64_t end;  /* exclusive */
    _Atomic uint64_t kind; /* enum gt_host_mem */
} range;

typedef struct range_array {
    uint32_t capacity;         /* set before the array is published */
    struct range_array *older; /* arrays this one replaced, kept for readers */
    range r[];
} range_array;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
GT_FORK_LOCK(lock)
static _Atomic uint32_t seq;           /* odd while a writer changes the ranges */
static _Atomic(range_array *) current; /* store-release by writers; load-acquire */
static _Atomic uint32_t count;         /* store-release, load-acquire: as a range */

static inline void pause_briefly(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static inline uint64_t load(_Atomic uint64_t *p)
{
    return atomic_load_explicit(p, memory_order_acquire);
}

static inline void store(_Atomic uint64_t *p, uint64_t v)
{
    atomic_store_explicit(p, v, memory_order_release);
}

/* Index of the first range whose start is above addr (0..n). */
static uint32_t upper_bound(range *r, uint32_t n, uint64_t addr)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (load(&r[mid].start) <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

enum gt_host_mem gt_hostmem_lookup(uintptr_t addr, uint32_t *version)
{
    for (unsigned tries = 0; tries < LOOKUP_TRIES; tries++) {
        uint32_t s = atomic_load_explicit(&seq, memory_order_acquire);
        if (s & 1u) {
            pause_briefly();
            continue;
        }
        range_array *a = atomic_load_explicit(&current, memory_order_acquire);
        uint32_t n = atomic_load_explicit(&count, memory_order_acquire);
        uint64_t kind = GT_HOST_NONE;
        if (a) {
            if (n > a->capacity) n = a->capacity; /* a newer count with an older array */
            uint32_t i = upper_bound(a->r, n, addr);
            if (i > 0 && addr < load(&a->r[i - 1].end)) kind = load(&a->r[i - 1].kind);
        }
        if (atomic_load_explicit(&seq, memory_order_relaxed) == s) {
            *version = s;
            return kind < GT_HOST_COUNT ? (enum gt_host_mem)kind : GT_HOST_NONE;
        }
    }
    *version = GT_HOSTMEM_BUSY;
    return GT_HOST_NONE;
}

/* ------------------------------------------------------------ writers
 * Under the mutex: a writer's own loads are relaxed. */

/* Relaxed: the release of every store that follows carries it. */
static void begin_write(void)
{
    uint32_t s = atomic_load_explicit(&seq, memory_order_relaxed);
    atomic_store_explicit(&seq, s + 1, memory_order_relaxed);
}

static void end_write(void)
{
    uint32_t s = atomic_load_explicit(&seq, memory_order_relaxed);
    atomic_store_explicit(&seq, s + 1, memory_order_release);
}

static void copy_range(range *dst, range *src)
{
    store(&dst->start, load(&src->start));
    store(&dst->end, load(&src->end));
    store(&dst->kind, load(&src->kind));
}

/* An array with room for `need` ranges: the current one, or a larger copy
 * published in its place (the copy changes nothing a reader sees). */
static range_array *room_for(uint32_t need)
{
    range_array *a = atomic_load_explicit(&current, memory_order_relaxed);
    if (a && a->capacity >= need) return a;
    uint32_t cap = a ? a->capacity : FIRST_CAPACITY;
    while (cap < need)
        cap *= 2;
    if (cap > GT_HOSTMEM_MAX_RANGES) cap = GT_HOSTMEM_MAX_RANGES;
    range_array *b = calloc(1, sizeof *b + (size_t)cap * sizeof(range));
    if (!b) return NULL;
    b->capacity = cap;
    b->older = a;
    uint32_t n = atomic_load_explicit(&count, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++)
        copy_range(&b->r[i], &a->r[i]);
    atomic_store_explicit(&current, b, memory_order_release);
    return b;
}

int gt_hostmem_add(uintptr_t start, uint64_t bytes, enum gt_host_mem kind)
{
    uint64_t end = (uint64_t)start + bytes;
    if (bytes == 0 || end < (uint64_t)start) return -1;
    pthread_mutex_lock(&lock);
    uint32_t n = atomic_load_explicit(&count, memory_order_relaxed);
    range_array *a = atomic_load_explicit(&current, memory_order_relaxed);
    /* Ranges [first, last) overlap the new one: ends are sorted as starts are. */
    uint32_t first = 0, last = 0;
    if (a) {
        last = upper_bound(a->r, n, end - 1);
        first = last;
        while (first > 0 && load(&a->r[first - 1].end) > start)
            first--;
    }
    uint32_t after = n - (last - first) + 1;
    int rc = -1;
    if (after <= GT_HOSTMEM_MAX_RANGES && (a = room_for(after)) != NULL) {
        begin_write();
        if (last - first != 1) {
            /* Move the tail so that exactly one slot remains at `first`. */
            uint32_t to = first + 1;
            if (to < last) {
                for (uint32_t i = last; i < n; i++)
                    copy_range(&a->r[to + i - last], &a->r[i]);
            } else {
                for (uint32_t i = n; i-- > last;)
                    copy_range(&a->r[to + i - last], &a->r[i]);
            }
        }
        store(&a->r[first].start, start);
        store(&a->r[first].end, end);
        store(&a->r[first].kind, kind);
        atomic_store_explicit(&count, after, memory_order_release);
        end_write();
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

enum gt_host_mem gt_hostmem_remove(uintptr_t start)
{
    enum gt_host_mem kind = GT_HOST_NONE;
    pthread_mutex_lock(&lock);
    uint32_t n = atomic_load_explicit(&count, memory_order_relaxed);
    range_array *a = atomic_load_explicit(&current, memory_order_relaxed);
    uint32_t i = a ? upper_bound(a->r, n, start) : 0;
    if (i > 0 && load(&a->r[i - 1].start) == start) {
        kind = (enum gt_host_mem)load(&a->r[i - 1].kind);
        begin_write();
        for (uint32_t j = i; j < n; j++)
            copy_range(&a->r[j - 1], &a->r[j]);
        atomic_store_explicit(&count, n - 1, memory_order_release);
        end_write();
    }
    pthread_mutex_unlock(&lock);
    return kind;
}

void gt_hostmem_clear(void)
{
    pthread_mutex_lock(&lock);
    begin_write();
    atomic_store_explicit(&count, 0, memory_order_release);
    end_write();
    pthread_mutex_unlock(&lock);
}

uint32_t gt_hostmem_count(void)
{
    return atomic_load_explicit(&count, memory_order_relaxed);
}

void gt_hostmem_reset(void)
{
    pthread_mutex_lock(&lock);
    range_array *a = atomic_load_explicit(&current, memory_order_relaxed);
    begin_write();
    atomic_store_explicit(&current, NULL, memory_order_release);
    atomic_store_explicit(&count, 0, memory_order_release);
    end_write();
    while (a) {
        range_array *older = a->older;
        free(a);
        a = older;
    }
    pthread_mutex_unlock(&lock);
}
