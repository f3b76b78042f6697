/* Between the two halves of the checksum code: checksum_copy.c numbers
 * the copies and makes the records, checksum_pending.c keeps the copies
 * that await their synchronize. */
#ifndef GT_CHECKSUM_INTERNAL_H
#define GT_CHECKSUM_INTERNAL_H

#include <stdint.h>

#include "checksum_mode.h"

/* Who a copy is: its thread's number and its index there, its buffer. */
typedef struct gt_checksum_id {
    uintptr_t dst;
    uint64_t bytes;
    uint64_t index;
    uint64_t stream;
    uint32_t thread;
    uint32_t site; /* the record's `site`: the copy's stack id (event.h) */
} gt_checksum_id;

/* Hashes the copy's buffer now and records it (GT_CK_HASHED), after
 * checking, for a copy that waited, that the buffer is still page-locked
 * memory: else it is recorded as freed. */
void gt_checksum_hash_now(const gt_checksum_id *id, int waited);

/* Records a copy that is not hashed, and why. */
void gt_checksum_record_unhashed(const gt_checksum_id *id, enum gt_checksum_status why);

/* checksum_pending.c: an asynchronous copy to hash at its synchronize. */
void gt_checksum_pending_add(const gt_checksum_id *id, uint64_t context);
/* Copies awaiting their synchronize whose buffers [dst, dst + bytes)
 * overlaps: recorded as overwritten. */
void gt_checksum_pending_overwritten(uintptr_t dst, uint64_t bytes);

#endif
