/* The report's insides, shared by the aggregation and the writers.
 *
 * Row keys per category (gt_row_key.f):
 *   kernel   name id, 1 for a graph launch
 *   memcpy   enum gt_copy_dir, enum gt_host_mem, 1 when async
 *   memset   1 when async
 *   compile  api id, program name id, 1 when it succeeded, id of its other
 *            functions (a line each; 0 none)
 *   module   api id, enum gt_image_kind
 *   sync     api id
 *   nvtx     domain id, message id
 *   api      api id
 * The memory category has its own structure (memory.h). */
#ifndef GT_AGGREGATE_H
#define GT_AGGREGATE_H

#include <stdbool.h>

#include "advice.h"
#include "counter_table.h"
#include "checksum_list.h"
#include "callsite_table.h"
#include "event.h"
#include "gpu_busy.h"
#include "heap_table.h"
#include "idmap.h"
#include "loaded.h"
#include "memory_table.h"
#include "nvtx_marks.h"
#include "nvtx_table.h"
#include "report.h"
#include "strtab.h"
#include "table.h"

struct gt_report {
    gt_report_options opt;
    const gt_strtab *names;
    uint64_t events;
    uint64_t dropped;
    char gpu_timing_off[256]; /* why GPU timing could not work; "" when it could */
    /* Where the GPU times came from (gt_report_set_gpu_source; until set,
     * event pairs, or off when timing was off). */
    enum gt_gpu_source gpu_source;
    bool gpu_source_set;
    char gpu_source_detail[GT_GPU_DETAIL_MAX];
    /* Streams that GPU work reached from more than one thread: an event
     * pair there also times the other threads' work (event pairs only). */
    uint64_t shared_streams;
    gt_idmap stream_threads; /* (device, stream) -> first thread + 1, or SHARED */
    char dropped_why[192];   /* why events were dropped; "" when not known */
    gt_capture_info capture; /* capture.c; valid when capture_set */
    bool capture_set;
    gt_snapshot_info snapshot; /* snapshot.c */
    uint64_t late;             /* records made after the cut (only their memory effect is kept) */
    uint64_t late_gpu_work;    /* of them, kernel launches, copies and memsets */
    uint64_t gpu_pending;      /* GPU work reported without GPU time: still pending at the end */
    gt_table tables[GT_CAT_COUNT]; /* tables[GT_CAT_MEMORY] stays empty */
    gt_memory memory;
    gt_nvtx nvtx;
    gt_nvtx_marks marks;
    gt_idmap nvtx_targets; /* tid -> what its last NVTX record's fields go to (nvtx_payload.c) */
    gt_counter_table counters; /* NVTX counters */
    gt_heap_table heaps;       /* NVTX memory heaps and regions */
    gt_gpu_busy busy;
    gt_advice_acc advice;
    gt_checksums checksums;   /* GPUTRACE_CHECKSUM (checksum_list.h) */
    gt_site_table callsites;
    enum gt_callsites callsites_mode;
    struct gt_loaded *loaded; /* a report read back or merged (loaded.h); NULL in the shim */
};

static inline bool gt_report_enabled(const gt_report *r, enum gt_category c)
{
    return (r->opt.categories & GT_CAT_BIT(c)) != 0;
}

/* Which key fields of a category are string ids (bit i = field i). */
unsigned gt_report_key_strings(enum gt_category c);

/* The rows of a category in report order (gt_table_sorted); the caller
 * frees the array. */
gt_sorted_row *gt_report_sorted_rows(const gt_report *r, enum gt_category c, size_t *n);

/* A row's name in words, the same in every format (row_label.c), in a
 * new string (NULL when out of memory):
 *   kernel   the kernel's name; GT_GRAPH_LAUNCH_NAME for graph launches
 *   memcpy   direction, host memory (none for DtoD and PtoP), async or
 *            sync: "HtoD pinned async", "DtoD sync"
 *   memset   "async" or "sync"
 *   compile  "api program", then " (failed)" when it failed
 *   module   "api kind": "cuModuleLoadData ptx"
 *   nvtx     "domain:message", or the message in the default domain
 *   sync, api  the entry point */
char *gt_row_label(const gt_report *r, enum gt_category c, const gt_row *row);

/* An NVTX domain and message in words, as gt_row_label names NVTX rows:
 * "domain:message", or the message alone in the default domain. */
char *gt_nvtx_label(const gt_report *r, uint32_t domain, uint32_t message);

/* The row of graph launches in the kernel table and its slices in the
 * trace: a name no kernel can have (a kernel may be called `graph`). The
 * JSON row also says "graph": true. */
#define GT_GRAPH_LAUNCH_NAME "[graph launch]"

/* The memcpy label into buf (cut to cap); GT_COPY_LABEL_MAX holds any. */
#define GT_COPY_LABEL_MAX 32u
void gt_copy_label_format(char *buf, size_t cap, enum gt_copy_dir dir, enum gt_host_mem host,
                          bool async);

/* Bandwidth of a transfer row in GB/s (10^9 bytes per second of its time). */
static inline double gt_row_gbps(const gt_row *row)
{
    return row->time.total ? (double)row->timed_bytes / (double)row->time.total : 0.0;
}

#endif
