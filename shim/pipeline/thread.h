/* The registry of recording threads (thread.c): through it the end steps
 * find every live thread's current chunk. */
#ifndef GT_THREAD_H
#define GT_THREAD_H

#include <stdatomic.h>
#include <stdint.h>

#include "record.h"

struct gt_thread {
    _Atomic(gt_thread *) next; /* registry list: push-only, nodes reused */
    _Atomic uint32_t in_use;   /* 0 free, 1 claimed: CAS acquire / store release */
    uint32_t serial;           /* unique per registration: chunk owner id */
    uint32_t tid;
    /* The owner's current chunk. Owner: store-release after initialising a
     * new chunk; collector: load-acquire, then compete for it by CAS on its
     * state. NULL when the thread holds none. */
    _Atomic(gt_chunk *) current;
    /* Records this thread could not store. Only the owner writes (relaxed
     * load + store, no read-modify-write); summed once at the end. */
    _Atomic uint64_t dropped;
};

/* Registers the calling thread (claims or adds a registry node). NULL when
 * no memory: the caller counts its records as dropped without a thread. */
gt_thread *gt_thread_register(void);
void gt_threads_init(void);
void gt_thread_count_dropped(void); /* the calling thread lost one record */
uint64_t gt_threads_dropped(void);  /* live threads' + exited threads' */
void gt_threads_for_each(void (*fn)(gt_thread *thr, void *ctx), void *ctx);
void gt_threads_reset(void); /* forget every thread (fork child, tests) */
uint32_t gt_threads_live(void); /* registered and not exited (a hint: no order) */
void gt_tls_reset(void);     /* the calling thread starts fresh */

#endif
