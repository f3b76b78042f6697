/* A map from 64-bit ids (thread ids, NVTX range ids) to small indices:
 * open addressing with linear probing and backward-shift deletion, so it
 * never fills with tombstones however many ids come and go. */
#ifndef GT_IDMAP_H
#define GT_IDMAP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct gt_idmap {
    uint64_t *keys;
    uint32_t *values; /* value + 1; 0 = empty slot */
    uint32_t size;
    uint32_t count;
} gt_idmap;

bool gt_idmap_get(const gt_idmap *m, uint64_t key, uint32_t *value);
/* Sets or replaces; 0, or -1 when out of memory (replacing never fails). */
int gt_idmap_set(gt_idmap *m, uint64_t key, uint32_t value);
void gt_idmap_remove(gt_idmap *m, uint64_t key);
void gt_idmap_free(gt_idmap *m);

#endif
