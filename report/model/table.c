#include "nvtx_numbers.h"
#include "stats.h"
#include "strtab.h"
#include "table.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash_key(const gt_row_key *k)
{
    uint64_t a = k->f[0] | (uint64_t)k->f[1] << 32;
    uint64_t b = k->f[2] | (uint64_t)k->f[3] << 32;
    uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    return (uint32_t)(h >> 32);
}

static uint32_t find_slot(const gt_table *t, const gt_row_key *k)
{
    uint32_t mask = t->index_size - 1;
    for (uint32_t i = hash_key(k) & mask;; i = (i + 1) & mask) {
        uint32_t v = t->index[i];
        if (v == 0 || gt_row_key_equal(&t->rows[v - 1].key, k)) return i;
    }
}

static int index_to(gt_table *t, uint32_t size)
{
    uint32_t *index = calloc(size, sizeof(*index));
    if (!index) return -1;
    free(t->index);
    t->index = index;
    t->index_size = size;
    for (uint32_t r = 0; r < t->nrows; r++)
        t->index[find_slot(t, &t->rows[r].key)] = r + 1;
    return 0;
}

static int grow_index(gt_table *t)
{
    return index_to(t, t->index_size ? t->index_size * 2 : 64);
}

static int rows_to(gt_table *t, uint32_t cap)
{
    gt_row *rows = realloc(t->rows, cap * sizeof(*rows));
    if (!rows) return -1;
    t->rows = rows;
    t->capacity = cap;
    return 0;
}

static int grow_rows(gt_table *t)
{
    return rows_to(t, t->capacity ? t->capacity * 2 : 16);
}

int gt_table_reserve(gt_table *t, uint32_t n)
{
    if (n >= INT32_MAX / 2) return -1;
    if (n > t->capacity && rows_to(t, n) != 0) return -1;
    uint32_t size = t->index_size ? t->index_size : 64;
    while (size < 2 * n)
        size *= 2;
    return size != t->index_size ? index_to(t, size) : 0;
}

/* The index's answer, remembered in the cache. */
static int32_t remember(gt_table *t, const gt_row_key *key, uint32_t row)
{
    t->cache[gt_table_cache_slot(key)] = row + 1;
    return (int32_t)row;
}

int32_t gt_table_row_index_slow(gt_table *t, const gt_row_key *key)
{
    if (t->index_size == 0 && grow_index(t) != 0) return -1;
    uint32_t slot = find_slot(t, key);
    if (t->index[slot]) return remember(t, key, t->index[slot] - 1);
    if (t->nrows >= INT32_MAX - 1) return -1;
    if ((t->nrows + 1) * 2 > t->index_size) {
        if (grow_index(t) != 0) return -1;
        slot = find_slot(t, key);
    }
    if (t->nrows == t->capacity && grow_rows(t) != 0) return -1;
    gt_row *row = &t->rows[t->nrows];
    memset(row, 0, sizeof(*row));
    row->key = *key;
    row->parent = -1;
    t->index[slot] = ++t->nrows;
    return remember(t, key, t->nrows - 1);
}

const gt_row *gt_table_find(const gt_table *t, const gt_row_key *key)
{
    if (t->index_size == 0) return NULL;
    uint32_t v = t->index[find_slot(t, key)];
    return v ? &t->rows[v - 1] : NULL;
}

void gt_table_free(gt_table *t)
{
    for (uint32_t r = 0; r < t->nrows; r++) {
        gt_stats_free(&t->rows[r].time);
        free(t->rows[r].errors);
        if (t->rows[r].numbers) gt_nvtx_numbers_free(t->rows[r].numbers);
        free(t->rows[r].numbers);
    }
    free(t->rows);
    free(t->index);
    memset(t, 0, sizeof(*t));
}

uint64_t gt_table_calls(const gt_table *t)
{
    uint64_t calls = 0;
    for (uint32_t r = 0; r < t->nrows; r++)
        calls += t->rows[r].calls;
    return calls;
}

int gt_row_add_error(gt_row *row, uint32_t name, int32_t result)
{
    /* A named status is one entry whatever its code, so that names stay unique keys. */
    for (uint32_t i = 0; i < row->nerrors; i++) {
        const gt_api_error *e = &row->errors[i];
        if (e->name == name && (name != 0 || e->result == result)) {
            row->errors[i].count++;
            return 0;
        }
    }
    gt_api_error *grown = realloc(row->errors, (row->nerrors + 1) * sizeof(*grown));
    if (!grown) return -1;
    row->errors = grown;
    row->errors[row->nerrors++] = (gt_api_error){.name = name, .result = result, .count = 1};
    return 0;
}

static int compare_sorted(const void *pa, const void *pb)
{
    const gt_sorted_row *a = pa, *b = pb;
    uint64_t ta = a->row->time.total, tb = b->row->time.total;
    if (ta != tb) return ta > tb ? -1 : 1;
    for (unsigned i = 0; i < GT_KEY_FIELDS; i++) {
        if (a->text[i]) {
            int c = strcmp(a->text[i], b->text[i]);
            if (c) return c;
        }
        uint32_t x = a->row->key.f[i], y = b->row->key.f[i];
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

gt_sorted_row *gt_table_sorted(const gt_table *t, const gt_strtab *names, unsigned string_fields,
                               size_t *n)
{
    *n = 0;
    if (t->nrows == 0) return NULL;
    gt_sorted_row *out = malloc(t->nrows * sizeof(*out));
    if (!out) return NULL;
    for (uint32_t r = 0; r < t->nrows; r++) {
        out[r].row = &t->rows[r];
        for (unsigned i = 0; i < GT_KEY_FIELDS; i++)
            out[r].text[i] =
                string_fields & (1u << i) ? gt_strtab_get(names, t->rows[r].key.f[i]) : NULL;
    }
    qsort(out, t->nrows, sizeof(*out), compare_sorted);
    *n = t->nrows;
    return out;
}
