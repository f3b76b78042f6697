/* The copy side of the checksums (checksum.h): each thread numbers its
 * device-to-host copies in program order, hashes a copy whose data is
 * there, hands the others to the pending list, and makes one record per
 * copy. Threads are numbered in the order of their first such copy. */
#include "checksum.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "checksum_hash.h"
#include "checksum_internal.h"
#include "checksum_mode.h"
#include "clock.h"
#include "config.h"
#include "event.h"
#include "intercept.h"
#include "process.h"
#include "record.h"

static _Atomic uint32_t threads_numbered; /* relaxed: a counter, nothing ordered by it */
static __thread uint32_t thread_number __attribute__((tls_model("initial-exec"))); /* + 1 */
static __thread uint64_t copies_made __attribute__((tls_model("initial-exec")));

/* The calling thread's next copy. */
static gt_checksum_id next_copy(const gt_checksum_copy *c)
{
    if (!thread_number)
        thread_number = atomic_fetch_add_explicit(&threads_numbered, 1, memory_order_relaxed) + 1;
    return (gt_checksum_id){.dst = (uintptr_t)c->dst,
                            .bytes = c->bytes,
                            .index = copies_made++,
                            .stream = c->stream,
                            .thread = thread_number - 1,
                            .site = c->site};
}

static void record(const gt_checksum_id *id, enum gt_checksum_status status, uint64_t hash,
                   uint64_t t0, uint64_t t1)
{
    gt_event *ev = gt_ev_begin();
    if (!ev) return;
    ev->kind = GT_EV_CHECKSUM;
    ev->device = GT_NO_DEVICE;
    ev->bytes = id->bytes;
    ev->stream = id->stream;
    ev->site = id->site;
    ev->host_start = t0;
    ev->host_end = t1;
    ev->u.checksum.hash = hash;
    ev->u.checksum.index = id->index;
    ev->u.checksum.thread = id->thread;
    ev->u.checksum.status = (uint8_t)status;
    gt_ev_commit(ev);
}

void gt_checksum_record_unhashed(const gt_checksum_id *id, enum gt_checksum_status why)
{
    uint64_t now = gt_clock_ticks();
    record(id, why, 0, now, now);
}

/* A buffer that waited is read only while it is still the page-locked
 * memory the copy went to: freed, it may be unmapped. */
static int still_pinned(const gt_checksum_id *id)
{
    return gt_host_mem_kind((const void *)id->dst) == GT_HOST_PINNED &&
           gt_host_mem_kind((const void *)(id->dst + id->bytes - 1)) == GT_HOST_PINNED;
}

void gt_checksum_hash_now(const gt_checksum_id *id, int waited)
{
    uint64_t t0 = gt_clock_ticks();
    if (id->bytes && waited && !still_pinned(id)) {
        record(id, GT_CK_FREED, 0, t0, t0);
        return;
    }
    uint64_t hash = gt_checksum_hash(gt_cfg.checksum, (const void *)id->dst, id->bytes);
    record(id, GT_CK_HASHED, hash, t0, gt_clock_ticks());
}

void gt_checksum_copied(const gt_checksum_copy *c)
{
    if (gt_tls.guard) return;
    int saved = errno;
    gt_checksum_pending_overwritten((uintptr_t)c->dst, c->bytes);
    gt_checksum_id id = next_copy(c);
    if (c->strided)
        gt_checksum_record_unhashed(&id, GT_CK_STRIDED);
    else if (c->pending)
        gt_checksum_pending_add(&id, c->context);
    else
        gt_checksum_hash_now(&id, 0);
    errno = saved;
}

void gt_checksum_host_written(const void *dst, uint64_t bytes)
{
    if (gt_tls.guard) return;
    int saved = errno;
    gt_checksum_pending_overwritten((uintptr_t)dst, bytes);
    errno = saved;
}

/* A forked child numbers its own threads and copies. */
static void checksum_fork_child(void)
{
    atomic_store_explicit(&threads_numbered, 0, memory_order_relaxed);
    thread_number = 0;
    copies_made = 0;
}

__attribute__((constructor)) static void checksum_copy_load(void)
{
    gt_atfork_child_add(checksum_fork_child);
}
