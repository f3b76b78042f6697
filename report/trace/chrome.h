/* The Chrome trace (SPEC §7), streamed: the draining thread hands each
 * record to gt_timeline_add after folding it into the report, and the
 * record's trace events are appended to a file at once, so a run of any
 * length holds no timeline in memory. gt_timeline_finish then adds the
 * metadata and closes the JSON document:
 *
 *   {"traceEvents":[
 *   {"ph":"X","cat":"kernel","name":"cuLaunchKernel","pid":P,"tid":T,"ts":12.345,"dur":4,...},
 *   ...
 *   ],"displayTimeUnit":"ns"}
 *
 * Events (Trace Event Format; ts and dur in microseconds with three
 * decimals at most, so nanoseconds are exact; ts counts from the origin
 * given at creation, the process start in the shim):
 *   X  host API calls on their thread (pid = the process, tid = the
 *      thread), with args: kernel name, bytes, program, error;
 *   X  GPU work at its GPU times on one track per (device, stream): a
 *      synthetic tid GT_TIMELINE_GPU_TID_BASE + n named "GPU d stream
 *      0x..." and sorted after the host threads, named by the kernel
 *      (GT_GRAPH_LAUNCH_NAME for a graph launch) or the kind of copy;
 *      kernels carry grid, block and dynamic shared memory;
 *   flows (Trace Event Format flow v2: "bind_id" with "flow_out" on the
 *      launching call's X event, "flow_in" on its GPU slice's): each GPU
 *      slice is linked to the host call that launched it; ids count from
 *      1 in the trace (v2 rather than "s"/"f" events: no extra event, and
 *      no doubt about which slice a flow binds to);
 *   X  NVTX push/pop ranges on their thread (written when they close);
 *   b/e  NVTX start/end ranges (async: they may cross threads), id = the
 *      range id; both kinds of range say in args their domain, category
 *      and colour ("#rrggbb") when they have one; i  NVTX marks;
 *   C  device memory in use per device ("GPU d memory"; pinned host
 *      memory as "host pinned memory") after each allocation and free, in
 *      time order: records of different threads arrive out of order, so
 *      the counter comes from the report's memory changes as it replays
 *      them in order (gt_timeline_follow_memory), mostly at the end;
 *   M  process_name, thread_name (named host threads, GPU tracks),
 *      thread_sort_index.
 * Records of disabled categories add no GPU, NVTX or counter events; work
 * without GPU times (captured into a graph, timing off, unresolved) has
 * only its host slice. Names are escaped once per string id and cached.
 * Memory: a fixed buffer, plus tables that grow with distinct names,
 * threads, streams and open ranges only, each capped (past a cap the
 * events that would need it are counted as lost, by cause). */
#ifndef GT_CHROME_H
#define GT_CHROME_H

#include <stdint.h>

#include "aggregate.h"
#include "event.h"
#include "memory_table.h"
#include "report.h"
#include "strtab.h"
#include "timeline.h"

#define GT_TIMELINE_GPU_TID_BASE (1u << 22) /* Linux thread ids are below 2^22 */
#define GT_TIMELINE_NAME_CACHE_BYTES (64u << 20)

typedef struct gt_timeline gt_timeline;

/* A timeline appending to fd (which stays the caller's). origin_ns is the
 * time that becomes ts 0; categories a GT_CAT_BIT mask. NULL when out of
 * memory. The header is written at once. */
gt_timeline *gt_timeline_create(int fd, const gt_strtab *names, int pid, uint64_t origin_ns,
                                unsigned categories);

/* The memory counter follows m (the report's memory category, which must
 * outlive the timeline's finish): m's changes are written as m replays
 * them in time order. Without it the trace has no counter. */
void gt_timeline_follow_memory(gt_timeline *tl, gt_memory *m);

/* One record (after the report took it, so that the memory counter it
 * feeds is up to date). */
void gt_timeline_add(gt_timeline *tl, const gt_event *ev);

/* Closes the ranges still open at p->end_ns, writes the metadata and the
 * end of the document, and flushes; stops following the memory. Call it
 * after gt_report_finish (which replays the last memory changes). 0, or
 * -1 with errno set to the first write error. Nothing may be added
 * afterwards. */
int gt_timeline_finish(gt_timeline *tl, const gt_process_info *p);

/* Its bytes so far and what it left out: gt_trace_bytes, gt_trace_losses
 * (trace_format.h). */

/* Frees the memory; the fd is not touched. */
void gt_timeline_destroy(gt_timeline *tl);

#endif
