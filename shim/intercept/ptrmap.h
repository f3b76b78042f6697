/* A fixed-size lock-free map from non-zero 64-bit keys (handles, function
 * pointers) to non-zero 64-bit values, for caches read on the hot path.
 *
 * Open addressing with linear probing over at most GT_PTRMAP_PROBES slots.
 * A slot's key, once claimed, never changes, so a reader that finds its key
 * reads that key's value (or 0 while the writer has not stored it yet).
 * Values may be replaced. There is no removal: callers that must forget
 * store a value their readers know to be stale (a generation number). */
#ifndef GT_SHIM_PTRMAP_H
#define GT_SHIM_PTRMAP_H

#include <stdatomic.h>
#include <stdint.h>

#define GT_PTRMAP_PROBES 32u

typedef struct gt_ptrmap_slot {
    _Atomic uint64_t key; /* 0 = free; claimed once by compare-exchange (acq_rel) */
    _Atomic uint64_t val; /* 0 = not stored yet; store-release, load-acquire */
} gt_ptrmap_slot;

typedef struct gt_ptrmap {
    gt_ptrmap_slot *slots;
    uint32_t mask; /* slots - 1; the slot count is a power of two */
} gt_ptrmap;

/* A map over a static array of 2^log2 slots. */
#define GT_PTRMAP_DEFINE(name, log2)                                                               \
    static gt_ptrmap_slot name##_slots[1u << (log2)];                                              \
    static gt_ptrmap name = {name##_slots, (1u << (log2)) - 1u}

static inline uint32_t gt_ptrmap_hash(const gt_ptrmap *m, uint64_t key)
{
    /* Handles and code addresses are aligned: the low bits carry little. */
    return (uint32_t)(((key >> 4) * 0x9E3779B97F4A7C15ull) >> 32) & m->mask;
}

/* The value of `key`, 0 when absent. */
static inline uint64_t gt_ptrmap_get(const gt_ptrmap *m, uint64_t key)
{
    uint32_t i = gt_ptrmap_hash(m, key);
    for (uint32_t n = 0; n < GT_PTRMAP_PROBES; n++, i = (i + 1) & m->mask) {
        /* Relaxed: the value, not the key, carries what the writer published. */
        uint64_t k = atomic_load_explicit(&m->slots[i].key, memory_order_relaxed);
        if (k == key) return atomic_load_explicit(&m->slots[i].val, memory_order_acquire);
        if (!k) return 0;
    }
    return 0;
}

/* Sets the value of `key` (adding the key). Returns -1 when the key's
 * probe window is full: the caller does without the cache. */
int gt_ptrmap_put(gt_ptrmap *m, uint64_t key, uint64_t val);

#endif
