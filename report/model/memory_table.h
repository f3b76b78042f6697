/* The `memory` category: allocations and frees per device, current and
 * peak bytes, how allocations ended (freed, released with their context,
 * still held at exit).
 *
 * Records of different threads can reach the report out of order: a free
 * can arrive before the allocation it releases, an address can be reused
 * before the free of its previous allocation arrives. So a free releases
 * the live allocation of its address with the latest start time not after
 * the free's, and a free with no such allocation waits (up to
 * GT_MEM_PENDING_FREES) for an allocation of its address that started
 * before it. Frees still waiting at the end, and those past the cap, are
 * frees of unknown addresses.
 *
 * The peak is a question of time, not of arrival: threads' records reach
 * the report a chunk at a time, so another thread's allocations can
 * arrive after this one's frees although they were live together. Each
 * change of a device's bytes is kept with its time, and gt_memory_finish
 * replays them in time order. Until then peak_bytes is the peak in
 * arrival order. The changes kept are bounded (GT_MEM_DELTAS_MAX per
 * device): past that, the older half is replayed and folded away, and a
 * change that arrives later than its moment was folded counts at the
 * folded moment. Sinks, when set, are told of every change as it is
 * replayed, in time order with the bytes in use after it: that is the
 * traces' memory counter (one sink per trace).
 *
 * Capture windows (a record flagged GT_EVF_UNCAPTURED was made outside
 * one): every allocation and free moves the bytes in use, so `current` and
 * what is still allocated at the end are right whenever the allocations
 * were made; allocations and frees are counted, and the peak taken, only
 * inside windows. Each window's opening is a moment inside it, so the
 * bytes in use then count towards the peak (gt_memory_window_open).
 *
 * How memory ended: freed by the program (a free, whenever it came);
 * released with its context (still allocated when a GT_EV_CTX_END record
 * ended the context it was allocated in: the driver freed it); or still
 * held when the process ended (live at the report: leaked). */
#ifndef GT_MEMORY_TABLE_H
#define GT_MEMORY_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define GT_MEM_PENDING_FREES 4096u
#define GT_MEM_DELTAS_MAX (1u << 20)
#define GT_MEM_HOST_DEVICE (-1) /* the row of pinned host memory and device-less records */
#define GT_MEM_LEAKS_LISTED 5u  /* largest leaks per device in the verbose summary and the JSON */
#define GT_MEM_SINKS 2u         /* one per streamed trace format */

/* A change of a device's bytes in use, at a time; `counted` when it was
 * inside a capture window (only those make the peak and reach the sink). */
typedef struct gt_mem_delta {
    uint64_t time;
    int64_t bytes : 63;
    int64_t counted : 1; /* 0 or -1 */
} gt_mem_delta;
_Static_assert(sizeof(gt_mem_delta) == 16, "a delta stays 16 bytes: up to 2^20 per device");

/* Told of the bytes in use on a device row after a change at `time`. */
typedef void (*gt_mem_sink_fn)(void *ctx, int32_t device, uint64_t time, uint64_t bytes);

typedef struct gt_mem_sink {
    gt_mem_sink_fn changed; /* NULL: none */
    void *ctx;
} gt_mem_sink;

typedef struct gt_mem_device {
    int32_t device; /* CUDA ordinal, or GT_MEM_HOST_DEVICE */
    uint64_t allocs;
    uint64_t frees;
    uint64_t current_bytes;
    uint64_t peak_bytes;
    uint64_t live_allocs;         /* still allocated: still held (leaked) at the end */
    uint64_t ctx_released_allocs; /* released with their context, never freed */
    uint64_t ctx_released_bytes;
    uint64_t unknown_frees; /* frees past the pending cap */
    uint64_t pending_frees; /* frees waiting for their allocation: unknown at the end */
    /* The changes not yet folded, in arrival order, and the fold: bytes in
     * use and their peak up to folded_time. */
    gt_mem_delta *deltas;
    uint32_t ndeltas;
    uint32_t deltas_cap;
    uint64_t folded_time;
    int64_t folded_bytes;
    int64_t folded_peak;
} gt_mem_device;

/* A block: a live allocation, or a free waiting for its allocation. */
typedef struct gt_mem_block {
    uint64_t addr;
    uint64_t time; /* host_start of the allocation or free */
    uint64_t bytes;
    uint64_t ctx; /* the allocation's context; 0: none (VMM), never released with one */
    int32_t device;
    uint32_t next; /* chain in the bucket, block number + 1 */
    uint8_t space; /* address space: device pointers, host pointers, VMM handles */
    uint8_t kind;  /* enum gt_mem_kind */
    uint8_t counted; /* made inside a capture window */
    uint32_t site;   /* its call site's row (gt_callsites_alloc), 0 none */
} gt_mem_block;

typedef struct gt_block_map {
    gt_mem_block *blocks;
    uint32_t nblocks;
    uint32_t capacity;
    uint32_t free_list; /* reusable block number + 1 */
    uint32_t *buckets;  /* first block number + 1 */
    uint32_t nbuckets;
    uint32_t count;
} gt_block_map;

struct gt_site_table;

typedef struct gt_memory {
    /* The report's call sites, told of each allocation and of its end
     * (callsite_table.h); NULL: none. */
    struct gt_site_table *sites;
    gt_mem_device *devices;
    uint32_t ndevices;
    gt_block_map live;
    gt_block_map pending;
    gt_mem_sink sinks[GT_MEM_SINKS];
} gt_memory;

/* A leak for the verbose listing. */
typedef struct gt_mem_leak {
    uint64_t addr;
    uint64_t bytes;
    uint64_t time;
    uint8_t kind;
    uint32_t site; /* the label's string id of its call site, 0 none */
} gt_mem_leak;

/* The device row a record belongs to: its device, or GT_MEM_HOST_DEVICE
 * for pinned host memory and records without a device. */
int32_t gt_memory_device_of(const gt_event *ev);

/* GT_EV_ALLOC, GT_EV_FREE and GT_EV_CTX_END records that succeeded. A
 * context's end releases the live allocations made in it before it. */
void gt_memory_add(gt_memory *m, const gt_event *ev);
void gt_memory_free(gt_memory *m);

/* A capture window opened at `time`: the bytes in use then are a level
 * inside it. */
void gt_memory_window_open(gt_memory *m, uint64_t time);

/* After the last record: every device's peak, in time order (the changes
 * kept are replayed to the sink and folded). May be called again after
 * more records. */
void gt_memory_finish(gt_memory *m);

/* Sets the sink of ctx (replacing ctx's own), or with changed NULL
 * removes it. 0, or -1 when GT_MEM_SINKS other sinks are set. */
int gt_memory_set_sink(gt_memory *m, gt_mem_sink_fn changed, void *ctx);

/* Device memory in use now, summed over the devices (pinned host memory
 * left out). */
uint64_t gt_memory_device_bytes(const gt_memory *m);

/* Frees of unknown addresses on a device row so far. */
uint64_t gt_memory_unknown_frees(const gt_mem_device *d);

/* Fills out with the largest live allocations of a device, largest first;
 * returns how many. */
size_t gt_memory_largest_leaks(const gt_memory *m, int32_t device, gt_mem_leak *out, size_t max);

/* For a report read back from a file: the row of a device (created
 * empty when new; NULL when out of memory), and a leak it lists (0, or
 * -1 when out of memory). */
gt_mem_device *gt_memory_device_row(gt_memory *m, int32_t device);
int gt_memory_keep_leak(gt_memory *m, int32_t device, const gt_mem_leak *leak);

#endif
