/* The shim's consumer of the pipeline, on the draining thread: host ticks
 * become CLOCK_MONOTONIC ns, a failed call gets its status name, debug
 * verbosity gets a line per record, and the record goes into the report
 * and into the traces asked for (Chrome, Perfetto). */
#include "collect.h"

#include "aggregate.h"
#include "callsite_json.h"
#include "callsite_table.h"
#include "capture_window.h"
#include "clock.h"
#include "compiler.h"
#include "config.h"
#include "emit.h"
#include "event.h"
#include "log.h"
#include "pipeline.h"
#include "process.h"
#include "report.h"
#include "settings.h"
#include "stream_file.h"
#include "strtab.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Atomic(gt_error_namer) error_namer; /* release by the setter, acquire here */
static _Atomic(gt_site_namer) site_namer;   /* release by the setter, acquire here */
static gt_report *report;                   /* draining thread only */
static gt_trace trace = GT_TRACE_NONE;      /* draining thread only */
static uint64_t windows_seen;  /* capture windows the report knows of; draining thread only */
static int after_cut;          /* draining thread only: records are late */
static uint64_t late_gpu_work; /* draining thread only: late launches, copies... */
static char debug_buf[65536];
static size_t debug_len;

void gt_collect_set_error_namer(gt_error_namer fn)
{
    atomic_store_explicit(&error_namer, fn, memory_order_release);
}

void gt_collect_set_site_namer(gt_site_namer fn)
{
    atomic_store_explicit(&site_namer, fn, memory_order_release);
}

void gt_collect_reset(void)
{
    /* A forked child's report and trace may have been in the middle of an
     * update in the parent's drain thread: they are abandoned, not freed.
     * The trace files are the parent's: the child only closes its own
     * descriptors of them, each if it is still that file (the traces write
     * with write(2), so nothing buffered is written twice). */
    report = NULL;
    for (int i = 0; i < GT_TRACE_FORMAT_COUNT; i++)
        gt_stream_file_forget(&trace.files[i]);
    gt_trace_reset(&trace);
    windows_seen = 0;
    debug_len = 0;
    after_cut = 0;
    late_gpu_work = 0;
}

void gt_collect_release(void)
{
    gt_report_destroy(report);
    gt_trace_discard(&trace);
    gt_collect_reset();
}

gt_report *gt_collect_report(void)
{
    if (report) return report;
    gt_report_options opt = {
        .categories = gt_cfg.categories,
        .verbosity = gt_cfg.verbosity,
        .gpu_timing = gt_cfg.gpu_timing,
    };
    report = gt_report_create(&opt, gt_names());
    if (report) {
        gt_report_set_checksum_mode(report, gt_cfg.checksum);
        gt_report_set_callsites_mode(report, gt_cfg.callsites);
        gt_memory *m = gt_report_enabled(report, GT_CAT_MEMORY) ? &report->memory : NULL;
        gt_emit_start_trace(&trace, &gt_cfg, gt_names(), gt_process_start_ns, m);
    }
    return report;
}

void gt_collect_flush_debug(void)
{
    if (debug_len) gt_log_write(debug_buf, debug_len);
    debug_len = 0;
}

static const char *const kind_names[GT_EV_KIND_COUNT] = {
    "none",        "api",          "kernel",    "graph",     "memcpy",      "memset",
    "alloc",       "free",         "compile",   "module",    "sync",        "nvtx-push",
    "nvtx-pop",    "nvtx-start",   "nvtx-end",  "nvtx-mark", "thread-name", "ctx-end",
    "nvtx-fields", "nvtx-counter", "nvtx-heap", "checksum",
};

static void debug_event(const gt_event *ev)
{
    char name[GT_SHOWN_VALUE_MAX * 4 + 8] = "", line[1024];
    const gt_strtab *t = gt_names();
    const char *api = t ? gt_strtab_get(t, ev->api) : "";
    const char *raw = t ? gt_strtab_get(t, ev->name) : "";
    gt_escape(name, sizeof name, raw, strlen(raw), GT_SHOWN_VALUE_MAX);
    int n = snprintf(line, sizeof line,
                     "gputrace: debug: event tid %" PRIu32 " seq %" PRIu64
                     " %s %s%s%s result %" PRId32 " host %" PRIu64 "+%" PRIu64 " ns",
                     ev->tid, ev->seq, ev->kind < GT_EV_KIND_COUNT ? kind_names[ev->kind] : "?",
                     api[0] ? api : "-", name[0] ? " " : "", name, ev->result, ev->host_start,
                     ev->host_end - ev->host_start);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof line - 40 ? (size_t)n : sizeof line - 40;
    if (ev->flags & GT_EVF_GPU_TIMED)
        len += (size_t)snprintf(line + len, 40, " gpu %" PRIu64 " ns", ev->gpu_end - ev->gpu_start);
    line[len++] = '\n';
    if (debug_len + len > sizeof debug_buf) gt_collect_flush_debug();
    memcpy(debug_buf + debug_len, line, len);
    debug_len += len;
}

/* The capture windows opened since the last look: the memory in use at
 * each opening counts towards the window's peak (memory.h). */
static void take_window_openings(gt_report *r)
{
    uint64_t at[64];
    uint32_t n = gt_capture_opens_since(&windows_seen, at, 64);
    for (uint32_t i = 0; i < n; i++)
        gt_report_window_open(r, at[i]);
}

static void to_ns(gt_event *ev)
{
    /* 0 is "not set" (a mark has no end): it stays 0. */
    if (ev->host_start) ev->host_start = gt_clock_to_ns(ev->host_start);
    if (ev->host_end) ev->host_end = gt_clock_to_ns(ev->host_end);
    if (ev->host_end && ev->host_end < ev->host_start) ev->host_end = ev->host_start;
}

/* A copy's checksum keeps its site as the JSON text of the site
 * (checksum_list.h), the form a report read back has it in: its string
 * id, 0 when there is no memory for it. */
static uint32_t site_json(const gt_site *site)
{
    char text[GT_SITE_LABEL_MAX];
    gt_strtab *names = gt_names();
    size_t len = names ? gt_site_json_text(names, site, text, sizeof text) : 0;
    return len ? gt_strtab_intern(names, text, len) : 0;
}

/* The record's stack id becomes the string id of its site's label, as
 * event.h says, and the report learns of the site; a checksum's becomes
 * the string id of its site's JSON text. */
static void name_site(gt_report *r, gt_event *ev)
{
    if (ev->site == GT_SITE_SKIPPED) return;
    gt_site_namer namer = atomic_load_explicit(&site_namer, memory_order_acquire);
    const gt_site *site = NULL;
    uint32_t label = namer ? namer(GT_SITE_ID(ev->site), &site) : 0;
    if (ev->kind == GT_EV_CHECKSUM) {
        /* No row of the call site table: the site goes with the copy. */
        ev->site = label ? site_json(site) : 0;
        return;
    }
    if (label && r) gt_report_add_site(r, label, site);
    ev->site = label ? label | (ev->site & GT_SITE_SAMPLED) : 0;
}

/* Late records: the tables and the trace (which shows what the tables
 * count) take none; the memory table follows allocations to their end.
 * The rest is passed over at once: the final report may have a backlog of
 * them to get through before the process may end. */
static void collect_late(gt_report *r, gt_event *ev, uint32_t n, int debug)
{
    for (gt_event *end = ev + n; ev < end; ev++) {
        late_gpu_work += gt_kind_is_gpu_work(ev->kind);
        if (!gt_kind_moves_memory(ev->kind) && !debug) continue;
        to_ns(ev);
        if (ev->site) name_site(r, ev);
        if (GT_UNLIKELY(debug)) debug_event(ev);
        if (r) gt_report_add_after_cut(r, ev);
    }
}

void gt_collect_records(gt_event *ev, uint32_t n, void *ctx)
{
    (void)ctx;
    gt_error_namer namer = atomic_load_explicit(&error_namer, memory_order_acquire);
    int debug = gt_log_debug_enabled();
    gt_report *r = report ? report : gt_collect_report();
    if (GT_UNLIKELY(after_cut)) {
        collect_late(r, ev, n, debug);
        return;
    }
    if (GT_UNLIKELY(gt_capture_open_count() != windows_seen) && r) take_window_openings(r);
    for (gt_event *end = ev + n; ev < end; ev++) {
        to_ns(ev);
        if (ev->result && !ev->error && namer) ev->error = namer(ev);
        if (ev->site) name_site(r, ev);
        if (GT_UNLIKELY(debug)) debug_event(ev);
        if (!r) continue;
        gt_report_add(r, ev);
        if (!(ev->flags & GT_EVF_UNCAPTURED)) gt_trace_add(&trace, ev);
    }
}

void gt_collect_cut(void *ctx)
{
    (void)ctx;
    after_cut = 1;
}

/* What the first drop found: which limit the records met. */
static const char *dropped_why(const gt_pool_drops *d, char *buf, size_t size)
{
    if (!d->cap_bytes) return NULL;
    if (d->no_memory) {
        snprintf(buf, size, "because no memory could be had for them");
        return buf;
    }
    snprintf(buf, size,
             "because the event buffers (GPUTRACE_BUFFER_MB=%zu) were full, %" PRIu32
             " threads holding %.1f MiB of them and %.1f MiB waiting for the drain thread (a "
             "larger GPUTRACE_BUFFER_MB keeps more)",
             d->cap_bytes >> 20, d->threads, (double)d->held_bytes / 1048576.0,
             (double)d->waiting_bytes / 1048576.0);
    return buf;
}

void gt_collect_finish(const gt_pipeline_totals *t, const gt_process_info *p)
{
    gt_collect_flush_debug();
    gt_report *r = gt_collect_report();
    if (!r) {
        gt_warn("no memory for the report");
        return;
    }
    char why[192];
    gt_report_counts counts = {.dropped = t->dropped,
                               .dropped_why = dropped_why(&t->drops, why, sizeof why),
                               .late = t->late,
                               .late_gpu_work = late_gpu_work,
                               .gpu_pending = t->gpu_given_up};
    gt_report_set_counts(r, &counts);
    take_window_openings(r);
    gt_capture_info capture;
    gt_capture_get(&capture, p->end_ns);
    gt_report_set_capture(r, &capture);
    char detail[GT_GPU_DETAIL_MAX];
    enum gt_gpu_source source = gt_gpu_timing_source(detail, sizeof detail);
    gt_report_set_gpu_source(r, source, detail);
    if (source == GT_GPU_SOURCE_EVENTS || source == GT_GPU_SOURCE_MIXED)
        gt_report_set_gpu_timing_off(r, gt_gpu_timing_off_reason());
    gt_report_set_snapshot(r, p->end_ns, !t->snapshot, t->signal);
    if (t->snapshot) {
        gt_report_settle(r);
        gt_emit_snapshot(r, p, &gt_cfg);
        return;
    }
    gt_report_finish(r, p->end_ns);
    gt_emit(r, p, &gt_cfg, &trace, t->final);
    gt_snapshot_summary_remove(p);
}
