/* Activity buffers (cupti_internal.h): a pool of GT_CUPTI_BUFFER_BYTES
 * buffers, at most an eighth of GPUTRACE_BUFFER_MB in all, made as CUPTI
 * asks for them and reused once the drain has read them.
 *
 * CUPTI asks for a buffer from whichever thread fills one (its own, or a
 * program thread), and hands a full or flushed one back the same way: the
 * free list takes a lock (once per buffer: about a megabyte of records),
 * the completed list is a lock-free stack that only the drain empties.
 *
 * An empty pool: from CUPTI API version 27 on, CUPTI is given no buffer
 * and drops the records, which it counts. Before it, a NULL buffer
 * crashes CUPTI, so the pool grows past its bound instead, as far as
 * GT_CUPTI_BUFFERS_MAX, and past that the drain is told to stop CUPTI's
 * records (gt_cupti_buffers_starved). */
#include "cupti_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "clock.h"
#include "pipeline.h"

struct gt_cupti_buffer {
    gt_cupti_buffer *next;
    size_t valid;
    /* CUPTI wants records 8-byte aligned; a cache line keeps the header
     * apart from them. */
    uint8_t data[] __attribute__((aligned(64)));
};

static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static gt_cupti_buffer *free_list; /* free_lock */
static unsigned made;              /* free_lock */
static unsigned bound = GT_CUPTI_BUFFERS_MIN;
/* Push: CAS release (the buffer's records happen-before the drain's
 * acquire exchange that takes the list). */
static _Atomic(gt_cupti_buffer *) completed;
static _Atomic uint64_t refused; /* relaxed: a count */
static _Atomic int starved;      /* relaxed: a request the drain acts on */
static int null_allowed = 1;     /* the CUPTI in use takes a NULL buffer (API version 27 on) */
/* Completed buffers a drain stopped before, oldest first: draining thread. */
static gt_cupti_buffer *unread;
static gt_cupti_buffer **unread_tail = &unread;

void gt_cupti_buffers_init(size_t event_buffer_bytes)
{
    size_t n = event_buffer_bytes / 8 / GT_CUPTI_BUFFER_BYTES;
    if (n < GT_CUPTI_BUFFERS_MIN) n = GT_CUPTI_BUFFERS_MIN;
    if (n > GT_CUPTI_BUFFERS_MAX) n = GT_CUPTI_BUFFERS_MAX;
    bound = (unsigned)n;
    uint32_t api = 0;
    null_allowed =
        !gt_cupti.get_version || gt_cupti.get_version(&api) != CUPTI_SUCCESS || api >= 27;
}

static gt_cupti_buffer *take_free(void)
{
    pthread_mutex_lock(&free_lock);
    gt_cupti_buffer *b = free_list;
    if (b) {
        free_list = b->next;
    } else if (made < bound || (!null_allowed && made < GT_CUPTI_BUFFERS_MAX)) {
        b = malloc(sizeof *b + GT_CUPTI_BUFFER_BYTES);
        if (b) made++;
    }
    pthread_mutex_unlock(&free_lock);
    return b;
}

static void give_back(gt_cupti_buffer *b)
{
    pthread_mutex_lock(&free_lock);
    b->next = free_list;
    free_list = b;
    pthread_mutex_unlock(&free_lock);
}

void CUPTIAPI gt_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    gt_cupti_buffer *b = take_free();
    *max_records = 0; /* as many as fit */
    if (b) {
        *buffer = b->data;
        *size = GT_CUPTI_BUFFER_BYTES;
        return;
    }
    atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
    if (null_allowed) {
        *buffer = NULL;
        *size = 0;
        return;
    }
    /* An older CUPTI would crash on NULL: one more buffer, and the drain
     * stops the records. */
    atomic_store_explicit(&starved, 1, memory_order_relaxed);
    b = malloc(sizeof *b + GT_CUPTI_BUFFER_BYTES);
    *buffer = b ? b->data : NULL;
    *size = b ? GT_CUPTI_BUFFER_BYTES : 0;
}

void CUPTIAPI gt_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                        size_t size, size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    if (!buffer) return;
    gt_cupti_buffer *b = (gt_cupti_buffer *)(void *)(buffer - offsetof(gt_cupti_buffer, data));
    b->valid = valid;
    gt_cupti_buffer *head = atomic_load_explicit(&completed, memory_order_relaxed);
    do
        b->next = head;
    while (!atomic_compare_exchange_weak_explicit(&completed, &head, b, memory_order_release,
                                                  memory_order_relaxed));
    gt_drain_wake();
}

unsigned gt_cupti_buffers_drain(void (*read)(const uint8_t *records, size_t valid),
                                uint64_t until_ns, int (*stop)(void))
{
    /* The newly completed, oldest first, after those left unread. */
    gt_cupti_buffer *b = atomic_exchange_explicit(&completed, NULL, memory_order_acquire);
    gt_cupti_buffer *fresh = NULL;
    while (b) {
        gt_cupti_buffer *next = b->next;
        b->next = fresh;
        fresh = b;
        b = next;
    }
    *unread_tail = fresh;
    while (*unread_tail)
        unread_tail = &(*unread_tail)->next;
    unsigned n = 0;
    while (unread) {
        if (n && ((stop && stop()) || (until_ns && gt_clock_mono_ns() >= until_ns))) break;
        gt_cupti_buffer *next = unread->next;
        if (unread->valid) read(unread->data, unread->valid);
        give_back(unread);
        unread = next;
        n++;
    }
    if (!unread) unread_tail = &unread;
    return n;
}

uint64_t gt_cupti_buffers_refused(void)
{
    return atomic_load_explicit(&refused, memory_order_relaxed);
}

int gt_cupti_buffers_starved(void)
{
    return atomic_load_explicit(&starved, memory_order_relaxed);
}

void gt_cupti_buffers_forget(void)
{
    free_list = NULL;
    made = 0;
    unread = NULL;
    unread_tail = &unread;
    atomic_store_explicit(&completed, NULL, memory_order_relaxed);
    pthread_mutex_init(&free_lock, NULL);
}
