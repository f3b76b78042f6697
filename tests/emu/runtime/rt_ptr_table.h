/* A hash table from pointers to pointers (open addressing, linear probing). Not
 * thread-safe: callers hold their own lock. */
#ifndef GT_RT_PTR_TABLE_H
#define GT_RT_PTR_TABLE_H

#include <stdbool.h>
#include <stddef.h>

struct rt_ptr_slot {
    const void *key;
    void *value;
};

struct rt_ptr_table {
    struct rt_ptr_slot *slots;
    size_t capacity; /* a power of two, or 0 */
    size_t count;
};

/* Adds key -> value; false when out of memory or when the key is already present. */
bool gt_rt_ptr_table_put(struct rt_ptr_table *t, const void *key, void *value);
void *gt_rt_ptr_table_get(const struct rt_ptr_table *t, const void *key);
void gt_rt_ptr_table_remove(struct rt_ptr_table *t, const void *key);

#endif
