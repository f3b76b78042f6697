/* Items of one fixed size found by a 64-bit key (a thread id, a stream,
 * a range id): an idmap from keys to positions in a packed array that
 * grows by doubling up to a cap. Removing an item moves the last one into
 * its place, so positions are stable only while nothing is removed. */
#ifndef GT_KEYED_H
#define GT_KEYED_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"

typedef struct gt_keyed {
    gt_idmap index;
    uint64_t *keys;
    char *items;
    size_t elem;  /* bytes per item */
    uint32_t max; /* items at most */
    uint32_t n, cap;
} gt_keyed;

static inline void gt_keyed_init(gt_keyed *k, size_t elem, uint32_t max)
{
    *k = (gt_keyed){.elem = elem, .max = max};
}

static inline void *gt_keyed_at(const gt_keyed *k, uint32_t i)
{
    return k->items + (size_t)i * k->elem;
}

/* The item of key, or NULL. */
void *gt_keyed_find(const gt_keyed *k, uint64_t key);

/* A new zeroed item for key (which must not be there yet); NULL past the
 * cap or out of memory. */
void *gt_keyed_add(gt_keyed *k, uint64_t key);

/* Removes the item of key, if any. */
void gt_keyed_remove(gt_keyed *k, uint64_t key);

void gt_keyed_free(gt_keyed *k);

#endif
