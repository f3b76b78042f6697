/* Reading the tables of a JSON report into the report's rows, keyed as
 * aggregation keys them (aggregate.h), so that the writers sort and name
 * them exactly as they did when the shim wrote the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "load_internal.h"
#include "loaded.h"
#include "memory_table.h"
#include "nvtx_marks.h"
#include "stats.h"
#include "strtab.h"
#include "table.h"

/* A STATS object (SPEC §6) as the row's preset summary; count is the
 * number of calls that have a time. */
static bool load_stats(gt_loader *ld, const cJSON *row, const cJSON **rh, const char *key,
                       uint64_t count, gt_stats *s, gt_stats_summary *sum)
{
    const cJSON *obj = gt_load_object(ld, row, key, rh, false);
    if (!obj) return false;
    ld->object = key;
    const cJSON *h = NULL;
    bool ok =
        gt_load_u64(ld, obj, "total", &h, &sum->total) &&
        gt_load_u64(ld, obj, "avg", &h, &sum->avg) && gt_load_u64(ld, obj, "med", &h, &sum->med) &&
        gt_load_u64(ld, obj, "min", &h, &sum->min) && gt_load_u64(ld, obj, "max", &h, &sum->max) &&
        gt_load_u64(ld, obj, "stddev", &h, &sum->stddev) &&
        gt_load_u64(ld, obj, "first", &h, &sum->first) &&
        gt_load_u64(ld, obj, "rest_avg", &h, &sum->rest_avg);
    ld->object = NULL;
    if (!ok) return false;
    sum->count = count;
    s->count = count;
    s->total = sum->total;
    s->min = sum->min;
    s->max = sum->max;
    s->first = sum->first;
    s->preset = sum;
    return true;
}

bool gt_load_enum(gt_loader *ld, const cJSON *row, const cJSON **h, const char *key,
                  const char *(*name)(int), int count, uint32_t *out)
{
    const char *s = gt_load_string(ld, row, key, h, NULL);
    if (!s) return false;
    for (int i = 0; i < count; i++) {
        if (strcmp(s, name(i)) == 0) {
            *out = (uint32_t)i;
            return true;
        }
    }
    return gt_load_fail(ld, key, "not a value this gputrace knows");
}

const char *gt_load_dir_name(int i)
{
    return gt_copy_dir_name((enum gt_copy_dir)i);
}

const char *gt_load_host_name(int i)
{
    return gt_host_mem_name((enum gt_host_mem)i);
}

static const char *image_name(int i)
{
    return gt_image_kind_name((enum gt_image_kind)i);
}

const char *gt_load_mem_kind_name(int i)
{
    return gt_mem_kind_name((enum gt_mem_kind)i);
}

/* What one row of a table gives: its key, then the rest into the row. */
typedef struct row_reader {
    const char *table;
    enum gt_category cat;
    bool (*key)(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row_key *key);
    bool (*fill)(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row *out,
                 gt_stats_summary *sum);
} row_reader;

/* The time of a GPU-work row (kernel, memcpy, memset): "timed" calls
 * have a time (every call when the key is absent), "timed_bytes" their
 * bytes (from "gbps" when absent, which is rounded). */
static bool load_work(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row *out,
                      gt_stats_summary *sum)
{
    uint64_t timed;
    if (!gt_load_u64(ld, row, "calls", h, &out->calls) ||
        !gt_load_u64_or(ld, row, "bytes", h, 0, &out->bytes) ||
        !gt_load_u64_or(ld, row, "timed", h, out->calls, &timed) ||
        !load_stats(ld, row, h, "gpu_ns", timed, &out->time, sum))
        return false;
    const cJSON *tb = gt_load_member(row, "timed_bytes", h);
    if (tb) return gt_load_value_u64(ld, tb, "timed_bytes", &out->timed_bytes);
    const cJSON *gbps = gt_load_member(row, "gbps", h);
    double bytes = cJSON_IsNumber(gbps) ? gbps->valuedouble * (double)out->time.total : 0;
    out->timed_bytes = bytes > 0 && bytes < 1.8e19 ? (uint64_t)(bytes + 0.5) : 0;
    return true;
}

static bool kernel_key(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row_key *key)
{
    bool graph;
    if (!gt_load_name(ld, row, "name", h, &key->f[0]) ||
        !gt_load_bool_or(ld, row, "graph", h, 0, &graph))
        return false;
    if (graph) key->f[0] = 0; /* graph launches have no name of their own */
    key->f[1] = graph;
    return true;
}

static bool kernel_fill(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row *out,
                        gt_stats_summary *sum)
{
    return load_work(ld, row, h, out, sum) &&
           gt_load_u64(ld, row, "api_ns_total", h, &out->api_ns_total) &&
           gt_load_u64_or(ld, row, "graph_calls", h, 0, &out->graph_calls);
}

static bool memcpy_key(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row_key *key)
{
    bool async;
    if (!gt_load_enum(ld, row, h, "direction", gt_load_dir_name, GT_DIR_COUNT, &key->f[0]) ||
        !gt_load_enum(ld, row, h, "host_memory", gt_load_host_name, GT_HOST_COUNT, &key->f[1]) ||
        !gt_load_bool_or(ld, row, "async", h, -1, &async))
        return false;
    key->f[2] = async;
    return true;
}

static bool memset_key(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row_key *key)
{
    bool async;
    if (!gt_load_bool_or(ld, row, "async", h, 0, &async)) return false;
    key->f[0] = async;
    return true;
}

static bool compile_key(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row_key *key)
{
    bool ok;
    if (!gt_load_name(ld, row, "api", h, &key->f[0]) ||
        !gt_load_name(ld, row, "name", h, &key->f[1]) ||
        !gt_load_bool_or(ld, row, "ok", h, -1, &ok))
        return false;
    key->f[2] = ok;
    /* The other functions compiled, a line each (absent: none). */
    const cJSON *functions = gt_load_member(row, "functions", NULL);
    if (!functions) return true;
    if (!cJSON_IsArray(functions)) return gt_load_fail(ld, "functions", "expected an array");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    for (const cJSON *e = functions->child; f && e; e = e->next) {
        if (!cJSON_IsString(e)) break;
        fprintf(f, "%s%s", e == functions->child ? "" : "\n", e->valuestring);
    }
    if (!f || fclose(f) != 0) return gt_load_fail(ld, "functions", "out of memory");
    key->f[3] = len ? gt_strtab_intern(ld->names, text, len) : 0;
    free(text);
    return true;
}

/* compile, module: calls, bytes and wall time. */
static bool load_host_bytes(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row *out,
                            gt_stats_summary *sum)
{
    return gt_load_u64(ld, row, "calls", h, &out->calls) &&
           gt_load_u64_or(ld, row, "bytes", h, 0, &out->bytes) &&
           load_stats(ld, row, h, "wall_ns", out->calls, &out->time, sum);
}

static bool compile_fill(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row *out,
                         gt_stats_summary *sum)
{
    return load_host_bytes(ld, row, h, out, sum) &&
           gt_load_u64_or(ld, row, "programs", h, 0, &out->firsts);
}

static bool module_key(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row_key *key)
{
    return gt_load_name(ld, row, "api", h, &key->f[0]) &&
           gt_load_enum(ld, row, h, "kind", image_name, GT_IMAGE_COUNT, &key->f[1]);
}

static bool sync_key(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row_key *key)
{
    return gt_load_name(ld, row, "api", h, &key->f[0]);
}

static bool load_host(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row *out,
                      gt_stats_summary *sum)
{
    return gt_load_u64(ld, row, "calls", h, &out->calls) &&
           load_stats(ld, row, h, "wall_ns", out->calls, &out->time, sum);
}

static bool nvtx_key(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row_key *key)
{
    return gt_load_name(ld, row, "domain", h, &key->f[0]) &&
           gt_load_name(ld, row, "name", h, &key->f[1]);
}

/* The parent is set once every row exists (load_table). */
static bool nvtx_fill(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row *out,
                      gt_stats_summary *sum)
{
    int64_t level;
    if (!load_host(ld, row, h, out, sum) ||
        !gt_load_u64(ld, row, "gpu_ns_total", h, &out->gpu_ns_total) ||
        !gt_load_u64_or(ld, row, "gpu_span_ns_total", h, 0, &out->gpu_span_total) ||
        !gt_load_i64_or(ld, row, "level", h, 0, INT32_MAX, 0, &level) ||
        !gt_load_u64_or(ld, row, "open_ns", h, 0, &out->open_ns) ||
        !gt_load_nvtx_numbers(ld, row, out))
        return false;
    out->level = (int32_t)level;
    return true;
}

static bool api_key(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row_key *key)
{
    return gt_load_name(ld, row, "name", h, &key->f[0]);
}

static bool api_fill(gt_loader *ld, const cJSON *row, const cJSON **h, gt_row *out,
                     gt_stats_summary *sum)
{
    const cJSON *errors = gt_load_object(ld, row, "errors", h, false);
    if (!errors || !load_host(ld, row, h, out, sum)) return false;
    int n = cJSON_GetArraySize(errors);
    if (n == 0) return true;
    out->errors = calloc((size_t)n, sizeof(*out->errors));
    if (!out->errors) return gt_load_fail(ld, "errors", "out of memory");
    for (const cJSON *e = errors->child; e; e = e->next) {
        gt_api_error *err = &out->errors[out->nerrors++];
        if (!gt_load_number_u64(e, &err->count))
            return gt_load_fail(ld, "errors", "expected counts");
        err->name = gt_strtab_intern(ld->names, e->string, strlen(e->string));
    }
    return true;
}

static const row_reader readers[] = {
    {"kernels", GT_CAT_KERNEL, kernel_key, kernel_fill},
    {"memcpy", GT_CAT_MEMCPY, memcpy_key, load_work},
    {"memset", GT_CAT_MEMSET, memset_key, load_work},
    {"compile", GT_CAT_COMPILE, compile_key, compile_fill},
    {"module", GT_CAT_MODULE, module_key, load_host_bytes},
    {"sync", GT_CAT_SYNC, sync_key, load_host},
    {"nvtx", GT_CAT_NVTX, nvtx_key, nvtx_fill},
    {"api", GT_CAT_API, api_key, api_fill},
};

/* A merged row's spread (absent in a single report). */
static bool load_spread(gt_loader *ld, const cJSON *row, const cJSON **rh, gt_row_spread **spread,
                        uint32_t nrows, uint32_t at)
{
    const cJSON *s = gt_load_object(ld, row, "spread", rh, true);
    if (!s) return !ld->failed;
    if (!*spread && !(*spread = calloc(nrows, sizeof(**spread))))
        return gt_load_fail(ld, "spread", "out of memory");
    gt_row_spread *out = &(*spread)[at];
    ld->object = "spread";
    const cJSON *h = NULL;
    uint64_t max_input, inputs;
    bool ok = gt_load_u64(ld, s, "min", &h, &out->min) &&
              gt_load_u64(ld, s, "med", &h, &out->med) &&
              gt_load_u64(ld, s, "max", &h, &out->max) &&
              gt_load_u64(ld, s, "max_input", &h, &max_input) &&
              gt_load_u64(ld, s, "inputs", &h, &inputs);
    ld->object = NULL;
    if (!ok) return false;
    if (max_input > UINT32_MAX || inputs > UINT32_MAX)
        return gt_load_fail(ld, "spread", "input numbers out of range");
    out->max_input = (uint32_t)max_input;
    out->inputs = (uint32_t)inputs;
    return true;
}

/* NVTX rows are created by level, so that a parent row comes before its
 * children as it does in the shim (the tree relies on it). */
static int by_level(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The order to create rows in: (level, position) pairs, or positions. */
static int64_t *creation_order(const cJSON *rows, uint32_t n, bool nvtx)
{
    int64_t *order = malloc((size_t)n * 2 * sizeof(*order));
    if (!order) return NULL;
    uint32_t i = 0;
    for (const cJSON *row = rows->child; row; row = row->next, i++) {
        const cJSON *level =
            nvtx && cJSON_IsObject(row) ? gt_load_member(row, "level", NULL) : NULL;
        double lv = cJSON_IsNumber(level) ? level->valuedouble : 0;
        order[2 * i] = lv > 0 && lv < 1e9 ? (int64_t)lv : 0;
        order[2 * i + 1] = i;
    }
    if (nvtx) qsort(order, n, 2 * sizeof(*order), by_level);
    return order;
}

/* Each NVTX row's parent, given as a position in the array. */
static bool link_parents(gt_loader *ld, const cJSON **at, uint32_t n, const int32_t *rownum)
{
    gt_table *t = &ld->r->tables[GT_CAT_NVTX];
    for (uint32_t i = 0; i < n; i++) {
        int64_t parent;
        ld->index = i;
        if (!gt_load_i64_or(ld, at[i], "parent", NULL, -1, INT32_MAX, -1, &parent)) return false;
        t->rows[rownum[i]].parent = parent >= 0 && parent < n && parent != i ? rownum[parent] : -1;
    }
    return true;
}

static bool load_table(gt_loader *ld, const cJSON *doc, const row_reader *rd)
{
    const cJSON *rows = gt_load_array(ld, doc, rd->table, NULL);
    if (!rows) return false;
    ld->table = rd->table;
    int size = cJSON_GetArraySize(rows);
    if (size == 0) return true;
    uint32_t n = (uint32_t)size;
    gt_loaded *l = ld->l;
    gt_table *t = &ld->r->tables[rd->cat];
    int64_t *order = creation_order(rows, n, rd->cat == GT_CAT_NVTX);
    const cJSON **at = malloc(n * sizeof(*at));
    int32_t *rownum = malloc(n * sizeof(*rownum));
    l->summaries[rd->cat] = calloc(n, sizeof(gt_stats_summary));
    bool ok = order && at && rownum && l->summaries[rd->cat] && gt_table_reserve(t, n) == 0;
    if (!ok) gt_load_fail(ld, NULL, "out of memory");
    uint32_t i = 0;
    for (const cJSON *row = rows->child; ok && row; row = row->next)
        at[i++] = row;
    for (uint32_t k = 0; ok && k < n; k++) {
        uint32_t pos = (uint32_t)order[2 * k + 1];
        const cJSON *row = at[pos];
        ld->index = pos;
        gt_row_key key = {{0}};
        if (!cJSON_IsObject(row)) ok = gt_load_fail(ld, NULL, "expected an object");
        const cJSON *h = NULL;
        ok = ok && rd->key(ld, row, &h, &key);
        if (!ok) break;
        uint32_t before = t->nrows;
        int32_t idx = gt_table_row_index(t, &key);
        if (idx < 0)
            ok = gt_load_fail(ld, NULL, "out of memory");
        else if (t->nrows == before)
            ok = gt_load_fail(ld, NULL, "a second row with the same key");
        ok = ok && rd->fill(ld, row, &h, &t->rows[idx], &l->summaries[rd->cat][idx]) &&
             load_spread(ld, row, &h, &l->spread[rd->cat], n, (uint32_t)idx);
        if (ok) rownum[pos] = idx;
    }
    if (ok && rd->cat == GT_CAT_NVTX) ok = link_parents(ld, at, n, rownum);
    ld->index = -1;
    free(order);
    free(at);
    free(rownum);
    return ok;
}

/* A device's largest leaks, as the verbose summary lists them. */
static bool load_leaks(gt_loader *ld, const cJSON *dev, int32_t device)
{
    const cJSON *leaks = gt_load_member(dev, "largest_leaks", NULL);
    if (!leaks) return true;
    if (!cJSON_IsArray(leaks)) return gt_load_fail(ld, "largest_leaks", "expected an array");
    uint64_t start = ld->l->process.start_ns, addr = 0;
    ld->object = "largest_leaks";
    for (const cJSON *e = leaks->child; e; e = e->next) {
        if (!cJSON_IsObject(e)) return gt_load_fail(ld, NULL, "largest_leaks: expected objects");
        gt_mem_leak leak = {.addr = ++addr};
        uint32_t kind = 0;
        uint64_t at = 0;
        const cJSON *h = NULL;
        if (!gt_load_u64(ld, e, "bytes", &h, &leak.bytes) ||
            !gt_load_enum(ld, e, &h, "kind", gt_load_mem_kind_name, GT_MEM_COUNT, &kind) ||
            !gt_load_u64(ld, e, "at_ns", &h, &at))
            return false;
        if (gt_load_member(e, "site", NULL) && !gt_load_name(ld, e, "site", NULL, &leak.site))
            return false;
        leak.kind = (uint8_t)kind;
        leak.time = at > UINT64_MAX - start ? UINT64_MAX : start + at;
        if (gt_memory_keep_leak(&ld->r->memory, device, &leak) != 0)
            return gt_load_fail(ld, NULL, "out of memory");
    }
    ld->object = NULL;
    return true;
}

static bool load_memory(gt_loader *ld, const cJSON *doc)
{
    const cJSON *mem = gt_load_object(ld, doc, "memory", NULL, false);
    const cJSON *devices = mem ? gt_load_array(ld, mem, "devices", NULL) : NULL;
    if (!devices) return false;
    ld->table = "memory.devices";
    ld->index = 0;
    for (const cJSON *dev = devices->child; dev; dev = dev->next, ld->index++) {
        if (!cJSON_IsObject(dev)) return gt_load_fail(ld, NULL, "expected an object");
        int64_t device;
        const cJSON *h = NULL;
        if (!gt_load_i64_or(ld, dev, "device", &h, INT32_MIN, INT32_MAX, INT64_MIN, &device))
            return false;
        if (device == INT64_MIN) return gt_load_fail(ld, "device", "missing");
        uint32_t before = ld->r->memory.ndevices;
        gt_mem_device *d = gt_memory_device_row(&ld->r->memory, (int32_t)device);
        if (!d) return gt_load_fail(ld, NULL, "out of memory");
        if (ld->r->memory.ndevices == before)
            return gt_load_fail(ld, "device", "a second row for the same device");
        if (!gt_load_u64(ld, dev, "allocs", &h, &d->allocs) ||
            !gt_load_u64(ld, dev, "frees", &h, &d->frees) ||
            !gt_load_u64(ld, dev, "peak_bytes", &h, &d->peak_bytes) ||
            !gt_load_u64(ld, dev, "current_bytes", &h, &d->current_bytes) ||
            !gt_load_u64(ld, dev, "leaked_allocs", &h, &d->live_allocs) ||
            !gt_load_u64_or(ld, dev, "unknown_frees", &h, 0, &d->unknown_frees) ||
            !gt_load_u64_or(ld, dev, "context_released_allocs", &h, 0, &d->ctx_released_allocs) ||
            !gt_load_u64_or(ld, dev, "context_released_bytes", &h, 0, &d->ctx_released_bytes) ||
            !load_leaks(ld, dev, (int32_t)device))
            return false;
    }
    ld->index = -1;
    if (!gt_load_heaps(ld, mem)) return false;
    return true;
}

/* NVTX marks, their times from the process start (absent before marks
 * had a table of their own). */
static bool load_marks(gt_loader *ld, const cJSON *doc)
{
    if (!gt_load_member(doc, "nvtx_marks", NULL)) return true;
    const cJSON *marks = gt_load_array(ld, doc, "nvtx_marks", NULL);
    if (!marks) return false;
    ld->table = "nvtx_marks";
    ld->index = 0;
    gt_nvtx_marks *out = &ld->r->marks;
    uint64_t start = ld->l->process.start_ns;
    for (const cJSON *e = marks->child; e; e = e->next, ld->index++) {
        if (!cJSON_IsObject(e)) return gt_load_fail(ld, NULL, "expected an object");
        gt_nvtx_mark mark = {0};
        uint64_t first, last;
        const cJSON *h = NULL;
        if (!gt_load_name(ld, e, "domain", &h, &mark.domain) ||
            !gt_load_name(ld, e, "name", &h, &mark.name) ||
            !gt_load_u64(ld, e, "count", &h, &mark.count) ||
            !gt_load_u64(ld, e, "first_ns", &h, &first) ||
            !gt_load_u64(ld, e, "last_ns", &h, &last) ||
            !gt_load_mark_payload(ld, e, &mark.payload))
            return false;
        if (first > last) return gt_load_fail(ld, "first_ns", "after last_ns");
        mark.first = first > UINT64_MAX - start ? UINT64_MAX : start + first;
        mark.last = last > UINT64_MAX - start ? UINT64_MAX : start + last;
        uint32_t before = out->n;
        if (gt_nvtx_marks_fold(out, &mark) != 0) return gt_load_fail(ld, NULL, "out of memory");
        if (out->n == before) return gt_load_fail(ld, NULL, "a second row with the same key");
    }
    ld->index = -1;
    return true;
}

bool gt_load_tables(gt_loader *ld, const cJSON *doc)
{
    for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++) {
        ld->table = NULL;
        if (!load_table(ld, doc, &readers[i])) return false;
        if (readers[i].cat == GT_CAT_MEMSET) {
            ld->table = NULL;
            if (!load_memory(ld, doc)) return false;
        }
    }
    ld->table = NULL;
    return load_marks(ld, doc) && gt_load_counters(ld, doc);
}
