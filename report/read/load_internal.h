/* The reader's shared parts (load.c: the document; load_rows.c: the
 * tables): where it is in the document for error messages, and typed
 * access to members that says what was wrong and where. */
#ifndef GT_LOAD_INTERNAL_H
#define GT_LOAD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "aggregate.h"
#include "loaded.h"
#include "nvtx_numbers.h"
#include "report.h"
#include "strtab.h"
#include "table.h"

typedef struct gt_loader {
    gt_report *r;
    gt_loaded *l;
    gt_strtab *names;
    const char *file;
    char *err;
    size_t errcap;
    bool failed;
    /* Where the member being read is: "kernels[3].gpu_ns" */
    const char *table;
    long index; /* -1: not in an array */
    const char *object;
} gt_loader;

/* Records the first failure, "<file>: <where>: <what>"; returns false. */
bool gt_load_fail(gt_loader *ld, const char *key, const char *what);

/* Member `key` of obj (NULL when absent). Members are looked for from
 * the one after *hint (the last one found), so members read in the
 * writer's order cost one comparison each. */
const cJSON *gt_load_member(const cJSON *obj, const char *key, const cJSON **hint);

/* Typed reads of member key of obj. A missing member is an error unless
 * a default is given (the _or forms). Numbers must be integers in range. */
bool gt_load_u64(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                 uint64_t *out);
bool gt_load_u64_or(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                    uint64_t dflt, uint64_t *out);
bool gt_load_i64_or(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                    int64_t min, int64_t max, int64_t dflt, int64_t *out);
bool gt_load_bool_or(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint, int dflt,
                     bool *out);
/* A string (NULL on failure); with dflt non-NULL a missing member gives it. */
const char *gt_load_string(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                           const char *dflt);
/* A string member interned in the report's names (0 also for ""). */
bool gt_load_name(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                  uint32_t *id);
/* The value of a member that must be an array or an object. */
const cJSON *gt_load_array(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint);
const cJSON *gt_load_object(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                            bool optional);

/* Member key's value v as an integer (an error when it is not one). */
bool gt_load_value_u64(gt_loader *ld, const cJSON *v, const char *key, uint64_t *out);

/* An integer JSON number as uint64_t; false when not one. */
bool gt_load_number_u64(const cJSON *v, uint64_t *out);

/* An enum member written by name (name(i) for value i, i < count). */
bool gt_load_enum(gt_loader *ld, const cJSON *row, const cJSON **h, const char *key,
                  const char *(*name)(int), int count, uint32_t *out);
/* The names of copy directions, host memory and memory kinds, for it. */
const char *gt_load_dir_name(int i);
const char *gt_load_host_name(int i);
const char *gt_load_mem_kind_name(int i);

/* The call sites, when the report has them (load_callsites.c); before the
 * tables, whose leaks name their sites. */
bool gt_load_callsites(gt_loader *ld, const cJSON *doc);

/* The capture and the snapshot, when the report has them (load_capture.c). */
bool gt_load_capture(gt_loader *ld, const cJSON *doc);

/* The checksum list, when the report has one (load_checksums.c). */
bool gt_load_checksums(gt_loader *ld, const cJSON *doc);

/* The tables (load_rows.c): each SPEC §6 array, the memory devices and
 * the NVTX marks. */
bool gt_load_tables(gt_loader *ld, const cJSON *doc);

/* The numbers NVTX carried (load_numbers.c): of an `nvtx` row, of a mark,
 * the counters, the memory's heaps; absent ones are none. */
bool gt_load_nvtx_numbers(gt_loader *ld, const cJSON *row, gt_row *out);
bool gt_load_mark_payload(gt_loader *ld, const cJSON *mark, gt_number_total *out);
bool gt_load_counters(gt_loader *ld, const cJSON *doc);
bool gt_load_heaps(gt_loader *ld, const cJSON *memory);

#endif
