#include "idmap.h"
#include "keyed.h"

#include <stdlib.h>
#include <string.h>

void *gt_keyed_find(const gt_keyed *k, uint64_t key)
{
    uint32_t i;
    return gt_idmap_get(&k->index, key, &i) ? gt_keyed_at(k, i) : NULL;
}

static int grow(gt_keyed *k)
{
    uint32_t cap = k->cap ? k->cap * 2 : 16;
    if (cap > k->max) cap = k->max;
    char *items = realloc(k->items, (size_t)cap * k->elem);
    if (!items) return -1;
    k->items = items;
    uint64_t *keys = realloc(k->keys, (size_t)cap * sizeof(*keys));
    if (!keys) return -1;
    k->keys = keys;
    k->cap = cap;
    return 0;
}

void *gt_keyed_add(gt_keyed *k, uint64_t key)
{
    if (k->n >= k->max || (k->n == k->cap && grow(k) != 0) ||
        gt_idmap_set(&k->index, key, k->n) != 0)
        return NULL;
    k->keys[k->n] = key;
    void *item = gt_keyed_at(k, k->n++);
    memset(item, 0, k->elem);
    return item;
}

void gt_keyed_remove(gt_keyed *k, uint64_t key)
{
    uint32_t i;
    if (!gt_idmap_get(&k->index, key, &i)) return;
    gt_idmap_remove(&k->index, key);
    uint32_t last = --k->n;
    if (i == last) return;
    memcpy(gt_keyed_at(k, i), gt_keyed_at(k, last), k->elem);
    k->keys[i] = k->keys[last];
    gt_idmap_set(&k->index, k->keys[i], i); /* replacing never fails */
}

void gt_keyed_free(gt_keyed *k)
{
    gt_idmap_free(&k->index);
    free(k->keys);
    free(k->items);
    gt_keyed_init(k, k->elem, k->max);
}
