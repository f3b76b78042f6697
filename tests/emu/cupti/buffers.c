/* Activity records on their way to the client: a queue of records ordered
 * by the time they are complete, the client's buffers they are written
 * into, and the worker thread.
 *
 * A record enters the queue when its API call returns or its work is
 * scheduled, and is written into the buffer being filled once complete (its
 * simulated end passed), by the worker thread or by a flush. A full buffer
 * is completed (handed back through the client's callback) on the worker
 * thread, as CUPTI does; a flush completes the buffers it delivers on the
 * flushing thread. The client's callbacks are never called with a lock
 * held, so they may call CUPTI; nothing here waits without a bound for a
 * client callback running on another thread. */
#include "cupti_emu.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How often the worker moves complete records into the buffer when the
 * client set no flush period, and never more often than the minimum. */
#define DEFAULT_PERIOD_MS 10u
#define MIN_WAKE_NS 1000000ULL
/* The worker is woken early whenever this many more records are queued. */
#define WAKE_BATCH 4096u
/* A flush waits this long at most for a completion in progress on the
 * worker thread. */
#define FLUSH_WAIT_NS 1000000000ULL
/* Complete records an emitting thread moves into the buffer with each
 * record it queues. */
#define MOVED_PER_EMIT 2u

struct pending {
    bool gpu_times;
    struct pending *next_free;
    gt_cupti_record rec;
};

/* A heap slot keeps its order keys beside the record's pointer: ordering
 * hundreds of thousands of queued records then never touches the records
 * themselves (a cache miss each, which made a flush of a long queue take
 * most of a second). */
struct slot {
    uint64_t ready_at; /* CLOCK_MONOTONIC */
    uint64_t seq;      /* ties keep the order records were made in */
    struct pending *p;
};

struct buffer {
    uint8_t *data;
    size_t size, used, records, max_records;
};

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t worker_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t worker_idle = PTHREAD_COND_INITIALIZER;

/* Everything below: queue_lock. */
static struct slot *heap; /* a binary min-heap on (ready_at, seq) */
static size_t heap_count, heap_capacity;
static struct pending *free_pending;
static uint64_t next_seq;
static uint64_t records_made, gpu_records_made; /* for the faults */
static size_t dropped;

static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static struct buffer current, spare;
static struct buffer *full; /* completed in order */
static size_t full_count, full_capacity;

static bool worker_started, worker_busy;
static int flushing; /* flushes in progress: the worker leaves full buffers to them */
static uint32_t period_ms;

/* The thread is the worker / is inside the client's buffer request. */
static __thread bool on_worker, in_request;

/* ---- the queue ---- */

static bool before(const struct slot *a, const struct slot *b)
{
    return a->ready_at != b->ready_at ? a->ready_at < b->ready_at : a->seq < b->seq;
}

static void swap_at(size_t i, size_t j)
{
    struct slot t = heap[i];
    heap[i] = heap[j];
    heap[j] = t;
}

static bool heap_push(struct pending *p, uint64_t ready_at)
{
    if (heap_count == heap_capacity) {
        size_t capacity = heap_capacity ? 2 * heap_capacity : 1024;
        struct slot *grown = realloc(heap, capacity * sizeof *grown);
        if (!grown) return false;
        heap = grown;
        heap_capacity = capacity;
    }
    size_t i = heap_count++;
    heap[i] = (struct slot){ready_at, next_seq++, p};
    while (i > 0 && before(&heap[i], &heap[(i - 1) / 2])) {
        swap_at(i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    return true;
}

static struct pending *heap_pop(void)
{
    struct pending *top = heap[0].p;
    heap[0] = heap[--heap_count];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < heap_count && before(&heap[l], &heap[m])) m = l;
        if (r < heap_count && before(&heap[r], &heap[m])) m = r;
        if (m == i) break;
        swap_at(i, m);
        i = m;
    }
    return top;
}

static void release(struct pending *p)
{
    p->next_free = free_pending;
    free_pending = p;
}

static void zero_times(gt_cupti_record *rec)
{
    switch (rec->base.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        rec->kernel.start = rec->kernel.end = rec->kernel.completed = 0;
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        rec->memcpy.start = rec->memcpy.end = 0;
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        rec->peer.start = rec->peer.end = 0;
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        rec->memset.start = rec->memset.end = 0;
        break;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        rec->graph.start = rec->graph.end = 0;
        break;
    default:
        break;
    }
}

/* Simulated CLOCK_MONOTONIC times to CUPTI's clock. */
static void convert_times(gt_cupti_record *rec, int64_t offset)
{
#define SHIFT(field) (field) = (uint64_t)((int64_t)(field) + offset)
    switch (rec->base.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        SHIFT(rec->kernel.start);
        SHIFT(rec->kernel.end);
        SHIFT(rec->kernel.completed);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        SHIFT(rec->memcpy.start);
        SHIFT(rec->memcpy.end);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        SHIFT(rec->peer.start);
        SHIFT(rec->peer.end);
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        SHIFT(rec->memset.start);
        SHIFT(rec->memset.end);
        break;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        SHIFT(rec->graph.start);
        SHIFT(rec->graph.end);
        break;
    default:
        break;
    }
#undef SHIFT
}

static void *worker_main(void *arg);
static void move_records(bool forced, uint64_t now, int64_t offset, uint64_t last_seq,
                         size_t limit);

/* queue_lock held. A worker that cannot be started leaves full buffers to
 * the next flush. */
static void start_worker(void)
{
    if (worker_started) return;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* The worker never takes the program's signals (SIGINT must reach it). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t tid;
    worker_started = pthread_create(&tid, &attr, worker_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

void gt_cupti_emit(const gt_cupti_record *rec, uint64_t ready_at, bool gpu_times)
{
    const struct gt_cupti_config *config = gt_cupti_config();
    int64_t offset = gt_cupti_gpu_offset();
    uint64_t now = gt_cupti_monotonic();
    pthread_mutex_lock(&queue_lock);
    records_made++;
    bool drop = !requested || (config->drop_every && records_made % config->drop_every == 0);
    struct pending *p = drop ? NULL : free_pending;
    if (p) {
        free_pending = p->next_free;
    } else if (!drop) {
        p = malloc(sizeof *p);
    }
    if (!p) {
        dropped++;
        pthread_mutex_unlock(&queue_lock);
        return;
    }
    *p = (struct pending){.gpu_times = gpu_times, .rec = *rec};
    if (gpu_times && config->zero_every && ++gpu_records_made % config->zero_every == 0) {
        zero_times(&p->rec);
        p->gpu_times = false;
    }
    if (!heap_push(p, ready_at)) {
        release(p);
        dropped++;
    } else if (heap_count % WAKE_BATCH == 0) {
        pthread_cond_signal(&worker_wake);
    }
    /* As the GPU and the driver write records as the work completes, not
     * all at a flush: the queue holds the incomplete, whatever share of
     * the CPU the worker gets. */
    if (!in_request) move_records(false, now, offset, next_seq, MOVED_PER_EMIT);
    start_worker();
    pthread_mutex_unlock(&queue_lock);
}

/* ---- buffers ---- */

static bool queue_full(struct buffer b)
{
    if (full_count == full_capacity) {
        size_t capacity = full_capacity ? 2 * full_capacity : 16;
        struct buffer *grown = realloc(full, capacity * sizeof *grown);
        if (!grown) return false;
        full = grown;
        full_capacity = capacity;
    }
    full[full_count++] = b;
    return true;
}

static size_t align_offset(const struct buffer *b)
{
    uintptr_t at = (uintptr_t)b->data + b->used;
    uintptr_t aligned = (at + GT_CUPTI_RECORD_ALIGN - 1) & ~(uintptr_t)(GT_CUPTI_RECORD_ALIGN - 1);
    return b->used + (size_t)(aligned - at);
}

static bool fits(const struct buffer *b, size_t size)
{
    if (b->max_records && b->records >= b->max_records) return false;
    size_t at = align_offset(b);
    return at <= b->size && b->size - at >= size;
}

/* queue_lock held; released while the client's callback runs. A buffer that
 * arrives when another thread installed one meanwhile is kept for later. */
static bool request_buffer(void)
{
    CUpti_BuffersCallbackRequestFunc request = requested;
    if (!request) return false;
    pthread_mutex_unlock(&queue_lock);
    uint8_t *data = NULL;
    size_t size = 0, max_records = 0;
    in_request = true;
    request(&data, &size, &max_records);
    in_request = false;
    pthread_mutex_lock(&queue_lock);
    if (!data || size == 0) return false;
    struct buffer b = {.data = data, .size = size, .max_records = max_records};
    if (!current.data)
        current = b;
    else if (!spare.data)
        spare = b;
    else
        queue_full(b); /* handed back empty */
    return true;
}

/* queue_lock held (released while the client is asked for a buffer).
 * Moves up to `limit` complete records (every record emitted before
 * last_seq when `forced`, the incomplete with zero timestamps) into
 * buffers; full buffers join the completion queue. */
static void move_records(bool forced, uint64_t now, int64_t offset, uint64_t last_seq, size_t limit)
{
    for (size_t moved = 0; heap_count > 0 && moved < limit;) {
        struct pending *p = heap[0].p;
        bool complete = heap[0].ready_at <= now + GT_CUPTI_SLACK_NS;
        if (!complete && !forced) break;
        if (forced && heap[0].seq >= last_seq) break;
        if (!current.data && spare.data) {
            current = spare;
            spare = (struct buffer){0};
        }
        if (!current.data) {
            /* No buffer from the client: the record waiting is dropped (the
             * queue may have changed while the client was asked). */
            if (!request_buffer() && heap_count > 0 &&
                (forced || heap[0].ready_at <= now + GT_CUPTI_SLACK_NS)) {
                release(heap_pop());
                dropped++;
            }
            continue;
        }
        size_t size = gt_cupti_record_size(p->rec.base.kind);
        if (!fits(&current, size)) {
            if (current.used == 0) {
                release(heap_pop()); /* larger than a whole buffer */
                dropped++;
            } else if (queue_full(current)) {
                current = (struct buffer){0};
            } else {
                break; /* no memory to queue it: the next drain tries again */
            }
            continue;
        }
        heap_pop();
        if (!complete)
            zero_times(&p->rec);
        else if (p->gpu_times)
            convert_times(&p->rec, offset);
        size_t at = align_offset(&current);
        memcpy(current.data + at, &p->rec, size);
        current.used = at + size;
        current.records++;
        release(p);
        moved++;
    }
}

/* Moves every complete record (every record when `forced`) into buffers. */
static void drain(bool forced)
{
    int64_t offset = gt_cupti_gpu_offset();
    uint64_t now = gt_cupti_monotonic();
    pthread_mutex_lock(&queue_lock);
    /* Records emitted while the client is asked for a buffer (the lock let
     * go) are the next drain's: a forced one would otherwise never end. */
    move_records(forced, now, offset, next_seq, SIZE_MAX);
    if (full_count > 0) pthread_cond_signal(&worker_wake);
    pthread_mutex_unlock(&queue_lock);
}

/* queue_lock held; released while the client's callback runs. */
static void complete_first_full(void)
{
    struct buffer b = full[0];
    memmove(full, full + 1, (full_count - 1) * sizeof *full);
    full_count--;
    CUpti_BuffersCallbackCompleteFunc complete = completed;
    pthread_mutex_unlock(&queue_lock);
    if (complete) complete(NULL, 0, b.data, b.size, b.used);
    pthread_mutex_lock(&queue_lock);
}

static void *worker_main(void *arg)
{
    (void)arg;
    on_worker = true;
    pthread_mutex_lock(&queue_lock);
    for (;;) {
        while (full_count > 0 && flushing == 0) {
            worker_busy = true;
            complete_first_full();
            worker_busy = false;
            pthread_cond_broadcast(&worker_idle);
        }
        uint64_t now = gt_cupti_monotonic();
        uint64_t wake = now + (uint64_t)(period_ms ? period_ms : DEFAULT_PERIOD_MS) * 1000000ULL;
        if (heap_count > 0 && heap[0].ready_at < wake) wake = heap[0].ready_at;
        if (wake < now + MIN_WAKE_NS) wake = now + MIN_WAKE_NS;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        uint64_t ns = (uint64_t)until.tv_nsec + (wake - now);
        until.tv_sec += (time_t)(ns / 1000000000ULL);
        until.tv_nsec = (long)(ns % 1000000000ULL);
        if (full_count == 0 || flushing > 0)
            pthread_cond_timedwait(&worker_wake, &queue_lock, &until);
        pthread_mutex_unlock(&queue_lock);
        drain(false);
        pthread_mutex_lock(&queue_lock);
    }
    return NULL;
}

/* queue_lock held: waits for a completion in progress on the worker, but
 * not for ever (the client's callback may wait for this thread). */
static void wait_for_worker(void)
{
    if (on_worker) return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(FLUSH_WAIT_NS / 1000000000ULL);
    while (worker_busy)
        if (pthread_cond_timedwait(&worker_idle, &queue_lock, &until) == ETIMEDOUT) break;
}

/* queue_lock held: the buffer being filled goes to the completion queue;
 * an empty one only when `empty_too` (a forced flush hands back every
 * buffer CUPTI holds, so that a client that stops tracing gets them all). */
static void queue_held(struct buffer *b, bool empty_too)
{
    if (b->data && (b->used > 0 || empty_too) && queue_full(*b)) *b = (struct buffer){0};
}

void gt_cupti_flush(bool forced)
{
    if (in_request) return; /* from inside the buffer request: nothing to deliver into */
    drain(forced);
    pthread_mutex_lock(&queue_lock);
    flushing++;
    wait_for_worker();
    queue_held(&current, forced);
    if (forced) queue_held(&spare, true);
    while (full_count > 0)
        complete_first_full();
    flushing--;
    pthread_mutex_unlock(&queue_lock);
}

/* ---- settings and the rest ---- */

bool gt_cupti_callbacks_registered(void)
{
    pthread_mutex_lock(&queue_lock);
    bool registered = requested != NULL;
    pthread_mutex_unlock(&queue_lock);
    return registered;
}

void gt_cupti_set_buffer_callbacks(CUpti_BuffersCallbackRequestFunc request,
                                   CUpti_BuffersCallbackCompleteFunc complete)
{
    pthread_mutex_lock(&queue_lock);
    requested = request;
    completed = complete;
    pthread_mutex_unlock(&queue_lock);
}

void gt_cupti_set_flush_period(uint32_t ms)
{
    pthread_mutex_lock(&queue_lock);
    period_ms = ms;
    pthread_cond_signal(&worker_wake);
    pthread_mutex_unlock(&queue_lock);
}

size_t gt_cupti_take_dropped(void)
{
    pthread_mutex_lock(&queue_lock);
    size_t n = dropped;
    dropped = 0;
    pthread_mutex_unlock(&queue_lock);
    return n;
}

/* queue_lock held. */
static void forget_records(void)
{
    while (heap_count > 0)
        release(heap_pop());
    current = spare = (struct buffer){0};
    full_count = 0;
}

void gt_cupti_discard_records(void)
{
    pthread_mutex_lock(&queue_lock);
    forget_records();
    pthread_mutex_unlock(&queue_lock);
}

void gt_cupti_buffers_prefork(void)
{
    pthread_mutex_lock(&queue_lock);
}

void gt_cupti_buffers_postfork(bool child)
{
    if (child) {
        /* The parent delivers its own records; the worker is not copied,
         * and its waits on the condition variables went with it. */
        forget_records();
        worker_started = worker_busy = false;
        flushing = 0;
        pthread_cond_init(&worker_wake, NULL);
        pthread_cond_init(&worker_idle, NULL);
    }
    pthread_mutex_unlock(&queue_lock);
}
