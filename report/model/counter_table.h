/* NVTX counters (nvToolsExtCounters.h) in the report: per (domain,
 * counter name), how many samples, their least, greatest and latest value
 * and when the first and the latest came. The samples themselves go to the
 * timelines as counter tracks. Grows with the distinct counters, up to
 * GT_COUNTERS_MAX (samples of later ones are counted as untracked). */
#ifndef GT_COUNTER_TABLE_H
#define GT_COUNTER_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "idmap.h"

#define GT_COUNTERS_MAX 4096u

typedef struct gt_counter_row {
    uint32_t domain; /* string id, 0 = the default domain */
    uint32_t name;   /* string id */
    uint32_t unit;   /* string id, 0 = none given */
    uint8_t kind;    /* enum gt_number_kind of the samples, GT_NUM_MIXED (nvtx_numbers.h) */
    uint64_t count;
    double min, max, last;
    uint64_t first_ns, last_ns; /* host times (CLOCK_MONOTONIC) of the first and latest */
} gt_counter_row;

typedef struct gt_counter_table {
    gt_counter_row *rows;
    uint32_t n;
    uint32_t capacity;
    gt_idmap index; /* domain << 32 | name -> rows[] */
    uint64_t untracked;
} gt_counter_table;

/* One GT_EV_NVTX_COUNTER record. */
void gt_counter_table_add(gt_counter_table *t, const gt_event *ev);

/* A row counted elsewhere (a report read back, or merged): folded into
 * the row of its (domain, name). 0, or -1 for want of memory. */
int gt_counter_table_fold(gt_counter_table *t, const gt_counter_row *in);

/* The rows by domain and name (string order); the caller frees the
 * array. NULL with *n = 0 when none or no memory. */
struct gt_strtab;
const gt_counter_row **gt_counter_table_sorted(const gt_counter_table *t,
                                               const struct gt_strtab *names, size_t *n);

void gt_counter_table_free(gt_counter_table *t);

#endif
