/* The chunk pool (buffer.c): recycled chunks under a memory cap, the
 * lock-free publish list, and what the drain takes from them. */
#ifndef GT_BUFFER_H
#define GT_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline.h"
#include "record.h"

typedef struct gt_pool_stats {
    size_t chunk_bytes;      /* the full size */
    uint32_t chunk_capacity; /* records per full-size chunk */
    uint32_t max_chunks;     /* the cap, in full-size chunks */
    uint32_t mapped_chunks;  /* chunks ever mapped, of any size */
    size_t mapped_bytes;     /* their bytes: the peak memory */
    uint32_t pending_chunks; /* published, not yet taken by the drain */
} gt_pool_stats;

/* What the pool tells the drain, which owns it: that published chunks
 * pile up (wake it before its poll interval ends; async-signal-safe) and
 * that a thread took a chunk (start the drain thread if not yet). Both run
 * on a recording thread's slow path and must not block. */
typedef struct gt_pool_hooks {
    void (*wake)(void);
    void (*first_use)(void);
} gt_pool_hooks;

/* (Re)initialises the chunk pool; every chunk mapped before is unmapped,
 * so no thread may hold one (fork child, tests). */
int gt_pool_init(size_t chunk_bytes, size_t cap_bytes, const gt_pool_hooks *hooks);
void gt_pool_stats_get(gt_pool_stats *s);
void gt_pool_recycle(gt_chunk *c);
uint32_t gt_pool_capacity(void); /* records per full-size chunk */

/* The first record dropped for want of a chunk, as things stood then
 * (buffer.c: the chunks' sizes, the memory cap). 0 while none was. */
int gt_pool_drops_get(gt_pool_drops *out);

/* Drain side of the publish list: every chunk published so far, oldest
 * first, and their number. */
gt_chunk *gt_publish_take(uint32_t *n);

/* The end steps (drain.c): competes with each live thread for its current
 * chunk (OPEN -> STOLEN) and returns those won, with limit = the committed
 * count at that moment, linked through h.next. The thread goes on writing
 * a stolen chunk until it is full, then takes another without publishing
 * it: what it committed meanwhile is for the drain to read. */
gt_chunk *gt_buffer_steal_live(void);
void gt_buffer_open(void);  /* after gt_pool_init: records may be begun */
void gt_buffer_close(void); /* no new chunk is handed out any more */

/* TLS destructor: hands the thread's partial chunk to the drain. */
void gt_buffer_release_thread(void);

#endif
