/* Handle tables (handles.h): open addressing with linear probing, kept at
 * most half full; a removal shifts the entries after it back, so a probe
 * never needs a tombstone. */
#include "handles.h"
#include "fork_lock.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FIRST_SLOTS 16u

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
GT_FORK_LOCK(lock)

static uint32_t home(const gt_handle_table *t, uint64_t key)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & t->mask;
}

/* The slot of `key`, or the empty slot where it would go; NULL when the
 * table has no slots yet. */
static gt_handle_slot *probe(const gt_handle_table *t, uint64_t key)
{
    if (!t->slots) return NULL;
    uint32_t i = home(t, key);
    while (t->slots[i].key && t->slots[i].key != key)
        i = (i + 1) & t->mask;
    return &t->slots[i];
}

static gt_handle_slot *find(const gt_handle_table *t, uint64_t key)
{
    gt_handle_slot *s = probe(t, key);
    return s && s->key == key ? s : NULL;
}

static int grow(gt_handle_table *t)
{
    uint32_t n = t->slots ? (t->mask + 1) * 2 : FIRST_SLOTS;
    gt_handle_slot *slots = calloc(n, sizeof *slots);
    if (!slots) return -1;
    gt_handle_table bigger = {slots, n - 1, t->count};
    for (uint32_t i = 0; t->slots && i <= t->mask; i++)
        if (t->slots[i].key) *probe(&bigger, t->slots[i].key) = t->slots[i];
    free(t->slots);
    *t = bigger;
    return 0;
}

/* The slot of `key`, added (zeroed) when absent; NULL without room. */
static gt_handle_slot *find_or_add(gt_handle_table *t, uint64_t key)
{
    gt_handle_slot *s = find(t, key);
    if (s) return s;
    if (t->count >= GT_HANDLE_TABLE_MAX) return NULL;
    if ((!t->slots || (t->count + 1) * 2 > t->mask + 1) && grow(t) != 0) return NULL;
    s = probe(t, key);
    memset(s, 0, sizeof *s);
    s->key = key;
    t->count++;
    return s;
}

static void remove_slot(gt_handle_table *t, gt_handle_slot *s)
{
    uint32_t hole = (uint32_t)(s - t->slots);
    for (uint32_t j = (hole + 1) & t->mask; t->slots[j].key; j = (j + 1) & t->mask) {
        /* An entry may fill the hole when the hole lies on its probe path:
         * between its home slot and where it sits, cyclically. */
        uint32_t h = home(t, t->slots[j].key);
        int on_path = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j);
        if (on_path) {
            t->slots[hole] = t->slots[j];
            hole = j;
        }
    }
    t->slots[hole].key = 0;
    t->count--;
}

int gt_handle_put(gt_handle_table *t, uint64_t key, const gt_handle_info *info)
{
    if (!key) return -1;
    pthread_mutex_lock(&lock);
    gt_handle_slot *s = find_or_add(t, key);
    if (s) s->info = *info;
    pthread_mutex_unlock(&lock);
    return s ? 0 : -1;
}

static int lookup(gt_handle_table *t, uint64_t key, gt_handle_info *out, int take)
{
    pthread_mutex_lock(&lock);
    gt_handle_slot *s = key ? find(t, key) : NULL;
    if (s) {
        *out = s->info;
        if (take) remove_slot(t, s);
    } else {
        memset(out, 0, sizeof *out);
    }
    pthread_mutex_unlock(&lock);
    return s != NULL;
}

int gt_handle_get(gt_handle_table *t, uint64_t key, gt_handle_info *out)
{
    return lookup(t, key, out, 0);
}

int gt_handle_take(gt_handle_table *t, uint64_t key, gt_handle_info *out)
{
    return lookup(t, key, out, 1);
}

int gt_handle_edit(gt_handle_table *t, uint64_t key, int create, gt_handle_edit_fn fn, void *ctx)
{
    if (!key) return 0;
    pthread_mutex_lock(&lock);
    gt_handle_slot *s = create ? find_or_add(t, key) : find(t, key);
    if (s && !fn(&s->info, ctx)) remove_slot(t, s);
    pthread_mutex_unlock(&lock);
    return s != NULL;
}

size_t gt_handle_keys_in(gt_handle_table *t, uint64_t lo, uint64_t hi, uint64_t *keys, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; t->slots && i <= t->mask && n < max; i++)
        if (t->slots[i].key >= lo && t->slots[i].key < hi && t->slots[i].key)
            keys[n++] = t->slots[i].key;
    pthread_mutex_unlock(&lock);
    return n;
}

void gt_handle_table_free(gt_handle_table *t)
{
    free(t->slots);
    memset(t, 0, sizeof *t);
}
