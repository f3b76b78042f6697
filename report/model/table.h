/* A table of rows keyed by a few small integers (string ids, enum values),
 * one per report category. Rows live in one array (pointers to rows are
 * invalidated by the next insertion; keep indices) and are found through
 * an open-addressing index. In front of the index, a small direct-mapped
 * cache remembers the row of each recently seen key: a program calls the
 * same few entry points and kernels over and over, and a hit costs one
 * load and one key compare where the index costs a hash and a probe loop
 * whose branches mispredict (it was a third of the drain's time per
 * record). Memory grows with the number of distinct keys only. */
#ifndef GT_TABLE_H
#define GT_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "stats.h"
#include "strtab.h"

#define GT_KEY_FIELDS 4u

typedef struct gt_row_key {
    uint32_t f[GT_KEY_FIELDS]; /* meaning per category: see aggregate.h */
} gt_row_key;

/* One distinct non-success status of an `api` row. */
typedef struct gt_api_error {
    uint32_t name; /* string id of the status name, 0 when the shim had none */
    int32_t result;
    uint64_t count;
} gt_api_error;

struct gt_nvtx_numbers;

typedef struct gt_row {
    gt_row_key key;
    uint64_t calls;
    uint64_t graph_calls;    /* kernels: runs as a node of a graph launch (not in calls) */
    gt_stats time;           /* the row's time: GPU time or host wall time */
    uint64_t bytes;          /* transfers, compile inputs, module images */
    uint64_t timed_bytes;    /* bytes of the calls that have a time sample (GB/s) */
    uint64_t api_ns_total;   /* kernels: host time of the launch calls */
    uint64_t gpu_ns_total;   /* nvtx: GPU time of the work inside the ranges */
    uint64_t gpu_span_total; /* nvtx: first enclosed GPU start to last GPU end, summed */
    uint64_t open_ns;        /* nvtx: time the range was open, overlaps once (nvtx.h) */
    uint64_t firsts;         /* compile: programs (links) first compiled in these calls */
    int32_t level;           /* nvtx: nesting depth where first seen, 0 outermost */
    int32_t parent;          /* nvtx: row of the enclosing range where first seen, -1 none */
    gt_api_error *errors;    /* api: distinct failures */
    uint32_t nerrors;
    struct gt_nvtx_numbers *numbers; /* nvtx: payloads and memory (nvtx_numbers.h); NULL: none */
} gt_row;

#define GT_TABLE_CACHE_SLOTS 256u

typedef struct gt_table {
    gt_row *rows;
    uint32_t nrows;
    uint32_t capacity;
    uint32_t *index; /* row number + 1, 0 = empty slot */
    uint32_t index_size;
    uint32_t cache[GT_TABLE_CACHE_SLOTS]; /* row number + 1 of a key mapping here, 0 = none */
} gt_table;

/* The row of `key`, created zeroed (parent -1) when new; NULL when out of memory. */
int32_t gt_table_row_index_slow(gt_table *t, const gt_row_key *key);

static inline uint32_t gt_table_cache_slot(const gt_row_key *k)
{
    return (k->f[0] ^ k->f[1] << 3 ^ k->f[2] << 6 ^ k->f[3] << 9) & (GT_TABLE_CACHE_SLOTS - 1);
}

static inline int gt_row_key_equal(const gt_row_key *x, const gt_row_key *y)
{
    return ((x->f[0] ^ y->f[0]) | (x->f[1] ^ y->f[1]) | (x->f[2] ^ y->f[2]) |
            (x->f[3] ^ y->f[3])) == 0;
}

static inline int32_t gt_table_row_index(gt_table *t, const gt_row_key *key)
{
    uint32_t v = t->cache[gt_table_cache_slot(key)];
    if (v && gt_row_key_equal(&t->rows[v - 1].key, key)) return (int32_t)(v - 1);
    return gt_table_row_index_slow(t, key);
}

static inline gt_row *gt_table_row(gt_table *t, const gt_row_key *key)
{
    int32_t i = gt_table_row_index(t, key);
    return i < 0 ? NULL : &t->rows[i];
}

const gt_row *gt_table_find(const gt_table *t, const gt_row_key *key);

/* Room for n rows without growing (a table filled with a known number of
 * rows, as a report read back is); 0, or -1 when out of memory. */
int gt_table_reserve(gt_table *t, uint32_t n);
void gt_table_free(gt_table *t);
uint64_t gt_table_calls(const gt_table *t);

/* Counts one failure on an api row; 0, or -1 when out of memory. */
int gt_row_add_error(gt_row *row, uint32_t name, int32_t result);

/* A row in report order, with the key's string ids resolved. */
typedef struct gt_sorted_row {
    const gt_row *row;
    const char *text[GT_KEY_FIELDS]; /* NULL for a field that is a number */
} gt_sorted_row;

/* The rows by time.total descending, ties by key (strings in byte order for
 * the fields in string_fields, a GT_KEY_FIELDS bit mask; numbers otherwise).
 * The caller frees the array; NULL with *n = 0 when empty or out of memory. */
gt_sorted_row *gt_table_sorted(const gt_table *t, const gt_strtab *names, unsigned string_fields,
                               size_t *n);

#endif
