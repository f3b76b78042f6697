/* Per-thread state: the TLS the hot path uses, and the registry through
 * which the exit collection finds every live thread's current chunk.
 *
 * The registry is a push-only list of nodes that are never freed: a
 * thread claims a free node (or adds one) at its first record and frees it
 * in its TLS destructor, so the list is as long as the most threads that
 * ever recorded at once, and walking it needs no lock. */
#include "thread.h"

#include "buffer.h"
#include "record.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__thread struct gt_tls gt_tls __attribute__((tls_model("initial-exec")));

static _Atomic(gt_thread *) registry; /* push: CAS release; walk: load acquire */
static _Atomic uint32_t next_serial;  /* relaxed: only uniqueness matters */
static _Atomic uint32_t live;         /* registered threads alive; relaxed: a sizing hint */
/* Records lost by threads that have exited or could not register.
 * Relaxed: summed once, after the end. */
static _Atomic uint64_t orphan_dropped;
static pthread_key_t exit_key;
static int exit_key_ok;

static void thread_exit(void *unused)
{
    (void)unused;
    struct gt_tls *t = &gt_tls;
    if (t->state != GT_TLS_ACTIVE) return;
    int saved = errno;
    gt_buffer_release_thread();
    gt_thread *thr = t->thr;
    atomic_fetch_add_explicit(&orphan_dropped,
                              atomic_load_explicit(&thr->dropped, memory_order_relaxed),
                              memory_order_relaxed);
    atomic_store_explicit(&thr->dropped, 0, memory_order_relaxed);
    /* Release: the chunk hand-over above is done before another thread can
     * claim the node. */
    atomic_store_explicit(&thr->in_use, 0, memory_order_release);
    atomic_fetch_sub_explicit(&live, 1, memory_order_relaxed);
    t->thr = NULL;
    t->state = GT_TLS_FRESH;
    errno = saved;
}

void gt_threads_init(void)
{
    if (!exit_key_ok) exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

static gt_thread *claim_node(void)
{
    gt_thread *n = atomic_load_explicit(&registry, memory_order_acquire);
    for (; n; n = atomic_load_explicit(&n->next, memory_order_acquire)) {
        uint32_t free_node = 0;
        if (atomic_load_explicit(&n->in_use, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong_explicit(&n->in_use, &free_node, 1, memory_order_acquire,
                                                    memory_order_relaxed))
            return n;
    }
    n = calloc(1, sizeof *n);
    if (!n) return NULL;
    atomic_init(&n->in_use, 1);
    gt_thread *head = atomic_load_explicit(&registry, memory_order_relaxed);
    do {
        atomic_store_explicit(&n->next, head, memory_order_relaxed);
    } while (!atomic_compare_exchange_weak_explicit(&registry, &head, n, memory_order_release,
                                                    memory_order_relaxed));
    return n;
}

gt_thread *gt_thread_register(void)
{
    gt_thread *thr = claim_node();
    if (!thr) return NULL;
    struct gt_tls *t = &gt_tls;
    if (!t->serial)
        t->serial = atomic_fetch_add_explicit(&next_serial, 1, memory_order_relaxed) + 1;
    thr->serial = t->serial;
    thr->tid = (uint32_t)gettid();
    atomic_store_explicit(&thr->current, NULL, memory_order_relaxed);
    t->thr = thr;
    t->tid = thr->tid;
    t->state = GT_TLS_ACTIVE;
    atomic_fetch_add_explicit(&live, 1, memory_order_relaxed);
    if (exit_key_ok) pthread_setspecific(exit_key, thr);
    return thr;
}

void gt_thread_count_dropped(void)
{
    gt_thread *thr = gt_tls.thr;
    if (thr)
        atomic_store_explicit(&thr->dropped,
                              atomic_load_explicit(&thr->dropped, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&orphan_dropped, 1, memory_order_relaxed);
}

void gt_threads_for_each(void (*fn)(gt_thread *thr, void *ctx), void *ctx)
{
    gt_thread *n = atomic_load_explicit(&registry, memory_order_acquire);
    for (; n; n = atomic_load_explicit(&n->next, memory_order_acquire))
        fn(n, ctx);
}

static void add_dropped(gt_thread *thr, void *ctx)
{
    *(uint64_t *)ctx += atomic_load_explicit(&thr->dropped, memory_order_relaxed);
}

uint64_t gt_threads_dropped(void)
{
    uint64_t n = atomic_load_explicit(&orphan_dropped, memory_order_relaxed);
    gt_threads_for_each(add_dropped, &n);
    return n;
}

static void forget(gt_thread *thr, void *ctx)
{
    (void)ctx;
    atomic_store_explicit(&thr->current, NULL, memory_order_relaxed);
    atomic_store_explicit(&thr->dropped, 0, memory_order_relaxed);
    atomic_store_explicit(&thr->in_use, 0, memory_order_relaxed);
}

void gt_threads_reset(void)
{
    gt_threads_for_each(forget, NULL);
    atomic_store_explicit(&orphan_dropped, 0, memory_order_relaxed);
    atomic_store_explicit(&live, 0, memory_order_relaxed);
}

uint32_t gt_threads_live(void)
{
    return atomic_load_explicit(&live, memory_order_relaxed);
}

void gt_tls_reset(void)
{
    struct gt_tls *t = &gt_tls;
    uint32_t guard = t->guard;
    memset(t, 0, sizeof *t);
    t->guard = guard;
    if (exit_key_ok) pthread_setspecific(exit_key, NULL);
}
