/* What the shim learnt about a handle a library gave the program, kept
 * until the program lets the handle go: an NVRTC or NVVM program's name and
 * input size (recorded when it is compiled), a link's inputs, a VMM
 * allocation's size and mappings.
 *
 * Tables are hash maps keyed by the handle's value (never 0), one mutex for
 * all of them: these calls are rare next to copies and launches, and each
 * holds it for a few loads and stores. A table holds at most
 * GT_HANDLE_TABLE_MAX entries (a program that never lets its handles go
 * stops being described, not grown without bound). */
#ifndef GT_SHIM_HANDLES_H
#define GT_SHIM_HANDLES_H

#include <stddef.h>
#include <stdint.h>

#define GT_HANDLE_TABLE_MAX (1u << 20)

/* Each user says what its fields mean. */
typedef struct gt_handle_info {
    uint64_t bytes;   /* input bytes, or an allocation's size */
    uint64_t other;   /* a second handle (a mapping's allocation) */
    uint32_t name;    /* string id */
    uint32_t count;   /* inputs, or mappings */
    uint32_t options; /* option count, or references */
    uint16_t device;
    uint8_t kind;  /* enum gt_image_kind */
    uint8_t flags; /* the user's own */
} gt_handle_info;

typedef struct gt_handle_slot {
    uint64_t key; /* 0 = empty */
    gt_handle_info info;
} gt_handle_slot;

typedef struct gt_handle_table {
    gt_handle_slot *slots;
    uint32_t mask; /* slots - 1 (a power of two), 0 before the first entry */
    uint32_t count;
} gt_handle_table;

/* Sets the info of `key`. Returns -1 without memory or room. */
int gt_handle_put(gt_handle_table *t, uint64_t key, const gt_handle_info *info);

/* Copies the info of `key` into *out; returns 0 when absent (*out zeroed). */
int gt_handle_get(gt_handle_table *t, uint64_t key, gt_handle_info *out);

/* Like gt_handle_get, and removes the entry. */
int gt_handle_take(gt_handle_table *t, uint64_t key, gt_handle_info *out);

/* Runs fn on the info of `key` (creating a zeroed entry first when
 * `create` and absent) with the lock held; fn returns 0 to remove the
 * entry, and must not call into this module. Returns 0 when there was no
 * entry and none was made. */
typedef int (*gt_handle_edit_fn)(gt_handle_info *info, void *ctx);
int gt_handle_edit(gt_handle_table *t, uint64_t key, int create, gt_handle_edit_fn fn, void *ctx);

/* Up to `max` keys in [lo, hi), into keys; returns how many. */
size_t gt_handle_keys_in(gt_handle_table *t, uint64_t lo, uint64_t hi, uint64_t *keys, size_t max);

/* Frees the table (no other thread may use it). */
void gt_handle_table_free(gt_handle_table *t);

#endif
