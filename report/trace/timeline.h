/* What the two streamed timelines share: the Chrome JSON trace (chrome.h)
 * and Perfetto's protobuf trace (pftrace.h) draw the same records the
 * same way, under the same caps, and count what they leave out alike. */
#ifndef GT_TIMELINE_H
#define GT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "report.h"

#define GT_TIMELINE_BUFFER_BYTES (1u << 20)
#define GT_TIMELINE_MAX_TRACKS 4096u   /* GPU (device, stream) tracks */
#define GT_TIMELINE_MAX_THREADS 65536u /* named host threads */
#define GT_TIMELINE_MAX_STACKS 4096u   /* NVTX push/pop stacks: (thread, domain) */
#define GT_TIMELINE_MAX_RANGES 65536u  /* NVTX start/end ranges open at once */

/* Events left out, by cause. */
typedef struct gt_timeline_losses {
    uint64_t tracks;    /* GPU work on (device, stream) tracks past GT_TIMELINE_MAX_TRACKS */
    /* Perfetto: GPU work, and NVTX start/end ranges, overlapping as many
     * others as a stream (the ranges) has lanes (GT_PFTRACE_MAX_LANES) */
    uint64_t lanes;
    uint64_t range_lanes;
    uint64_t threads;   /* thread names (Perfetto: events of threads) past the cap */
    uint64_t too_deep;  /* NVTX push/pop ranges nested deeper than GT_NVTX_MAX_DEPTH */
    uint64_t ranges;    /* NVTX ranges past GT_TIMELINE_MAX_STACKS or _MAX_RANGES */
    uint64_t no_memory; /* events that could not be buffered */
} gt_timeline_losses;

static inline uint64_t gt_timeline_losses_total(const gt_timeline_losses *l)
{
    return l->tracks + l->lanes + l->range_lanes + l->threads + l->too_deep + l->ranges +
           l->no_memory;
}

/* The small questions below are asked of every record by both writers:
 * inline, they cost the drain no call each. */

/* The category a record's slices are drawn under. */
static inline enum gt_category gt_timeline_category(uint8_t kind)
{
    switch (kind) {
    case GT_EV_KERNEL:
    case GT_EV_GRAPH:
        return GT_CAT_KERNEL;
    case GT_EV_MEMCPY:
        return GT_CAT_MEMCPY;
    case GT_EV_MEMSET:
        return GT_CAT_MEMSET;
    case GT_EV_ALLOC:
    case GT_EV_FREE:
    case GT_EV_CTX_END:
        return GT_CAT_MEMORY;
    case GT_EV_COMPILE:
        return GT_CAT_COMPILE;
    case GT_EV_MODULE:
        return GT_CAT_MODULE;
    case GT_EV_SYNC:
        return GT_CAT_SYNC;
    default:
        return GT_CAT_API;
    }
}

/* Whether a record of this kind says how many bytes it moved or took. */
static inline bool gt_timeline_has_bytes(uint8_t kind)
{
    return kind == GT_EV_MEMCPY || kind == GT_EV_MEMSET || kind == GT_EV_ALLOC ||
           kind == GT_EV_MODULE;
}

/* Whether a kernel, copy or memset record gets a slice at its GPU times:
 * it succeeded, was timed, was not captured into a graph, and its
 * category is among `categories` (a GT_CAT_BIT mask). */
static inline bool gt_timeline_gpu_work(const gt_event *ev, unsigned categories)
{
    return ev->result == 0 &&
           (ev->flags & (GT_EVF_GPU_TIMED | GT_EVF_CAPTURED)) == GT_EVF_GPU_TIMED &&
           (categories & GT_CAT_BIT(gt_timeline_category(ev->kind))) != 0;
}

/* What a timeline draws, per kind of record: both formats route records
 * alike (gt_timeline_route) and differ in how they draw them. */
typedef struct gt_timeline_draw {
    void (*gpu_work)(void *w, const gt_event *ev); /* kernels, copies, memsets */
    void (*host)(void *w, const gt_event *ev);     /* any other call */
    void (*nvtx_push)(void *w, const gt_event *ev);
    void (*nvtx_pop)(void *w, const gt_event *ev);
    void (*nvtx_start_end)(void *w, const gt_event *ev);
    void (*nvtx_mark)(void *w, const gt_event *ev);
    void (*nvtx_counter)(void *w, const gt_event *ev); /* a sample, on the counter's track */
    void (*thread_name)(void *w, const gt_event *ev);
} gt_timeline_draw;

/* Hands a record to what draws it: nothing for NVTX outside
 * `categories`. */
void gt_timeline_route(const gt_timeline_draw *d, void *w, unsigned categories, const gt_event *ev);

/* The stream track a piece of GPU work is drawn on: its stream, but each
 * thread's per-thread default stream (CU_STREAM_PER_THREAD) apart, as
 * (tid << 3) | 2, which no stream handle (an aligned pointer) nor the
 * constants 0, 1 and 2 equal. */
static inline uint64_t gt_timeline_stream_track(const gt_event *ev)
{
    if (ev->stream != GT_PER_THREAD_STREAM || !ev->tid) return ev->stream;
    return (uint64_t)ev->tid << 3 | GT_PER_THREAD_STREAM;
}

/* "GPU d default stream", "GPU d per-thread default stream, thread t",
 * "GPU d stream 0x...", with "?" for an unknown device; `track` as
 * gt_timeline_stream_track gives it. */
void gt_timeline_track_name(uint16_t device, uint64_t track, char *buf, size_t cap);

/* The program's name: the first word of the command without its
 * directory, or "pid P" when there is none. */
void gt_timeline_process_name(const gt_process_info *p, int pid, char *buf, size_t cap);

#endif
