/* The lock-free map's writer side (see ptrmap.h). */
#include <stdatomic.h>
#include <stdint.h>

#include "ptrmap.h"

int gt_ptrmap_put(gt_ptrmap *m, uint64_t key, uint64_t val)
{
    uint32_t i = gt_ptrmap_hash(m, key);
    for (uint32_t n = 0; n < GT_PTRMAP_PROBES; n++, i = (i + 1) & m->mask) {
        uint64_t k = atomic_load_explicit(&m->slots[i].key, memory_order_relaxed);
        if (!k) {
            /* acq_rel: a loser learns the winner's key and goes on probing
             * (or finds it is its own key, claimed by another thread). */
            if (atomic_compare_exchange_strong_explicit(&m->slots[i].key, &k, key,
                                                        memory_order_acq_rel, memory_order_acquire))
                k = key;
        }
        if (k == key) {
            atomic_store_explicit(&m->slots[i].val, val, memory_order_release);
            return 0;
        }
    }
    return -1;
}
