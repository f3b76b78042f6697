/* The call stacks taken on the hot path, by id.
 *
 * An open-addressing table over one mapping made at the first stack
 * (untouched pages cost nothing). A slot is claimed by compare-exchange
 * on its hash (acq_rel), filled, then published by a store-release of
 * `ready`; a reader trusts a slot's stack only after a load-acquire of
 * `ready`. A reader that meets a slot of its hash still being filled
 * probes on and may add the same stack again: two ids for one stack,
 * which resolve to the same site. Slots are never freed; the table holds
 * at most GT_STACK_TABLE_SLOTS stacks for the life of the process. */
#include "stack_table.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#define PROBES 64u

typedef struct slot {
    _Atomic uint64_t hash; /* 0: free */
    _Atomic uint32_t ready;
    gt_stack stack;
} slot;

static _Atomic(slot *) table; /* release by the mapper, acquire by users */

static slot *slots(void)
{
    slot *t = atomic_load_explicit(&table, memory_order_acquire);
    if (t) return t;
    void *m = mmap(NULL, GT_STACK_TABLE_SLOTS * sizeof(slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return NULL;
    /* Out of core dumps, and so never merged with a neighbouring mapping of
     * the same kind: merged with a large untouched one (a device memory
     * arena, a reservation), the stacks' writes would make the kernel walk
     * all of it into a dump, and a crashing process die late. */
    madvise(m, GT_STACK_TABLE_SLOTS * sizeof(slot), MADV_DONTDUMP);
    slot *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&table, &none, (slot *)m, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        munmap(m, GT_STACK_TABLE_SLOTS * sizeof(slot));
        return none;
    }
    return m;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_of(const gt_stack *s)
{
    uint64_t h = mix((uint64_t)s->lang << 8 | s->depth, s->line);
    h = mix(h, (uint64_t)s->file << 32 | s->function);
    h = mix(h, s->via);
    for (unsigned i = 0; i < s->depth && i < GT_STACK_FRAMES; i++)
        h = mix(h, s->pc[i]);
    return h ? h : 1;
}

static int same(const gt_stack *a, const gt_stack *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

uint32_t gt_stack_id(const gt_stack *s)
{
    slot *t = slots();
    if (!t) return 0;
    uint64_t h = hash_of(s);
    uint32_t i = (uint32_t)(h >> 40) & (GT_STACK_TABLE_SLOTS - 1);
    for (uint32_t n = 0; n < PROBES; n++, i = (i + 1) & (GT_STACK_TABLE_SLOTS - 1)) {
        uint64_t k = atomic_load_explicit(&t[i].hash, memory_order_relaxed);
        /* A lost race leaves the winner's hash in k. */
        if (!k && atomic_compare_exchange_strong_explicit(&t[i].hash, &k, h, memory_order_acq_rel,
                                                          memory_order_acquire)) {
            memcpy(&t[i].stack, s, sizeof *s);
            atomic_store_explicit(&t[i].ready, 1, memory_order_release);
            return i + 1;
        }
        if (k == h && atomic_load_explicit(&t[i].ready, memory_order_acquire) &&
            same(&t[i].stack, s))
            return i + 1;
    }
    return GT_STACK_OVERFLOW;
}

const gt_stack *gt_stack_get(uint32_t id)
{
    slot *t = atomic_load_explicit(&table, memory_order_acquire);
    if (!t || id == 0 || id > GT_STACK_TABLE_SLOTS) return NULL;
    slot *sl = &t[id - 1];
    return atomic_load_explicit(&sl->ready, memory_order_acquire) ? &sl->stack : NULL;
}
