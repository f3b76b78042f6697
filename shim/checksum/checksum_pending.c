/* The asynchronous device-to-host copies that await their synchronize
 * (checksum.h), and the events recorded after them.
 *
 * One table for the process, not one per thread: a program may
 * synchronize on one thread with a copy another thread queued. It is
 * bounded (PENDING_MAX copies: the oldest gives way, counted, when a new
 * one comes to a full table; EVENTS_MAX events, the oldest forgotten), so
 * it costs the same however long the program runs. A mutex guards it,
 * taken only while checksums are on and never across a hash or a CUDA
 * call: the copies a synchronize covers are taken out under it and
 * hashed after. Held across fork (fork_lock.h); a forked child empties
 * the table, whose copies were the parent's.
 *
 * What a synchronize covers, as CUDA orders work:
 *  - a stream: the copies queued on it (the legacy and per-thread default
 *    streams are each their context's, the per-thread one also its
 *    thread's);
 *  - an event: the copies queued on the stream it was recorded on before
 *    the record;
 *  - a context: every copy queued in it.
 * Nothing else is taken as covering a copy (the legacy stream's implicit
 * waits, stream and event queries, host functions): such copies wait for
 * a synchronize that does, or end unhashed. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "checksum.h"
#include "checksum_internal.h"
#include "checksum_mode.h"
#include "event.h"
#include "fork_lock.h"
#include "process.h"
#include "record.h"

#define PENDING_MAX 1024u
#define EVENTS_MAX 256u
#define BATCH 64u /* copies taken out per round under the lock */

/* Which copies a synchronize covers. */
typedef struct scope {
    uint64_t stream;  /* with by_stream */
    uint64_t context; /* the stream's (legacy, per-thread), or the synchronized context */
    uint32_t tid;     /* a per-thread stream's thread */
    uint64_t before;  /* only copies queued before this order (an event's record) */
    bool by_stream;
} scope;

typedef struct pending {
    gt_checksum_id id;
    uint64_t context;
    uint64_t order; /* queued: the process's count of pending copies then */
    uint32_t tid;
} pending;

typedef struct event_note {
    uint64_t event;
    scope at;      /* the stream it was recorded on, and the order then */
    uint64_t seen; /* recency, for replacing the oldest */
} event_note;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
GT_FORK_LOCK(lock)
static pending table[PENDING_MAX]; /* [0, count) in use, unordered */
/* Written under the lock; read without it (relaxed) to skip an empty
 * table: a copy another thread queues meanwhile is one this thread's call
 * could not cover anyway. */
static _Atomic uint32_t count;
static uint64_t orders; /* under the lock */
static event_note events[EVENTS_MAX];
static uint64_t event_clock; /* under the lock */
static __thread uint32_t my_tid __attribute__((tls_model("initial-exec")));

static uint32_t tid(void)
{
    if (!my_tid) my_tid = (uint32_t)syscall(SYS_gettid);
    return my_tid;
}

static uint32_t n_pending(void)
{
    return atomic_load_explicit(&count, memory_order_relaxed);
}

/* Removes table[i] (the last entry takes its place). */
static pending take(uint32_t i)
{
    pending p = table[i];
    uint32_t n = n_pending() - 1;
    table[i] = table[n];
    atomic_store_explicit(&count, n, memory_order_relaxed);
    return p;
}

/* Streams whose handle is not unique in the process: per context (and
 * thread), as CUDA resolves them. */
static bool stream_is_local(uint64_t stream)
{
    return stream == 0 || stream == GT_PER_THREAD_STREAM;
}

static bool covers(const scope *s, const pending *p)
{
    if (s->before && p->order >= s->before) return false;
    if (!s->by_stream) return p->context == s->context;
    if (p->id.stream != s->stream) return false;
    if (!stream_is_local(s->stream)) return true;
    return p->context == s->context && (s->stream != GT_PER_THREAD_STREAM || p->tid == s->tid);
}

static bool overlaps(const pending *p, uintptr_t dst, uint64_t bytes)
{
    return p->id.dst < dst + bytes && dst < p->id.dst + p->id.bytes;
}

/* Takes the copies of the table that `match` accepts, up to BATCH at a
 * time, and gives each to `done` outside the lock, until none is left. */
static void drain(bool (*match)(const pending *p, const void *ctx), const void *ctx,
                  void (*done)(const pending *p, void *arg), void *arg)
{
    while (n_pending()) {
        pending out[BATCH];
        uint32_t n = 0;
        pthread_mutex_lock(&lock);
        for (uint32_t i = 0; i < n_pending() && n < BATCH;) {
            if (match(&table[i], ctx))
                out[n++] = take(i);
            else
                i++;
        }
        pthread_mutex_unlock(&lock);
        for (uint32_t i = 0; i < n; i++)
            done(&out[i], arg);
        if (n < BATCH) return;
    }
}

static bool match_scope(const pending *p, const void *ctx)
{
    return covers(ctx, p);
}

static void hash_it(const pending *p, void *arg)
{
    (void)arg;
    gt_checksum_hash_now(&p->id, 1);
}

static void unhashed(const pending *p, void *arg)
{
    gt_checksum_record_unhashed(&p->id, *(const enum gt_checksum_status *)arg);
}

static void synced(const scope *s)
{
    if (gt_tls.guard || !n_pending()) return;
    int saved = errno;
    drain(match_scope, s, hash_it, NULL);
    errno = saved;
}

void gt_checksum_stream_synced(uint64_t stream, uint64_t context)
{
    scope s = {.stream = stream, .context = context, .tid = tid(), .by_stream = true};
    synced(&s);
}

void gt_checksum_context_synced(uint64_t context)
{
    scope s = {.context = context};
    synced(&s);
}

/* The note of an event, or where a new one goes (the oldest). */
static event_note *note_of(uint64_t event, bool make)
{
    event_note *oldest = &events[0];
    for (uint32_t i = 0; i < EVENTS_MAX; i++) {
        if (events[i].event == event && events[i].seen) return &events[i];
        if (events[i].seen < oldest->seen) oldest = &events[i];
    }
    return make ? oldest : NULL;
}

void gt_checksum_event_recorded(uint64_t event, uint64_t stream, uint64_t context)
{
    if (gt_tls.guard || !event) return;
    int saved = errno;
    pthread_mutex_lock(&lock);
    event_note *n = note_of(event, true);
    *n = (event_note){.event = event,
                      .at = {.stream = stream,
                             .context = context,
                             .tid = tid(),
                             .before = orders + 1,
                             .by_stream = true},
                      .seen = ++event_clock};
    pthread_mutex_unlock(&lock);
    errno = saved;
}

void gt_checksum_event_synced(uint64_t event)
{
    if (gt_tls.guard || !n_pending()) return;
    int saved = errno;
    pthread_mutex_lock(&lock);
    event_note *n = note_of(event, false);
    scope s = n ? n->at : (scope){0};
    pthread_mutex_unlock(&lock);
    /* An event never seen recorded (before checksums started, or
     * forgotten) covers nothing. */
    if (n) drain(match_scope, &s, hash_it, NULL);
    errno = saved;
}

void gt_checksum_pending_add(const gt_checksum_id *id, uint64_t context)
{
    pending p = {.id = *id, .context = context, .tid = tid()};
    pending evicted;
    bool full;
    pthread_mutex_lock(&lock);
    p.order = ++orders;
    full = n_pending() == PENDING_MAX;
    if (full) {
        uint32_t oldest = 0;
        for (uint32_t i = 1; i < PENDING_MAX; i++)
            if (table[i].order < table[oldest].order) oldest = i;
        evicted = take(oldest);
    }
    table[n_pending()] = p;
    atomic_store_explicit(&count, n_pending() + 1, memory_order_relaxed);
    pthread_mutex_unlock(&lock);
    if (full) gt_checksum_record_unhashed(&evicted.id, GT_CK_PENDING_FULL);
}

typedef struct range {
    uintptr_t dst;
    uint64_t bytes;
} range;

static bool match_range(const pending *p, const void *ctx)
{
    const range *r = ctx;
    return overlaps(p, r->dst, r->bytes);
}

void gt_checksum_pending_overwritten(uintptr_t dst, uint64_t bytes)
{
    if (!n_pending() || !bytes) return;
    range r = {dst, bytes};
    enum gt_checksum_status why = GT_CK_OVERWRITTEN;
    drain(match_range, &r, unhashed, &why);
}

static bool match_all(const pending *p, const void *ctx)
{
    (void)p;
    (void)ctx;
    return true;
}

void gt_checksum_exit(void)
{
    if (gt_tls.guard || !n_pending()) return;
    int saved = errno;
    enum gt_checksum_status why = GT_CK_UNSYNCED;
    drain(match_all, NULL, unhashed, &why);
    errno = saved;
}

static void pending_fork_child(void)
{
    atomic_store_explicit(&count, 0, memory_order_relaxed);
    orders = 0;
    event_clock = 0;
    for (uint32_t i = 0; i < EVENTS_MAX; i++)
        events[i] = (event_note){0};
    my_tid = 0;
}

__attribute__((constructor)) static void checksum_pending_load(void)
{
    gt_atfork_child_add(pending_fork_child);
}
