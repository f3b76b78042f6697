/* What a hook uses to record: the calling thread's TLS, its chunk, and the
 * event API (gt_ev_begin / gt_ev_commit) over them. Data flows one way
 * (DESIGN §1): hook -> this thread's chunk -> publish list -> drain thread
 * -> the consumer the pipeline was started with. Memory ordering is stated
 * at every publish point. */
#ifndef GT_RECORD_H
#define GT_RECORD_H

#include <stdatomic.h>
#include <stdint.h>

#include "compiler.h"
#include "event.h"

/* Per-thread state. `gt_tls` is initial-exec TLS (the hot path reads it
 * with one %fs-relative load); `gt_thread` is the heap part that other
 * threads may read (registry). */

typedef struct gt_chunk gt_chunk;
typedef struct gt_thread gt_thread;

enum gt_tls_state {
    /* Not registered: before the first record, and again after the TLS
     * destructor (a later destructor of another library may still record:
     * the thread registers again and is handed over in the next round). */
    GT_TLS_FRESH,
    GT_TLS_ACTIVE, /* registered */
    GT_TLS_NEVER   /* a shim thread: never records */
};

struct gt_tls {
    gt_chunk *chunk;   /* current chunk, NULL when none */
    uint32_t count;    /* records committed to chunk (also in chunk->committed) */
    uint32_t capacity; /* records chunk holds; 0 when none: the slow path runs */
    uint32_t guard;    /* non-zero: inside the shim (a slot is open, or shim work) */
    uint32_t tid;
    uint64_t seq;    /* next record's sequence number */
    uint32_t serial; /* kept when the thread registers again: its records stay one sequence */
    gt_thread *thr;
    uint8_t state;       /* enum gt_tls_state */
    uint8_t finishing;   /* this thread is finishing the pipeline */
    uint8_t chunk_class; /* the size of its next chunk (buffer.c) */
};

extern __thread struct gt_tls gt_tls __attribute__((tls_model("initial-exec")));

/* --------------------------------------------------------- buffer.c, chunks
 * A chunk is one mmap'ed block: a 128-byte header, then gt_event slots.
 * Ownership moves: owner thread (OPEN) -> publish list (PUBLISHED) -> drain
 * -> free stack -> a new owner; or, at an end step, OPEN -> STOLEN by the
 * drain, which then reads what the owner commits until the owner moves on
 * to another chunk, and recycles it. */

enum gt_chunk_state { GT_CHUNK_OPEN, GT_CHUNK_PUBLISHED, GT_CHUNK_STOLEN };

struct gt_chunk {
    union {
        struct {
            gt_chunk *next; /* publish list / drain queues; written only by the
                               chunk's current holder */
            /* Owner: store-release after each record (gt_ev_commit).
             * Readers: load-acquire, then read the records below it. */
            _Atomic uint32_t committed;
            /* enum gt_chunk_state; OPEN -> PUBLISHED (owner) or OPEN -> STOLEN
             * (collector) by compare-exchange, acq_rel: whoever wins owns
             * the records. */
            _Atomic uint32_t state;
            /* Link in the free stack (table index + 1). Relaxed: the stack's
             * head CAS orders it, and a stale reader's value is discarded by
             * the tag check. */
            _Atomic uint32_t free_next;
            uint32_t index;     /* in the pool table */
            uint8_t size_class; /* its size (buffer.c), set when it is mapped */
            uint32_t owner; /* registration serial of the owner thread */
            uint32_t limit; /* drain: records to consume */
            uint32_t done;  /* drain: records already consumed */
            /* Set by the owner when it takes the chunk: the seq its first
             * record gets (its thread's chunks are ordered by it), and its
             * registry node (a stolen chunk is its thread's to write for
             * as long as the node's `current` is this chunk). */
            uint64_t first_seq;
            gt_thread *thr;
        } h;
        char header_bytes[128];
    };
    gt_event ev[];
};

#define GT_CHUNK_MIN_BYTES 4096u
#define GT_CHUNK_DEFAULT_BYTES 65536u

/* ------------------------------------------------------------ the event API
 * What a hook does:
 *
 *     uint64_t t0 = gt_clock_ticks();
 *     CUresult r = real_fn(args);
 *     gt_event *ev = gt_ev_begin();      // NULL: not recorded (see below)
 *     if (ev) {
 *         ev->kind = GT_EV_KERNEL; ev->api = id; ev->result = r;
 *         ev->host_start = t0; ev->host_end = gt_clock_ticks(); ...
 *         gt_ev_commit(ev);
 *     }
 *
 * gt_ev_begin returns a zeroed slot with seq and tid filled, or NULL when
 * the record cannot be stored (no chunk within the memory cap: counted as
 * dropped), when the thread is inside the shim already (a slot is open on
 * this thread, or this is a shim thread such as the drain: not counted),
 * or when recording is closed (before load, after exit). Between begin and
 * commit the thread's guard is held, so a hook reached from inside another
 * hook's begin..commit window records nothing; begin may also be called
 * before the real call, at the price of that window covering it.
 *
 * Cost: fast path (a slot left in the chunk) ~ a TLS load, two compares,
 * 128 bytes of zero stores and a plain store-release (a mov on x86); no
 * atomic read-modify-write, no lock, no syscall. Once per chunk (511
 * records by default) the slow path publishes the full chunk (one CAS on
 * its state, one CAS push, one relaxed fetch-add) and pops a free chunk
 * (one CAS) or maps a new one (mmap, only while below the cap). The first
 * record of a thread registers it (lock-free) and may start the drain
 * thread. begin..commit touch errno only on the slow path, and restore it.
 * A slot must be committed before the thread begins another
 * and before it forks. */

gt_event *gt_ev_begin_slow(void);

/* Eight 16-byte stores: compilers turn a 128-byte memset into `rep stos`,
 * whose start-up alone costs more than the whole record. Slots are
 * 16-byte aligned (a page-aligned chunk, a 128-byte header). */
static inline void gt_event_zero(gt_event *ev)
{
    typedef long long zero16 __attribute__((vector_size(16), may_alias));
    zero16 *p = (zero16 *)(void *)ev;
    const zero16 z = {0, 0};
    p[0] = z, p[1] = z, p[2] = z, p[3] = z, p[4] = z, p[5] = z, p[6] = z, p[7] = z;
}

static inline gt_event *gt_ev_begin(void)
{
    struct gt_tls *t = &gt_tls;
    if (GT_LIKELY(t->count < t->capacity && !t->guard)) {
        gt_event *ev = &t->chunk->ev[t->count];
        gt_event_zero(ev);
        ev->seq = t->seq++;
        ev->tid = t->tid;
        t->guard = 1;
        return ev;
    }
    return gt_ev_begin_slow();
}

static inline void gt_ev_commit(gt_event *ev)
{
    struct gt_tls *t = &gt_tls;
    (void)ev; /* always the slot at t->count: one open slot per thread */
    /* Release: the record's stores become visible to whoever loads the
     * count with acquire (the exit collector reading a live chunk). */
    atomic_store_explicit(&t->chunk->h.committed, ++t->count, memory_order_release);
    t->guard = 0;
}

/* Publishes the calling thread's partial chunk now, so that the drain sees
 * its records before the thread blocks for long (a synchronize call whose
 * pending GPU records should resolve meanwhile). The rest of the chunk is
 * not used; the next record starts a new one. Costs one slow path. */
void gt_ev_flush(void);

/* Shim work on a program thread that must not be recorded (the shim's own
 * CUDA calls from a hook). Returns 0 when the guard was already held: the
 * caller is nested and must not leave it. */
static inline int gt_guard_enter(void)
{
    if (gt_tls.guard) return 0;
    gt_tls.guard = 1;
    return 1;
}

static inline void gt_guard_leave(void)
{
    gt_tls.guard = 0;
}

#endif
