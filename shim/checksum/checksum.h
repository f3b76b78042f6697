/* Checksums of what the program reads back from the GPU
 * (GPUTRACE_CHECKSUM, SPEC §12): each device-to-host copy's destination
 * is hashed on the program's thread once its data is known to be there,
 * and the hash goes into the report as a GT_EV_CHECKSUM record.
 *
 * When the data is there:
 *  - a synchronous copy, and an asynchronous one into pageable memory
 *    (CUDA completes those before returning): when the call returns;
 *  - an asynchronous copy into page-locked memory: when the program
 *    synchronizes with it: its stream (cuStreamSynchronize), an event
 *    recorded on that stream after it (cuEventSynchronize), or its
 *    context (cuCtxSynchronize, cudaDeviceSynchronize). Until then it
 *    waits in a bounded list (checksum_pending.c).
 * A copy whose data cannot be known complete by then is counted as
 * unhashed, with the reason, never hashed early: another copy wrote into
 * its buffer first, the buffer was freed, the list was full, or the
 * process ended first. Copies into managed memory, copies made by graphs
 * and batches, and reads of mapped host memory are not seen.
 *
 * The hooks call these after a call that succeeded; each keeps errno and
 * records nothing while the thread is inside the shim. Ids are the
 * record's: a stream as gt_event.stream has it, a context's handle. */
#ifndef GT_CHECKSUM_H
#define GT_CHECKSUM_H

#include <stdint.h>

#include "checksum_mode.h"
#include "config.h"

/* Whether checksums are on: one load of the configuration. */
static inline int gt_checksum_on(void)
{
    return gt_cfg.checksum.kind != GT_CHECKSUM_OFF;
}

/* A device-to-host copy that succeeded. */
typedef struct gt_checksum_copy {
    const void *dst;
    uint64_t bytes;
    uint64_t stream;  /* the copy's stream (an asynchronous copy's) */
    uint64_t context; /* the current context (an asynchronous copy's) */
    uint32_t site;    /* the call site's stack id (callsite.h); 0: none */
    uint8_t pending;  /* asynchronous into page-locked memory: hashed at its synchronize */
    uint8_t strided;  /* a 2D or 3D copy: counted, not hashed */
} gt_checksum_copy;
void gt_checksum_copied(const gt_checksum_copy *c);

/* Host memory [dst, dst + bytes) written by a copy that is not hashed (host
 * to host): a copy awaiting its synchronize there was overwritten. */
void gt_checksum_host_written(const void *dst, uint64_t bytes);

/* Synchronizations that returned success. A stream's id names the legacy
 * and per-thread streams of the context (and thread) too. */
void gt_checksum_stream_synced(uint64_t stream, uint64_t context);
void gt_checksum_context_synced(uint64_t context);
void gt_checksum_event_recorded(uint64_t event, uint64_t stream, uint64_t context);
void gt_checksum_event_synced(uint64_t event);

/* The process ends: every copy still awaiting its synchronize is counted
 * as never synchronized. Before the report's cut. */
void gt_checksum_exit(void);

#endif
