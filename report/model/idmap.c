#include "idmap.h"

#include <stdlib.h>
#include <string.h>

static uint32_t home_slot(const gt_idmap *m, uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (m->size - 1);
}

static uint32_t probe(const gt_idmap *m, uint64_t key)
{
    uint32_t i = home_slot(m, key);
    while (m->values[i] && m->keys[i] != key)
        i = (i + 1) & (m->size - 1);
    return i;
}

bool gt_idmap_get(const gt_idmap *m, uint64_t key, uint32_t *value)
{
    if (m->count == 0) return false;
    uint32_t i = probe(m, key);
    if (!m->values[i]) return false;
    *value = m->values[i] - 1;
    return true;
}

static int resize(gt_idmap *m, uint32_t size)
{
    gt_idmap fresh = {.size = size};
    fresh.keys = malloc(size * sizeof(*fresh.keys));
    fresh.values = calloc(size, sizeof(*fresh.values));
    if (!fresh.keys || !fresh.values) {
        free(fresh.keys);
        free(fresh.values);
        return -1;
    }
    for (uint32_t i = 0; i < m->size; i++) {
        if (!m->values[i]) continue;
        uint32_t j = probe(&fresh, m->keys[i]);
        fresh.keys[j] = m->keys[i];
        fresh.values[j] = m->values[i];
        fresh.count++;
    }
    gt_idmap_free(m);
    *m = fresh;
    return 0;
}

int gt_idmap_set(gt_idmap *m, uint64_t key, uint32_t value)
{
    uint32_t i = m->size ? probe(m, key) : 0;
    if (!m->size || !m->values[i]) {
        if ((m->count + 1) * 2 > m->size) {
            if (resize(m, m->size ? m->size * 2 : 16) != 0) return -1;
            i = probe(m, key);
        }
        m->count++;
    }
    m->keys[i] = key;
    m->values[i] = value + 1;
    return 0;
}

void gt_idmap_remove(gt_idmap *m, uint64_t key)
{
    if (m->count == 0) return;
    uint32_t mask = m->size - 1;
    uint32_t hole = probe(m, key);
    if (!m->values[hole]) return;
    m->values[hole] = 0;
    m->count--;
    /* Pull back every later entry of the run that may no longer be reached. */
    for (uint32_t i = (hole + 1) & mask; m->values[i]; i = (i + 1) & mask) {
        uint32_t home = home_slot(m, m->keys[i]);
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            m->keys[hole] = m->keys[i];
            m->values[hole] = m->values[i];
            m->values[i] = 0;
            hole = i;
        }
    }
}

void gt_idmap_free(gt_idmap *m)
{
    free(m->keys);
    free(m->values);
    memset(m, 0, sizeof(*m));
}
