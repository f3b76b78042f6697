/* The `nvtx` category: ranges per (domain, name) with their wall time and
 * the GPU time of the work issued inside them.
 *
 * Push/pop ranges form a stack per thread and domain; records of one
 * thread arrive in that thread's order, so the GPU work a thread records
 * while a range is open is the range's. Only the innermost frame of each
 * stack accumulates; a closing frame hands its totals to the frame below,
 * so each GPU record costs one update per domain in use on its thread.
 * Start/end ranges are matched by range id across threads; they enclose
 * the starting thread's GPU work issued between the start and the end, and
 * are settled once that thread's records pass the end time (or at the
 * end). Threads' records reach the report in no order between threads:
 * the end made on another thread may come after the starting thread's
 * work issued past it. So while a range's end is unknown, the work of its
 * thread waits in the thread's log (nvtx_log.c) and is given to the range
 * when the end comes, by its issue time.
 *
 * Ranges nest and overlap, so the rows' times do too: a total over rows
 * would count a nested range's time once per enclosing range, and a row's
 * own total counts a recursive range twice. So the time ranges were open
 * is also kept with overlaps counted once (nvtx_cover.c): open_ns, the
 * time each thread had any range open, summed over threads, and each
 * row's open_ns, the time each thread had a range of that row open; the
 * row's share of the whole never passes 100%.
 *
 * Memory per range (the `memory` category on): the device memory a
 * range's thread allocated and freed while it was open, as its GPU work
 * is counted, and the peak of the device memory in use (all devices) while
 * it was open (range_memory.c). */
#ifndef GT_NVTX_TABLE_H
#define GT_NVTX_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "idmap.h"
#include "table.h"

#define GT_NVTX_MAX_DEPTH 128u         /* push ranges deeper than this are counted, not timed */
#define GT_NVTX_MAX_OPEN_RANGES 65536u /* start/end ranges open at once */
#define GT_NVTX_PENDING_ENDS 4096u     /* ends waiting for their start */
/* Work waiting for the end of its thread's start/end ranges (nvtx_log.c):
 * per thread, and in all. Past them the oldest is taken to be inside. */
#define GT_NVTX_LOG_THREAD_MAX 16384u
#define GT_NVTX_LOG_MAX (1u << 20)

/* What a range has enclosed so far. */
typedef struct gt_nvtx_work {
    uint64_t gpu_ns;
    uint64_t first_start;
    uint64_t last_end;
    bool any;
    uint64_t allocated; /* device memory bytes its thread allocated, freed */
    uint64_t freed;
} gt_nvtx_work;

/* Where the device memory in use stood when a range opened: the change
 * count then and the bytes in use (range_memory.c). */
typedef struct gt_nvtx_mem_mark {
    uint64_t seq;
    uint64_t level;
} gt_nvtx_mem_mark;

typedef struct gt_nvtx_frame {
    int32_t row;
    uint64_t start;
    gt_nvtx_work work;
    gt_nvtx_mem_mark opened;
} gt_nvtx_frame;

typedef struct gt_nvtx_stack {
    uint32_t domain;
    uint32_t depth;
    uint32_t capacity;
    uint32_t overflow; /* pushes past GT_NVTX_MAX_DEPTH not yet popped */
    gt_nvtx_frame *frames;
} gt_nvtx_stack;

static inline void gt_nvtx_work_add(gt_nvtx_work *w, uint64_t start, uint64_t end)
{
    w->gpu_ns += end - start;
    if (!w->any || start < w->first_start) w->first_start = start;
    if (!w->any || end > w->last_end) w->last_end = end;
    w->any = true;
}

typedef struct gt_nvtx_range {
    uint64_t id;
    uint32_t tid; /* the starting thread */
    int32_t row;
    uint64_t start;
    uint64_t end;
    uint64_t first_item; /* the number its thread's next logged work had at the start */
    bool ended;
    gt_nvtx_work work;
    gt_nvtx_mem_mark opened;
    uint64_t peak;      /* device memory in use at most while open, known once ended */
    uint32_t next_free; /* while the slot is free: the next free slot + 1 */
} gt_nvtx_range;

/* A piece of GPU work [start, end), or a memory move (`moved` bytes:
 * allocated when positive, freed when negative), issued at host_start,
 * waiting in its thread's log. */
typedef struct gt_nvtx_item {
    uint64_t host_start;
    uint64_t start;
    uint64_t end;
    int64_t moved;
} gt_nvtx_item;

static inline void gt_nvtx_work_item(gt_nvtx_work *w, const gt_nvtx_item *it)
{
    if (it->moved > 0)
        w->allocated += (uint64_t)it->moved;
    else if (it->moved < 0)
        w->freed += (uint64_t)-it->moved;
    else
        gt_nvtx_work_add(w, it->start, it->end);
}

/* A thread with open ranges; forgotten when it has none. */
typedef struct gt_nvtx_thread {
    uint32_t tid;
    uint32_t nstacks;
    gt_nvtx_stack *stacks;
    uint32_t nranges; /* start/end ranges this thread started, not yet settled */
    uint32_t ended;   /* of which ended by some thread */
    uint32_t *ranges; /* indices into gt_nvtx.ranges */
    uint32_t ranges_capacity;
    /* The log (nvtx_log.c): a ring of the work issued since the oldest
     * range without a known end started, oldest at items[head]. */
    gt_nvtx_item *items;
    uint32_t items_capacity;
    uint32_t nitems;
    uint32_t head;
    uint64_t next_item; /* the number the next logged work gets */
} gt_nvtx_thread;

typedef struct gt_nvtx_pending_end {
    uint64_t id;
    uint64_t time;
} gt_nvtx_pending_end;

/* Ranges open under one key (a thread, or a thread and a row). */
typedef struct gt_nvtx_cover {
    uint32_t open;      /* ranges open now */
    uint32_t next_free; /* while the slot is free: the next free slot + 1 */
    uint64_t since;     /* when the first of them opened */
    uint64_t until;     /* the latest close so far */
} gt_nvtx_cover;

/* Anomalies, reported beside the table. */
typedef struct gt_nvtx_counts {
    uint64_t marks;
    uint64_t unbalanced_pops; /* pops with no open push range */
    uint64_t open_at_exit;    /* closed at the process end time */
    uint64_t unmatched_ends;  /* ends whose start never came */
    uint64_t too_deep;        /* pushes past GT_NVTX_MAX_DEPTH */
    uint64_t untracked;       /* ranges past the caps or out of memory */
} gt_nvtx_counts;

/* The device memory in use as records reach the report, and the peaks
 * since each moment a range opened (range_memory.c): a stack of the
 * changes no later change has exceeded, levels falling from the oldest.
 * The peak since change s is the level of the oldest entry from s on.
 * Bounded: past GT_NVTX_LEVELS_MAX entries the older half is folded into
 * one, at its highest level. */
#define GT_NVTX_LEVELS_MAX 65536u

typedef struct gt_nvtx_levels {
    uint64_t seq;   /* changes so far */
    uint64_t level; /* bytes in use now */
    gt_nvtx_mem_mark *stack;
    uint32_t n;
    uint32_t capacity;
} gt_nvtx_levels;

typedef struct gt_nvtx {
    bool memory; /* memory per range is kept (the `memory` category is on) */
    gt_nvtx_levels levels;
    gt_nvtx_thread *threads;
    uint32_t nthreads;
    uint32_t threads_capacity;
    gt_idmap thread_index; /* tid -> threads[] */

    gt_nvtx_range *ranges; /* slots of open start/end ranges */
    uint32_t nslots;
    uint32_t slots_capacity;
    uint32_t open_ranges;
    uint32_t free_slot;   /* a free slot + 1, 0 none */
    gt_idmap range_index; /* range id -> ranges[] */

    gt_nvtx_pending_end *pending;
    uint32_t npending;
    uint32_t pending_capacity;
    gt_idmap pending_index; /* range id -> pending[] */

    gt_nvtx_cover *covers;
    uint32_t ncovers;
    uint32_t covers_capacity;
    uint32_t free_cover;  /* a free slot + 1, 0 none */
    gt_idmap cover_index; /* tid << 32 | row (UINT32_MAX: the thread) -> covers[] */

    uint32_t logged; /* work in all threads' logs */

    gt_nvtx_counts counts;
    uint64_t open_ns; /* time threads had a range open, summed over threads */
} gt_nvtx;

/* An NVTX record (push, pop, start, end, mark) into the rows of `table`:
 * the row of the range it opened or closed, -1 for none (a mark, a range
 * not tracked, an end whose start has not come). */
int32_t gt_nvtx_add(gt_nvtx *n, gt_table *table, const gt_event *ev);

/* Called for every record of a thread before it is folded elsewhere:
 * settles the start/end ranges of the thread that ended before it. */
void gt_nvtx_observe(gt_nvtx *n, gt_table *table, const gt_event *ev);

/* GPU work [start, end) recorded by thread tid at host_start. */
void gt_nvtx_gpu_work(gt_nvtx *n, uint32_t tid, uint64_t host_start, uint64_t start, uint64_t end);

/* Device memory allocated (moved > 0) or freed (< 0) by thread tid at
 * host_start, after which `level` bytes are in use; moved 0: only the
 * level changed (memory moved outside a capture window). */
void gt_nvtx_memory(gt_nvtx *n, uint32_t tid, uint64_t host_start, int64_t moved, uint64_t level);

/* Closes everything still open at end_ns and settles what is waiting. */
void gt_nvtx_finish(gt_nvtx *n, gt_table *table, uint64_t end_ns);
void gt_nvtx_free(gt_nvtx *n);

/* nvtx_cover.c: a range of `row` opens or closes on thread tid at t (the
 * starting thread, for a start/end range). A close adds to the row's
 * open_ns and to n->open_ns what became covered. */
void gt_nvtx_cover_open(gt_nvtx *n, uint32_t tid, int32_t row, uint64_t t);
void gt_nvtx_cover_close(gt_nvtx *n, gt_table *table, uint32_t tid, int32_t row, uint64_t t);
void gt_nvtx_cover_free(gt_nvtx *n);

/* nvtx_log.c: GPU work [start, end) thread t issued at host_start while a
 * start/end range of its own has no known end: kept until it has. */
void gt_nvtx_log_work(gt_nvtx *n, gt_nvtx_thread *t, const gt_nvtx_item *item);
/* The end of r, t's range, became known (r->end): the logged work issued
 * before it goes to r, and what no range waits for any more leaves. */
void gt_nvtx_log_end(gt_nvtx *n, gt_nvtx_thread *t, gt_nvtx_range *r);
void gt_nvtx_log_free(gt_nvtx *n, gt_nvtx_thread *t);

/* range_memory.c: where memory in use stands now; the peak since `from`
 * (at least its level); a change to `level` bytes in use. */
gt_nvtx_mem_mark gt_nvtx_levels_now(const gt_nvtx_levels *l);
uint64_t gt_nvtx_levels_peak(const gt_nvtx_levels *l, gt_nvtx_mem_mark from);
void gt_nvtx_levels_change(gt_nvtx_levels *l, uint64_t level);
void gt_nvtx_levels_free(gt_nvtx_levels *l);

#endif
