/* The numbers of the `nvtx` table's rows beyond their times: what NVTX
 * payloads carried (a plain payload, named fields of extended payloads),
 * summed per range name with their rates, and the memory each range moved
 * and saw in use (nvtx_memory.c). A row gets them (gt_row.numbers) when it
 * first has any.
 *
 * Rates are per second of the GPU work inside the range (gt_row's
 * gpu_ns_total: whichever GPU time the report has) and per second of its
 * wall time (the row's time.total). Totals are doubles: integers are exact
 * up to 2^53. */
#ifndef GT_NVTX_NUMBERS_H
#define GT_NVTX_NUMBERS_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"

#define GT_NVTX_FIELDS_MAX 64u    /* named fields kept per row; more are counted */
#define GT_NUM_MIXED GT_NUM_COUNT /* a total of values of different kinds */

typedef struct gt_number_total {
    uint8_t kind; /* enum gt_number_kind of its values, GT_NUM_MIXED; GT_NUM_NONE: none */
    uint64_t count;
    double total;
} gt_number_total;

typedef struct gt_nvtx_field {
    uint32_t name; /* string id */
    uint32_t unit; /* string id of the unit NVTX gave, 0 none */
    gt_number_total sum;
} gt_nvtx_field;

typedef struct gt_nvtx_numbers {
    gt_number_total payload;
    gt_nvtx_field *fields;
    uint32_t nfields;
    uint32_t fields_capacity;
    uint64_t fields_dropped; /* values of fields past GT_NVTX_FIELDS_MAX */
    bool memory;             /* the three below are known (the `memory` category was on) */
    uint64_t allocated_bytes;
    uint64_t freed_bytes;
    uint64_t peak_bytes;
} gt_nvtx_numbers;

/* Adds one value (its 64 bits, as the record holds them). */
void gt_number_add(gt_number_total *t, uint8_t kind, uint64_t bits);
/* Adds a total of `count` values (a report read back, a merge). */
void gt_number_merge(gt_number_total *into, const gt_number_total *from);

/* The field of that name, created when new; NULL past the cap (counted)
 * or out of memory. */
gt_nvtx_field *gt_nvtx_numbers_field(gt_nvtx_numbers *n, uint32_t name, uint32_t unit);

/* The kind's name for the JSON: gt_number_kind_name, "mixed". */
const char *gt_number_total_kind_name(const gt_number_total *t);
/* The kind a name gives back; GT_NUM_NONE when unknown. */
uint8_t gt_number_kind_from_name(const char *name);

/* The unit a field's rate is shown in: the unit NVTX gave, else "FLOP"
 * for a name that speaks of flops, "B" for one that speaks of bytes, else
 * "" (a plain count per second). */
const char *gt_nvtx_field_unit(const char *name, const char *unit);

/* total per second of ns; 0 when ns is 0. */
double gt_number_rate(double total, uint64_t ns);

/* The numbers of an `nvtx` row, created when it has none; NULL when out
 * of memory. */
struct gt_row;
gt_nvtx_numbers *gt_row_numbers(struct gt_row *row);

/* Adds the numbers of src's row to dst's (merging reports): totals and
 * fields summed, memory summed as the memory table's devices are. 0, or
 * -1 for want of memory. */
int gt_nvtx_numbers_merge(struct gt_row *dst, const struct gt_row *src);

/* Frees what n holds (not n). */
void gt_nvtx_numbers_free(gt_nvtx_numbers *n);

#endif
