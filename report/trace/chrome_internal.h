/* The timeline's state, shared by chrome.c (events) and chrome_state.c
 * (tracks, thread names, open NVTX ranges, escaped names, metadata). */
#ifndef GT_CHROME_INTERNAL_H
#define GT_CHROME_INTERNAL_H

#include <stdbool.h>

#include "aggregate.h"
#include "chrome.h"
#include "event.h"
#include "idmap.h"
#include "memory_table.h"
#include "outbuf.h"
#include "report.h"
#include "strtab.h"
#include "timeline.h"
#include "trace_format.h"

typedef struct tl_track {
    uint16_t device;
    uint64_t stream;
} tl_track;

/* What an NVTX range says beside its name (string ids; color ARGB, 0 none). */
typedef struct tl_attrs {
    uint32_t domain;
    uint32_t category;
    uint32_t color;
} tl_attrs;

typedef struct tl_frame {
    uint64_t start;
    uint32_t name;
    uint32_t category;
    uint32_t color;
} tl_frame;

typedef struct tl_thread {
    uint32_t tid;
    uint32_t name;
} tl_thread;

/* The push/pop ranges open on one (thread, domain). */
typedef struct tl_stack {
    uint32_t tid;
    uint32_t domain;
    uint32_t depth;
    uint32_t overflow; /* pushes past GT_NVTX_MAX_DEPTH not yet popped */
    tl_frame *frames;  /* GT_NVTX_MAX_DEPTH, allocated on first push */
} tl_stack;

/* A start/end range whose other half has not come yet. */
typedef struct tl_range {
    uint64_t id;
    uint64_t time; /* of the start, or of the end when it came first */
    uint32_t name;
    uint32_t tid;
    tl_attrs attrs;
    bool ended; /* the end came first */
} tl_range;

struct gt_timeline {
    gt_trace_common common; /* first (trace_format.h): the file and what was left out */
    const gt_strtab *names;
    int pid;
    uint64_t origin;
    unsigned categories;
    bool any;          /* an event was written: the next one needs a separator */
    uint64_t flows;    /* flows from launches to GPU slices so far: the last id */
    char pid_text[40]; /* `,"pid":P,"tid":` */
    size_t pid_len;
    /* Quoted memcpy labels by direction, host memory and async ("" until
     * used); an out-of-range value has the last row of its index. */
    char copy_names[GT_DIR_COUNT + 1][GT_HOST_COUNT + 1][2][GT_COPY_LABEL_MAX + 2];
    gt_memory *memory; /* followed for the counter, NULL when not */

    /* Escaped names: name_off[id] = offset + 1 in arena of a uint32_t
     * length followed by the quoted JSON string. */
    uint32_t *name_off;
    uint32_t name_ids;
    char *arena;
    size_t arena_len, arena_cap;
    char *scratch; /* a name that did not fit the arena, until the next one */

    gt_idmap track_index; /* (device, stream) -> tracks[] */
    tl_track *tracks;
    uint32_t ntracks, tracks_cap;

    gt_idmap thread_index; /* tid -> threads[] */
    tl_thread *threads;
    uint32_t nthreads, threads_cap;

    gt_idmap stack_index; /* tid | domain << 32 -> stacks[] */
    tl_stack *stacks;
    uint32_t nstacks, stacks_cap;

    gt_idmap range_index; /* range id -> ranges[] */
    tl_range *ranges;
    uint32_t nranges, ranges_cap;
};

/* The quoted, escaped name of a string id; *len its length. */
const char *gt_tl_name(gt_timeline *tl, uint32_t id, size_t *len);

/* The synthetic tid of a GPU track; 0 when past the cap. */
uint32_t gt_tl_track(gt_timeline *tl, uint16_t device, uint64_t stream);

void gt_tl_thread_name(gt_timeline *tl, uint32_t tid, uint32_t name);

/* The push/pop stack of (tid, domain); NULL past the cap or out of memory. */
tl_stack *gt_tl_stack(gt_timeline *tl, uint32_t tid, uint32_t domain);

/* The waiting half of start/end range id, or NULL. */
tl_range *gt_tl_range_find(gt_timeline *tl, uint64_t id);
/* Remembers a half; false past the cap or out of memory. */
bool gt_tl_range_wait(gt_timeline *tl, const tl_range *r);
void gt_tl_range_forget(gt_timeline *tl, tl_range *r);

/* Events (chrome.c), for the metadata and the ranges closed at the end. */
void gt_tl_nvtx_slice(gt_timeline *tl, uint32_t tid, uint32_t name, uint64_t start, uint64_t end,
                      const tl_attrs *attrs);
void gt_tl_nvtx_async(gt_timeline *tl, char ph, const tl_range *r, uint64_t time);
void gt_tl_metadata(gt_timeline *tl, const char *what, uint32_t tid, const char *key,
                    const char *text, size_t len, uint64_t number);

/* The M events: the process, the named threads, the GPU tracks (chrome_state.c). */
void gt_tl_write_metadata(gt_timeline *tl, const gt_process_info *p);

void gt_tl_state_free(gt_timeline *tl);

#endif
