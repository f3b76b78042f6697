/* The JSON report, SPEC §6 schema 1: the keys the schema names, in its
 * order, then a few more after them where a table knows more (memset
 * "async" first, as it is that table's key; "timed" on kernel, memcpy and
 * memset rows: the calls that have a time, so that the statistics' count
 * is known; "graph" on kernel rows: true on the row of graph launches;
 * totals "late_events" (SPEC §11) and "gpu_pending_at_exit"; memory
 * devices "leaked_bytes", "unknown_frees" and how memory not freed ended:
 * "context_released_allocs"/"_bytes" went with their context, "leaked_*"
 * was still held when the process ended). Rows in report order: total
 * time descending, ties by key.
 *
 * Further keys let `gputrace report` render from the file exactly the
 * summary the shim printed: in totals, "gpu_intervals", "nvtx_mark_calls"
 * and "late_gpu_work" (the late events that were GPU work); on memcpy and memset rows,
 * "timed_bytes" (the bytes of the timed calls: GB/s exactly); on NVTX rows, "parent" (the position
 * in this array of the range it was first seen in, -1 for none); on memory
 * devices, "largest_leaks". A merged report (loaded.h) adds "spread" to
 * each row and a top-level "inputs". */
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "aggregate.h"
#include "checksum_doc.h"
#include "callsite_json.h"
#include "display_name.h"
#include "event.h"
#include "gpu_busy.h"
#include "json_numbers.h"
#include "json_writer.h"
#include "loaded.h"
#include "memory_table.h"
#include "nvtx_marks.h"
#include "nvtx_table.h"
#include "report.h"
#include "settings.h"
#include "stats.h"
#include "strtab.h"
#include "table.h"

#ifndef PROJECT_VERSION
#error "PROJECT_VERSION must be defined by the build"
#endif

/* What the writer carries along: the document and whether anything was
 * left out for want of memory. */
typedef struct json_ctx {
    gt_json w;
    const gt_report *r;
    const gt_process_info *p;
    const uint32_t *position; /* NVTX: each row's position in the array, by row number */
    bool incomplete;
} json_ctx;

static const char *str(const json_ctx *c, uint32_t id)
{
    return gt_strtab_get(c->r->names, id);
}

static void write_stats(json_ctx *c, const char *key, const gt_stats *s)
{
    gt_stats_summary sum;
    gt_stats_summarize(s, &sum);
    gt_json_key(&c->w, key);
    gt_json_object_begin(&c->w, true);
    gt_json_kv_uint(&c->w, "total", sum.total);
    gt_json_kv_uint(&c->w, "avg", sum.avg);
    gt_json_kv_uint(&c->w, "med", sum.med);
    gt_json_kv_uint(&c->w, "min", sum.min);
    gt_json_kv_uint(&c->w, "max", sum.max);
    gt_json_kv_uint(&c->w, "stddev", sum.stddev);
    gt_json_kv_uint(&c->w, "first", sum.first);
    gt_json_kv_uint(&c->w, "rest_avg", sum.rest_avg);
    gt_json_object_end(&c->w);
}

static void write_process(json_ctx *c, const gt_process_info *p)
{
    static const gt_process_info none = {0};
    if (!p) p = &none;
    gt_json_key(&c->w, "process");
    gt_json_object_begin(&c->w, false);
    gt_json_kv_int(&c->w, "pid", p->pid);
    gt_json_kv_int(&c->w, "ppid", p->ppid);
    gt_json_kv_string(&c->w, "hostname", p->hostname);
    gt_json_kv_string(&c->w, "command", p->command);
    gt_json_kv_uint(&c->w, "start_ns", p->start_ns);
    gt_json_kv_uint(&c->w, "end_ns", p->end_ns);
    gt_json_kv_uint(&c->w, "wall_ns", p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0);
    gt_json_object_end(&c->w);
}

static void write_config(json_ctx *c)
{
    gt_json_key(&c->w, "config");
    gt_json_object_begin(&c->w, false);
    gt_json_kv_string(&c->w, "verbosity", gt_verbosity_name(c->r->opt.verbosity));
    gt_json_key(&c->w, "categories");
    gt_json_array_begin(&c->w, true);
    for (unsigned cat = 0; cat < GT_CAT_COUNT; cat++)
        if (gt_report_enabled(c->r, cat)) gt_json_string(&c->w, gt_category_name(cat));
    gt_json_array_end(&c->w);
    gt_json_kv_string(&c->w, "gpu_timing", gt_gpu_timing_name(c->r->opt.gpu_timing));
    gt_json_kv_string(&c->w, "callsites", gt_callsites_name(c->r->callsites_mode));
    if (c->r->gpu_timing_off[0])
        gt_json_kv_string(&c->w, "gpu_timing_off_reason", c->r->gpu_timing_off);
    gt_json_object_end(&c->w);
}

/* SPEC §12: what was asked for, the source that ran, and in words which
 * libcupti it used, why it was not CUPTI, or when the source changed. */
static void write_gpu_timing(json_ctx *c)
{
    gt_json_key(&c->w, "gpu_timing");
    gt_json_object_begin(&c->w, true);
    gt_json_kv_string(&c->w, "requested", gt_gpu_timing_name(c->r->opt.gpu_timing));
    gt_json_kv_string(&c->w, "source", gt_gpu_source_name(gt_report_gpu_source(c->r)));
    gt_json_kv_string(&c->w, "detail", gt_report_gpu_source_detail(c->r));
    gt_json_object_end(&c->w);
}

static void write_totals(json_ctx *c)
{
    gt_json_key(&c->w, "totals");
    gt_json_object_begin(&c->w, false);
    gt_json_kv_uint(&c->w, "events", c->r->events);
    gt_json_kv_uint(&c->w, "dropped", c->r->dropped);
    gt_json_kv_uint(&c->w, "gpu_busy_ns", gt_gpu_busy_ns(&c->r->busy));
    gt_json_kv_uint(&c->w, "gpu_intervals", c->r->busy.intervals);
    gt_json_kv_uint(&c->w, "nvtx_mark_calls", c->r->nvtx.counts.marks);
    gt_json_kv_uint(&c->w, "nvtx_open_ns", c->r->nvtx.open_ns);
    gt_json_kv_uint(&c->w, "late_events", c->r->late);
    gt_json_kv_uint(&c->w, "late_gpu_work", c->r->late_gpu_work);
    gt_json_kv_uint(&c->w, "gpu_pending_at_exit", c->r->gpu_pending);
    const gt_loaded *l = c->r->loaded;
    for (uint32_t i = 0; l && i < l->ntotals; i++)
        gt_json_kv_uint(&c->w, l->totals[i].key, l->totals[i].value);
    gt_json_object_end(&c->w);
}

/* Calls that have a time (GPU work captured into a graph has none). */
static void write_timed(json_ctx *c, const gt_row *row)
{
    gt_json_kv_uint(&c->w, "timed", row->time.count);
}

static void kernel_row(json_ctx *c, const gt_row *row)
{
    bool graph = row->key.f[1] != 0;
    const char *name = graph ? GT_GRAPH_LAUNCH_NAME : str(c, row->key.f[0]);
    gt_json_kv_string(&c->w, "name", name);
    gt_json_kv_uint(&c->w, "calls", row->calls);
    write_stats(c, "gpu_ns", &row->time);
    gt_json_kv_uint(&c->w, "api_ns_total", row->api_ns_total);
    write_timed(c, row);
    gt_json_kv_bool(&c->w, "graph", graph);
    gt_json_kv_uint(&c->w, "graph_calls", row->graph_calls);
    char *display = gt_display_name(name);
    if (!display) c->incomplete = true;
    gt_json_kv_string(&c->w, "display_name", display ? display : name);
    free(display);
}

static void memcpy_row(json_ctx *c, const gt_row *row)
{
    gt_json_kv_string(&c->w, "direction", gt_copy_dir_name(row->key.f[0]));
    gt_json_kv_string(&c->w, "host_memory", gt_host_mem_name(row->key.f[1]));
    gt_json_kv_bool(&c->w, "async", row->key.f[2] != 0);
    gt_json_kv_uint(&c->w, "calls", row->calls);
    gt_json_kv_uint(&c->w, "bytes", row->bytes);
    write_stats(c, "gpu_ns", &row->time);
    gt_json_key(&c->w, "gbps");
    gt_json_fixed(&c->w, gt_row_gbps(row), 3);
    write_timed(c, row);
    gt_json_kv_uint(&c->w, "timed_bytes", row->timed_bytes);
}

static void memset_row(json_ctx *c, const gt_row *row)
{
    gt_json_kv_bool(&c->w, "async", row->key.f[0] != 0);
    gt_json_kv_uint(&c->w, "calls", row->calls);
    gt_json_kv_uint(&c->w, "bytes", row->bytes);
    write_stats(c, "gpu_ns", &row->time);
    write_timed(c, row);
    gt_json_kv_uint(&c->w, "timed_bytes", row->timed_bytes);
}

static void compile_row(json_ctx *c, const gt_row *row)
{
    gt_json_kv_string(&c->w, "api", str(c, row->key.f[0]));
    gt_json_kv_string(&c->w, "name", str(c, row->key.f[1]));
    gt_json_kv_uint(&c->w, "calls", row->calls);
    gt_json_kv_bool(&c->w, "ok", row->key.f[2] != 0);
    write_stats(c, "wall_ns", &row->time);
    gt_json_kv_uint(&c->w, "bytes", row->bytes);
    /* The programs (links) these calls were the first compile, verify or
     * link of: over the rows, how many there were. */
    gt_json_kv_uint(&c->w, "programs", row->firsts);
    /* The other functions the compilation defined, as its inputs show them
     * (a Numba kernel's device functions). */
    const char *functions = row->key.f[3] ? str(c, row->key.f[3]) : NULL;
    if (!functions) return;
    gt_json_key(&c->w, "functions");
    gt_json_array_begin(&c->w, true);
    for (const char *f = functions; *f;) {
        size_t n = strcspn(f, "\n");
        char *one = strndup(f, n);
        if (one) gt_json_string(&c->w, one);
        c->incomplete |= !one;
        free(one);
        f += n + (f[n] == '\n');
    }
    gt_json_array_end(&c->w);
}

static void module_row(json_ctx *c, const gt_row *row)
{
    gt_json_kv_string(&c->w, "api", str(c, row->key.f[0]));
    gt_json_kv_string(&c->w, "kind", gt_image_kind_name(row->key.f[1]));
    gt_json_kv_uint(&c->w, "calls", row->calls);
    gt_json_kv_uint(&c->w, "bytes", row->bytes);
    write_stats(c, "wall_ns", &row->time);
}

static void sync_row(json_ctx *c, const gt_row *row)
{
    gt_json_kv_string(&c->w, "api", str(c, row->key.f[0]));
    gt_json_kv_uint(&c->w, "calls", row->calls);
    write_stats(c, "wall_ns", &row->time);
}

static void nvtx_row(json_ctx *c, const gt_row *row)
{
    gt_json_kv_string(&c->w, "domain", str(c, row->key.f[0]));
    gt_json_kv_string(&c->w, "name", str(c, row->key.f[1]));
    gt_json_kv_uint(&c->w, "calls", row->calls);
    write_stats(c, "wall_ns", &row->time);
    gt_json_kv_uint(&c->w, "gpu_ns_total", row->gpu_ns_total);
    gt_json_kv_uint(&c->w, "gpu_span_ns_total", row->gpu_span_total);
    gt_json_kv_int(&c->w, "level", row->level);
    gt_json_kv_uint(&c->w, "open_ns", row->open_ns);
    const gt_table *t = &c->r->tables[GT_CAT_NVTX];
    int32_t parent = row->parent;
    bool known = parent >= 0 && (uint32_t)parent < t->nrows && c->position;
    gt_json_kv_int(&c->w, "parent", known ? (int64_t)c->position[parent] : -1);
    gt_json_nvtx_numbers(&c->w, c->r, row);
}

static void api_row(json_ctx *c, const gt_row *row)
{
    gt_json_kv_string(&c->w, "name", str(c, row->key.f[0]));
    gt_json_kv_uint(&c->w, "calls", row->calls);
    write_stats(c, "wall_ns", &row->time);
    gt_json_key(&c->w, "errors");
    gt_json_object_begin(&c->w, true);
    for (uint32_t i = 0; i < row->nerrors; i++) {
        const gt_api_error *e = &row->errors[i];
        char code[32];
        if (e->name == 0) snprintf(code, sizeof(code), "error %d", (int)e->result);
        gt_json_kv_uint(&c->w, e->name ? str(c, e->name) : code, e->count);
    }
    gt_json_object_end(&c->w);
}

typedef void (*row_writer)(json_ctx *c, const gt_row *row);

/* A merged row: its totals across the inputs. */
static void write_spread(json_ctx *c, const gt_row_spread *s)
{
    gt_json_key(&c->w, "spread");
    gt_json_object_begin(&c->w, true);
    gt_json_kv_uint(&c->w, "min", s->min);
    gt_json_kv_uint(&c->w, "med", s->med);
    gt_json_kv_uint(&c->w, "max", s->max);
    gt_json_kv_uint(&c->w, "max_input", s->max_input);
    gt_json_kv_uint(&c->w, "inputs", s->inputs);
    gt_json_object_end(&c->w);
}

/* Each row's position in the sorted array, by row number (NULL when out
 * of memory: parents are then written as -1). */
static uint32_t *positions(const gt_report *r, enum gt_category cat, const gt_sorted_row *rows,
                           size_t n)
{
    uint32_t *pos = n ? malloc(n * sizeof(*pos)) : NULL;
    for (size_t i = 0; pos && i < n; i++)
        pos[rows[i].row - r->tables[cat].rows] = (uint32_t)i;
    return pos;
}

static void write_table(json_ctx *c, const char *key, enum gt_category cat, row_writer write_row)
{
    gt_json_key(&c->w, key);
    gt_json_array_begin(&c->w, false);
    size_t n = 0;
    gt_sorted_row *rows = NULL;
    if (gt_report_enabled(c->r, cat)) {
        rows = gt_report_sorted_rows(c->r, cat, &n);
        if (!rows && c->r->tables[cat].nrows) c->incomplete = true;
    }
    uint32_t *pos = cat == GT_CAT_NVTX ? positions(c->r, cat, rows, n) : NULL;
    c->position = pos;
    for (size_t i = 0; i < n; i++) {
        gt_json_object_begin(&c->w, true);
        write_row(c, rows[i].row);
        const gt_row_spread *spread = gt_report_row_spread(c->r, cat, rows[i].row);
        if (spread) write_spread(c, spread);
        gt_json_object_end(&c->w);
    }
    c->position = NULL;
    free(pos);
    free(rows);
    gt_json_array_end(&c->w);
}

static void write_leaks(json_ctx *c, const gt_mem_device *d)
{
    gt_mem_leak leaks[GT_MEM_LEAKS_LISTED];
    size_t n = gt_memory_largest_leaks(&c->r->memory, d->device, leaks, GT_MEM_LEAKS_LISTED);
    uint64_t start = c->p ? c->p->start_ns : 0;
    gt_json_key(&c->w, "largest_leaks");
    gt_json_array_begin(&c->w, true);
    for (size_t i = 0; i < n; i++) {
        gt_json_object_begin(&c->w, true);
        gt_json_kv_uint(&c->w, "bytes", leaks[i].bytes);
        gt_json_kv_string(&c->w, "kind", gt_mem_kind_name(leaks[i].kind));
        gt_json_kv_uint(&c->w, "at_ns", leaks[i].time > start ? leaks[i].time - start : 0);
        if (leaks[i].site) gt_json_kv_string(&c->w, "site", str(c, leaks[i].site));
        gt_json_object_end(&c->w);
    }
    gt_json_array_end(&c->w);
}

static void write_memory(json_ctx *c)
{
    const gt_memory *m = &c->r->memory;
    gt_json_key(&c->w, "memory");
    gt_json_object_begin(&c->w, false);
    gt_json_key(&c->w, "devices");
    gt_json_array_begin(&c->w, false);
    for (uint32_t i = 0; gt_report_enabled(c->r, GT_CAT_MEMORY) && i < m->ndevices; i++) {
        const gt_mem_device *d = &m->devices[i];
        gt_json_object_begin(&c->w, true);
        gt_json_kv_int(&c->w, "device", d->device);
        gt_json_kv_uint(&c->w, "allocs", d->allocs);
        gt_json_kv_uint(&c->w, "frees", d->frees);
        gt_json_kv_uint(&c->w, "peak_bytes", d->peak_bytes);
        gt_json_kv_uint(&c->w, "current_bytes", d->current_bytes);
        gt_json_kv_uint(&c->w, "leaked_allocs", d->live_allocs);
        gt_json_kv_uint(&c->w, "leaked_bytes", d->current_bytes);
        gt_json_kv_uint(&c->w, "unknown_frees", gt_memory_unknown_frees(d));
        gt_json_kv_uint(&c->w, "context_released_allocs", d->ctx_released_allocs);
        gt_json_kv_uint(&c->w, "context_released_bytes", d->ctx_released_bytes);
        write_leaks(c, d);
        gt_json_object_end(&c->w);
    }
    gt_json_array_end(&c->w);
    if (gt_report_enabled(c->r, GT_CAT_MEMORY) && gt_json_heaps(&c->w, c->r) != 0)
        c->incomplete = true;
    gt_json_object_end(&c->w);
}

static void write_advice(json_ctx *c, const gt_process_info *p)
{
    gt_advice found[GT_ADVICE_RULES];
    size_t n = gt_report_advice(c->r, p, found);
    gt_json_key(&c->w, "advice");
    gt_json_array_begin(&c->w, false);
    for (size_t i = 0; i < n; i++) {
        gt_json_object_begin(&c->w, true);
        gt_json_kv_string(&c->w, "rule", found[i].rule);
        gt_json_kv_uint(&c->w, "count", found[i].count);
        gt_json_kv_string(&c->w, "message", found[i].message);
        gt_json_object_end(&c->w);
    }
    gt_json_array_end(&c->w);
}

/* NVTX marks: "first_ns" and "last_ns" count from the process start. */
static void write_marks(json_ctx *c, const gt_process_info *p)
{
    uint64_t start = p ? p->start_ns : 0;
    size_t n = 0;
    const gt_nvtx_mark **marks = gt_nvtx_marks_sorted(&c->r->marks, &n);
    if (!marks && c->r->marks.n) c->incomplete = true;
    gt_json_key(&c->w, "nvtx_marks");
    gt_json_array_begin(&c->w, false);
    for (size_t i = 0; i < n; i++) {
        const gt_nvtx_mark *m = marks[i];
        gt_json_object_begin(&c->w, true);
        gt_json_kv_string(&c->w, "domain", str(c, m->domain));
        gt_json_kv_string(&c->w, "name", str(c, m->name));
        gt_json_kv_uint(&c->w, "count", m->count);
        gt_json_kv_uint(&c->w, "first_ns", m->first > start ? m->first - start : 0);
        gt_json_kv_uint(&c->w, "last_ns", m->last > start ? m->last - start : 0);
        gt_json_mark_payload(&c->w, m);
        gt_json_object_end(&c->w);
    }
    gt_json_array_end(&c->w);
    free(marks);
}

/* What the report could not take at face value. */
static void write_anomalies(json_ctx *c)
{
    const gt_nvtx_counts *n = &c->r->nvtx.counts;
    gt_json_key(&c->w, "anomalies");
    gt_json_object_begin(&c->w, false);
    gt_json_kv_uint(&c->w, "nvtx_unbalanced_pops", n->unbalanced_pops);
    gt_json_kv_uint(&c->w, "nvtx_open_at_exit", n->open_at_exit);
    gt_json_kv_uint(&c->w, "nvtx_unmatched_ends", n->unmatched_ends);
    gt_json_kv_uint(&c->w, "nvtx_too_deep", n->too_deep);
    gt_json_kv_uint(&c->w, "nvtx_untracked", n->untracked);
    gt_json_kv_uint(&c->w, "gpu_busy_clipped_ns", c->r->busy.clipped_ns);
    gt_json_object_end(&c->w);
}

/* SPEC §11: mode, windows, captured_ns; then the time limits (0: none)
 * and how often the mode's condition began to hold (the summary's reason
 * when no window opened, so that the report reads back whole). */
static void write_capture(json_ctx *c, const gt_process_info *p)
{
    gt_capture_info cap;
    gt_report_capture(c->r, p && p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0, &cap);
    gt_json_key(&c->w, "capture");
    gt_json_object_begin(&c->w, true);
    gt_json_kv_string(&c->w, "mode", cap.mode);
    gt_json_kv_uint(&c->w, "windows", cap.windows);
    gt_json_kv_uint(&c->w, "captured_ns", cap.captured_ns);
    gt_json_kv_uint(&c->w, "delay_ns", cap.delay_ns);
    gt_json_kv_uint(&c->w, "duration_ns", cap.duration_ns);
    gt_json_kv_uint(&c->w, "mode_opens", cap.mode_opens);
    gt_json_object_end(&c->w);
}

/* The reports a merged report was made of. */
static void write_inputs(json_ctx *c, const gt_loaded *l)
{
    gt_json_key(&c->w, "inputs");
    gt_json_array_begin(&c->w, false);
    for (uint32_t i = 0; i < l->ninputs; i++) {
        const gt_report_input *in = &l->inputs[i];
        gt_json_object_begin(&c->w, true);
        gt_json_kv_string(&c->w, "file", in->file);
        gt_json_kv_int(&c->w, "pid", in->pid);
        gt_json_kv_string(&c->w, "hostname", in->hostname);
        gt_json_kv_string(&c->w, "command", in->command);
        gt_json_kv_uint(&c->w, "wall_ns", in->wall_ns);
        gt_json_kv_uint(&c->w, "gpu_busy_ns", in->gpu_busy_ns);
        gt_json_kv_uint(&c->w, "events", in->events);
        gt_json_object_end(&c->w);
    }
    gt_json_array_end(&c->w);
}

/* What a report read back holds beyond this writer's keys. */
static void write_loaded_extras(json_ctx *c)
{
    const gt_loaded *l = c->r->loaded;
    if (!l) return;
    if (l->ninputs) write_inputs(c, l);
    for (uint32_t i = 0; i < l->nmembers; i++) {
        gt_json_key(&c->w, l->members[i].key);
        gt_json_raw(&c->w, l->members[i].json);
    }
}

/* The JSON report's "snapshot" (its last key). */
static void snapshot_json_write(gt_json *w, const gt_snapshot_info *s)
{
    gt_json_key(w, "snapshot");
    gt_json_object_begin(w, true);
    gt_json_kv_uint(w, "at_ns", s->at_ns);
    gt_json_kv_bool(w, "final", s->final);
    gt_json_kv_int(w, "signal", s->signal);
    gt_json_object_end(w);
}

int gt_report_write_json(const gt_report *r, const gt_process_info *p, FILE *out)
{
    json_ctx c = {.r = r, .p = p};
    gt_json_init(&c.w, out);
    gt_json_object_begin(&c.w, false);
    gt_json_kv_string(&c.w, "tool", "gputrace");
    gt_json_kv_uint(&c.w, "schema", 1);
    gt_json_kv_string(&c.w, "version", PROJECT_VERSION);
    write_process(&c, p);
    write_config(&c);
    write_gpu_timing(&c);
    write_totals(&c);
    write_table(&c, "kernels", GT_CAT_KERNEL, kernel_row);
    write_table(&c, "memcpy", GT_CAT_MEMCPY, memcpy_row);
    write_table(&c, "memset", GT_CAT_MEMSET, memset_row);
    write_memory(&c);
    write_table(&c, "compile", GT_CAT_COMPILE, compile_row);
    write_table(&c, "module", GT_CAT_MODULE, module_row);
    write_table(&c, "sync", GT_CAT_SYNC, sync_row);
    write_table(&c, "nvtx", GT_CAT_NVTX, nvtx_row);
    write_table(&c, "api", GT_CAT_API, api_row);
    if (gt_callsites_write_json(&c.w, r) != 0) c.incomplete = true;
    write_advice(&c, p);
    write_marks(&c, p);
    if (gt_json_nvtx_counters(&c.w, r, p ? p->start_ns : 0) != 0) c.incomplete = true;
    write_anomalies(&c);
    write_capture(&c, p);
    if (gt_checksums_write_json(&c.w, r) != 0) c.incomplete = true;
    write_loaded_extras(&c);
    gt_snapshot_info snapshot;
    gt_report_snapshot(r, p, &snapshot);
    snapshot_json_write(&c.w, &snapshot); /* last: the gputrace command looks for it there */
    gt_json_object_end(&c.w);
    int rc = gt_json_finish(&c.w);
    return rc == 0 && !c.incomplete ? 0 : -1;
}
