/* Folding records into the tables (SPEC §4, §6).
 *
 * A record whose call failed (result != 0) counts in `api` (as an error),
 * `compile` (as not ok) and `sync` (the host was still blocked); the other
 * categories describe work that happened, so they skip it. Records flagged
 * GT_EVF_UNCAPTURED were made
 * outside a capture window: they are not events, and count only towards
 * memory in use. */
#include "advice.h"
#include "aggregate.h"
#include "counter_table.h"
#include "checksum_list.h"
#include "callsite_table.h"
#include "event.h"
#include "gpu_busy.h"
#include "heap_table.h"
#include "memory_table.h"
#include "nvtx_marks.h"
#include "nvtx_payload.h"
#include "nvtx_table.h"
#include "report.h"
#include "settings.h"
#include "stats.h"
#include "table.h"

static uint64_t host_ns(const gt_event *ev)
{
    return ev->host_end > ev->host_start ? ev->host_end - ev->host_start : 0;
}

/* The interval that stands for a record's GPU work: its GPU times, or its
 * host times when GPU timing is off. Captured work has none: it runs later,
 * as part of a graph. */
static bool work_interval(const gt_report *r, const gt_event *ev, uint64_t *start, uint64_t *end)
{
    if (ev->flags & GT_EVF_CAPTURED) return false;
    if (ev->flags & GT_EVF_GPU_TIMED) {
        *start = ev->gpu_start;
        *end = ev->gpu_end > ev->gpu_start ? ev->gpu_end : ev->gpu_start;
        return true;
    }
    if (r->opt.gpu_timing != GT_GPU_TIMING_OFF) return false;
    *start = ev->host_start;
    *end = ev->host_start + host_ns(ev);
    return true;
}

static gt_row *row_of(gt_report *r, enum gt_category c, uint32_t f0, uint32_t f1, uint32_t f2)
{
    gt_row_key key = {{f0, f1, f2, 0}};
    return gt_table_row(&r->tables[c], &key);
}

/* kernel, memcpy, memset: one call, its bytes and its work time. */
static void add_work_row(gt_report *r, gt_row *row, const gt_event *ev)
{
    if (!row) return;
    row->calls++;
    row->bytes += ev->bytes;
    uint64_t start, end;
    if (work_interval(r, ev, &start, &end)) {
        gt_stats_add(&row->time, end - start);
        row->timed_bytes += ev->bytes;
    }
}

static void add_kernel(gt_report *r, const gt_event *ev)
{
    gt_row *row = row_of(r, GT_CAT_KERNEL, ev->name, ev->kind == GT_EV_GRAPH, 0);
    add_work_row(r, row, ev);
    if (row) row->api_ns_total += host_ns(ev);
}

/* A kernel a graph launch ran (CUPTI's node-level records): its run and
 * GPU time count in the kernel's row, as a graph call. The launch itself
 * is the call, with its own row and GPU busy time. */
static void add_graph_node(gt_report *r, const gt_event *ev)
{
    if (ev->kind != GT_EV_KERNEL || !gt_report_enabled(r, GT_CAT_KERNEL)) return;
    gt_row *row = row_of(r, GT_CAT_KERNEL, ev->name, 0, 0);
    if (!row) return;
    row->graph_calls++;
    uint64_t start, end;
    if (work_interval(r, ev, &start, &end)) gt_stats_add(&row->time, end - start);
}

static void add_memcpy(gt_report *r, const gt_event *ev)
{
    bool async = (ev->flags & GT_EVF_ASYNC) != 0;
    add_work_row(r, row_of(r, GT_CAT_MEMCPY, ev->u.copy.dir, ev->u.copy.host_mem, async), ev);
}

static void add_memset(gt_report *r, const gt_event *ev)
{
    add_work_row(r, row_of(r, GT_CAT_MEMSET, (ev->flags & GT_EVF_ASYNC) != 0, 0, 0), ev);
}

/* compile, module, sync, api: one call and its host time. */
static gt_row *add_host_row(gt_row *row, const gt_event *ev)
{
    if (!row) return NULL;
    row->calls++;
    gt_stats_add(&row->time, host_ns(ev));
    return row;
}

static void add_compile(gt_report *r, const gt_event *ev)
{
    gt_row_key key = {{ev->api, ev->name, ev->result == 0, ev->u.compile.functions}};
    gt_row *row = add_host_row(gt_table_row(&r->tables[GT_CAT_COMPILE], &key), ev);
    if (!row) return;
    row->bytes += ev->bytes;
    row->firsts += ev->u.compile.first != 0;
}

static void add_module(gt_report *r, const gt_event *ev)
{
    gt_row *row = add_host_row(row_of(r, GT_CAT_MODULE, ev->api, ev->u.module.image_kind, 0), ev);
    if (row) row->bytes += ev->bytes;
}

static void add_api(gt_report *r, const gt_event *ev)
{
    gt_row *row = add_host_row(row_of(r, GT_CAT_API, ev->api, 0, 0), ev);
    if (row && ev->result != 0) gt_row_add_error(row, ev->error, ev->result);
}

#define STREAM_SHARED UINT32_MAX

/* A stream that GPU work reaches from a second thread counts once as
 * shared. Each thread's per-thread default stream is its own. */
static void note_stream_thread(gt_report *r, const gt_event *ev)
{
    if (ev->stream == GT_PER_THREAD_STREAM) return;
    uint64_t key = ev->stream ^ (uint64_t)ev->device << 48;
    uint32_t first;
    if (!gt_idmap_get(&r->stream_threads, key, &first)) {
        gt_idmap_set(&r->stream_threads, key, ev->tid);
    } else if (first != STREAM_SHARED && first != ev->tid) {
        gt_idmap_set(&r->stream_threads, key, STREAM_SHARED);
        r->shared_streams++;
    }
}

/* The category GPU work counts in. */
static enum gt_category work_category(const gt_event *ev)
{
    return ev->kind == GT_EV_MEMCPY   ? GT_CAT_MEMCPY
           : ev->kind == GT_EV_MEMSET ? GT_CAT_MEMSET
                                      : GT_CAT_KERNEL;
}

/* Where the work was launched from (callsite_table.h): its GPU time, as
 * its row counts it. */
static void add_site_work(gt_report *r, const gt_event *ev)
{
    uint64_t start, end;
    uint64_t ns = work_interval(r, ev, &start, &end) ? end - start : 0;
    gt_callsites_add_work(&r->callsites, ev, ns);
}

static void add_gpu_work(gt_report *r, const gt_event *ev)
{
    /* GPU busy time is that of the work recorded: of the categories on. */
    if ((ev->flags & (GT_EVF_GPU_TIMED | GT_EVF_CAPTURED)) == GT_EVF_GPU_TIMED &&
        gt_report_enabled(r, work_category(ev))) {
        gt_gpu_busy_add(&r->busy, ev->gpu_start, ev->gpu_end);
        if (ev->kind != GT_EV_MEMCPY && ev->kind != GT_EV_MEMSET)
            gt_gpu_busy_kernel(&r->busy, ev->gpu_start);
        note_stream_thread(r, ev);
    }
    uint64_t start, end;
    if (gt_report_enabled(r, GT_CAT_NVTX) && work_interval(r, ev, &start, &end))
        gt_nvtx_gpu_work(&r->nvtx, ev->tid, ev->host_start, start, end);
}

/* An allocation, a free or a context's end into the memory table and,
 * for memory per range, to the thread's open ranges: the device memory
 * it moved and what is in use after it. Outside a capture window
 * (`counted` false) only what is in use changes. */
static void add_memory(gt_report *r, const gt_event *ev, bool counted)
{
    bool ranges = r->nvtx.memory && gt_report_enabled(r, GT_CAT_NVTX);
    uint64_t before = ranges ? gt_memory_device_bytes(&r->memory) : 0;
    gt_memory_add(&r->memory, ev);
    if (!ranges) return;
    uint64_t after = gt_memory_device_bytes(&r->memory);
    int64_t moved = counted ? (int64_t)(after - before) : 0;
    gt_nvtx_memory(&r->nvtx, ev->tid, ev->host_start, moved, after);
}

static void add_nvtx(gt_report *r, const gt_event *ev)
{
    if (!gt_report_enabled(r, GT_CAT_NVTX)) return;
    if (ev->kind == GT_EV_NVTX_MARK) {
        gt_nvtx_add(&r->nvtx, &r->tables[GT_CAT_NVTX], ev);
        gt_nvtx_payload_mark(r, ev, gt_nvtx_marks_add(&r->marks, ev));
        return;
    }
    gt_nvtx_payload_range(r, ev, gt_nvtx_add(&r->nvtx, &r->tables[GT_CAT_NVTX], ev));
}

static void add_category(gt_report *r, const gt_event *ev)
{
    bool ok = ev->result == 0;
    switch ((enum gt_event_kind)ev->kind) {
    case GT_EV_KERNEL:
    case GT_EV_GRAPH:
        if (ok && gt_report_enabled(r, GT_CAT_KERNEL)) add_kernel(r, ev);
        break;
    case GT_EV_MEMCPY:
        if (ok && gt_report_enabled(r, GT_CAT_MEMCPY)) add_memcpy(r, ev);
        break;
    case GT_EV_MEMSET:
        if (ok && gt_report_enabled(r, GT_CAT_MEMSET)) add_memset(r, ev);
        break;
    case GT_EV_ALLOC:
    case GT_EV_FREE:
    case GT_EV_CTX_END:
        if (ok && gt_report_enabled(r, GT_CAT_MEMORY)) add_memory(r, ev, true);
        break;
    case GT_EV_COMPILE:
        if (gt_report_enabled(r, GT_CAT_COMPILE)) add_compile(r, ev);
        break;
    case GT_EV_MODULE:
        if (ok && gt_report_enabled(r, GT_CAT_MODULE)) add_module(r, ev);
        break;
    case GT_EV_SYNC:
        if (gt_report_enabled(r, GT_CAT_SYNC))
            add_host_row(row_of(r, GT_CAT_SYNC, ev->api, 0, 0), ev);
        break;
    case GT_EV_NVTX_PUSH:
    case GT_EV_NVTX_POP:
    case GT_EV_NVTX_START:
    case GT_EV_NVTX_END:
    case GT_EV_NVTX_MARK:
        add_nvtx(r, ev);
        break;
    case GT_EV_NVTX_FIELDS:
        if (gt_report_enabled(r, GT_CAT_NVTX)) gt_nvtx_payload_fields(r, ev);
        break;
    case GT_EV_NVTX_COUNTER:
        if (gt_report_enabled(r, GT_CAT_NVTX)) gt_counter_table_add(&r->counters, ev);
        break;
    case GT_EV_NVTX_HEAP:
        if (gt_report_enabled(r, GT_CAT_MEMORY)) gt_heap_table_add(&r->heaps, ev);
        break;
    case GT_EV_NONE:
    case GT_EV_API:
    case GT_EV_THREAD_NAME:
    case GT_EV_CHECKSUM:
    case GT_EV_KIND_COUNT:
        break;
    }
}

/* A record made outside a capture window: not an event of the report; an
 * allocation, a free or a context's end only moves the memory in use
 * (memory.c). */
static void add_uncaptured(gt_report *r, const gt_event *ev)
{
    if (!gt_report_enabled(r, GT_CAT_MEMORY)) return;
    if (gt_kind_moves_memory(ev->kind) && ev->result == 0) add_memory(r, ev, false);
    if (ev->kind == GT_EV_NVTX_HEAP) gt_heap_table_add(&r->heaps, ev);
}

/* A copy's checksum: the checksum list, not an event of the tables. */
static void add_checksum(gt_report *r, const gt_event *ev)
{
    gt_checksum_entry e = {.index = ev->u.checksum.index,
                           .bytes = ev->bytes,
                           .hash = ev->u.checksum.hash,
                           .thread = ev->u.checksum.thread,
                           .site = GT_SITE_ID(ev->site),
                           .status = ev->u.checksum.status};
    gt_checksums_add(&r->checksums, &e, host_ns(ev));
}

void gt_report_add(gt_report *r, const gt_event *ev)
{
    if (ev->kind == GT_EV_CHECKSUM) {
        add_checksum(r, ev);
        return;
    }
    if (ev->flags & GT_EVF_UNCAPTURED) {
        add_uncaptured(r, ev);
        return;
    }
    if (ev->flags & GT_EVF_GRAPH_NODE) {
        add_graph_node(r, ev);
        return;
    }
    r->events++;
    gt_advice_add(&r->advice, ev);
    /* Most programs have no NVTX range open: skip the call then. */
    if (r->nvtx.nthreads && gt_report_enabled(r, GT_CAT_NVTX))
        gt_nvtx_observe(&r->nvtx, &r->tables[GT_CAT_NVTX], ev);
    if (gt_kind_is_gpu_work(ev->kind)) add_gpu_work(r, ev);
    /* What the GPU waited for while code was made (gpu_busy.h). */
    if (ev->kind == GT_EV_COMPILE || ev->kind == GT_EV_MODULE)
        gt_gpu_busy_code(&r->busy, ev->host_start, ev->host_end);
    if (ev->site && ev->result == 0 && gt_kind_is_gpu_work(ev->kind)) add_site_work(r, ev);
    add_category(r, ev);
    /* A blocking copy or memset is also time the host spent waiting. */
    if ((ev->flags & GT_EVF_BLOCKING) && ev->kind != GT_EV_SYNC &&
        gt_report_enabled(r, GT_CAT_SYNC))
        add_host_row(row_of(r, GT_CAT_SYNC, ev->api, 0, 0), ev);
    if (ev->api && gt_report_enabled(r, GT_CAT_API)) add_api(r, ev);
}

void gt_report_add_site(gt_report *r, uint32_t label, const gt_site *site)
{
    gt_callsites_add_site(&r->callsites, label, site);
}

void gt_report_set_callsites_mode(gt_report *r, enum gt_callsites mode)
{
    r->callsites_mode = mode;
}

void gt_report_add_after_cut(gt_report *r, const gt_event *ev)
{
    if (gt_kind_moves_memory(ev->kind) || ev->kind == GT_EV_NVTX_HEAP) add_category(r, ev);
}

unsigned gt_report_key_strings(enum gt_category c)
{
    switch (c) {
    case GT_CAT_KERNEL:
    case GT_CAT_MODULE:
    case GT_CAT_SYNC:
    case GT_CAT_API:
        return 0x1u;
    case GT_CAT_NVTX:
        return 0x3u;
    case GT_CAT_COMPILE:
        return 0xBu;
    case GT_CAT_MEMCPY:
    case GT_CAT_MEMSET:
    case GT_CAT_MEMORY:
    case GT_CAT_COUNT:
        break;
    }
    return 0;
}

gt_sorted_row *gt_report_sorted_rows(const gt_report *r, enum gt_category c, size_t *n)
{
    *n = 0;
    if ((unsigned)c >= GT_CAT_COUNT) return NULL;
    return gt_table_sorted(&r->tables[c], r->names, gt_report_key_strings(c), n);
}
