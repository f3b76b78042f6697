/* Pointer-keyed hash table used to find registered kernels and variables by host
 * address on every launch or symbol copy. */
#include <stdint.h>
#include <stdlib.h>

#include "rt_ptr_table.h"

static size_t slot_of(const struct rt_ptr_table *t, const void *key)
{
    /* Fibonacci hashing spreads aligned addresses over the table. */
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (t->capacity - 1);
}

static void insert(struct rt_ptr_table *t, const void *key, void *value)
{
    size_t i = slot_of(t, key);
    while (t->slots[i].key != NULL)
        i = (i + 1) & (t->capacity - 1);
    t->slots[i] = (struct rt_ptr_slot){key, value};
    t->count++;
}

static bool grow(struct rt_ptr_table *t)
{
    size_t capacity = t->capacity == 0 ? 64 : t->capacity * 2;
    struct rt_ptr_slot *slots = calloc(capacity, sizeof(*slots));
    if (slots == NULL) return false;
    struct rt_ptr_table old = *t;
    *t = (struct rt_ptr_table){slots, capacity, 0};
    for (size_t i = 0; i < old.capacity; i++)
        if (old.slots[i].key != NULL) insert(t, old.slots[i].key, old.slots[i].value);
    free(old.slots);
    return true;
}

void *gt_rt_ptr_table_get(const struct rt_ptr_table *t, const void *key)
{
    if (t->capacity == 0 || key == NULL) return NULL;
    for (size_t i = slot_of(t, key); t->slots[i].key != NULL; i = (i + 1) & (t->capacity - 1))
        if (t->slots[i].key == key) return t->slots[i].value;
    return NULL;
}

bool gt_rt_ptr_table_put(struct rt_ptr_table *t, const void *key, void *value)
{
    if (key == NULL || gt_rt_ptr_table_get(t, key) != NULL) return false;
    /* Keep the load under one half so probe chains stay short. */
    if (2 * (t->count + 1) > t->capacity && !grow(t)) return false;
    insert(t, key, value);
    return true;
}

void gt_rt_ptr_table_remove(struct rt_ptr_table *t, const void *key)
{
    if (t->capacity == 0 || key == NULL) return;
    size_t mask = t->capacity - 1;
    size_t i = slot_of(t, key);
    while (t->slots[i].key != key) {
        if (t->slots[i].key == NULL) return;
        i = (i + 1) & mask;
    }
    t->slots[i] = (struct rt_ptr_slot){NULL, NULL};
    t->count--;
    /* Re-insert the rest of the probe chain so that later lookups still reach it. */
    for (i = (i + 1) & mask; t->slots[i].key != NULL; i = (i + 1) & mask) {
        struct rt_ptr_slot moved = t->slots[i];
        t->slots[i] = (struct rt_ptr_slot){NULL, NULL};
        t->count--;
        insert(t, moved.key, moved.value);
    }
}
