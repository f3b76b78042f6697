/* Memory heaps and regions that pool allocators describe with NVTX
 * (nvToolsExtMem.h): per heap, the regions (sub-allocations) in use and
 * their bytes, now and at their peak, so that a pool's memory is seen by
 * what it holds and not only by the pool's driver allocations (the memory
 * table).
 *
 * As in the memory table, heap records made outside a capture window
 * (GT_EVF_UNCAPTURED) move what is in use but count towards no peak and
 * no total. Peaks are taken in the order records reach the report: a heap
 * whose regions come and go from several threads may see its peak placed
 * within a buffer of records of its moment. Bounded: GT_HEAPS_MAX heaps,
 * GT_HEAP_REGIONS_MAX regions in use at once (past them, counted as
 * untracked). */
#ifndef GT_HEAP_TABLE_H
#define GT_HEAP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "idmap.h"

#define GT_HEAPS_MAX 4096u
#define GT_HEAP_REGIONS_MAX (1u << 20)

typedef struct gt_heap_row {
    uint64_t address; /* the heap's handle: its address; 0 the process-wide heap */
    uint32_t domain;  /* string ids */
    uint32_t name;
    uint64_t bytes;         /* the heap's size when registered */
    uint64_t registrations; /* times a heap was registered at this address */
    uint64_t regions;       /* regions in use now */
    uint64_t region_bytes;  /* their bytes */
    uint64_t regions_peak;  /* the most regions in use at once */
    uint64_t region_bytes_peak;
    uint64_t regions_added; /* regions registered in all */
    bool live;              /* registered and not unregistered */
} gt_heap_row;

typedef struct gt_heap_region {
    uint64_t address;
    uint64_t bytes;
    uint32_t heap;      /* row */
    uint32_t next_free; /* while free: the next free slot + 1 */
} gt_heap_region;

typedef struct gt_heap_table {
    gt_heap_row *rows;
    uint32_t n;
    uint32_t capacity;
    gt_idmap index; /* address -> rows[] */
    gt_heap_region *regions;
    uint32_t nslots;
    uint32_t slots_capacity;
    uint32_t free_slot; /* a free slot + 1, 0 none */
    uint32_t in_use;
    gt_idmap region_index; /* region address -> regions[] */
    uint64_t untracked;    /* heaps or regions past the caps or without memory */
} gt_heap_table;

/* One GT_EV_NVTX_HEAP record. */
void gt_heap_table_add(gt_heap_table *t, const gt_event *ev);

/* A row counted elsewhere (a report read back, or merged): added to the
 * row of its (domain, name) among rows read this way (an unnamed heap: of
 * its address), its peaks summed as merged devices' are. 0, or -1 for want
 * of memory. */
int gt_heap_table_fold(gt_heap_table *t, const gt_heap_row *in);

/* The rows by peak bytes in regions, most first; the caller frees the
 * array. NULL with *n = 0 when none or no memory. */
const gt_heap_row **gt_heap_table_sorted(const gt_heap_table *t, size_t *n);

void gt_heap_table_free(gt_heap_table *t);

#endif
