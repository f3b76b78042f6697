/* Reading back the numbers NVTX carried (json_numbers.c writes them):
 * `nvtx` rows' payload, payload_fields and memory, `nvtx_marks` rows'
 * payload, the nvtx_counters and the memory's heaps. Each is optional: a
 * report written before they existed reads as one without them. */
#include "aggregate.h"
#include "counter_table.h"
#include "heap_table.h"
#include "load_internal.h"
#include "nvtx_numbers.h"
#include "table.h"

#include <cjson/cJSON.h>
#include <string.h>

static bool load_double(gt_loader *ld, const cJSON *obj, const char *key, double *out)
{
    const cJSON *v = gt_load_member(obj, key, NULL);
    if (!v) return gt_load_fail(ld, key, "missing");
    if (!cJSON_IsNumber(v)) return gt_load_fail(ld, key, "expected a number");
    *out = v->valuedouble;
    return true;
}

static bool load_kind(gt_loader *ld, const cJSON *obj, uint8_t *kind)
{
    const char *name = gt_load_string(ld, obj, "type", NULL, "");
    if (!name) return false;
    *kind = gt_number_kind_from_name(name);
    return true;
}

/* {"type", "total", ..., "count"} into t (the rates are the writer's). */
static bool load_total(gt_loader *ld, const cJSON *obj, gt_number_total *t)
{
    if (!cJSON_IsObject(obj)) return gt_load_fail(ld, NULL, "payload: expected an object");
    uint64_t count;
    if (!load_kind(ld, obj, &t->kind) || !load_double(ld, obj, "total", &t->total) ||
        !gt_load_u64_or(ld, obj, "count", NULL, 1, &count))
        return false;
    t->count = count;
    if (t->kind == GT_NUM_NONE) t->kind = GT_NUM_F64;
    return true;
}

static bool load_fields(gt_loader *ld, const cJSON *arr, gt_nvtx_numbers *n)
{
    if (!cJSON_IsArray(arr)) return gt_load_fail(ld, "payload_fields", "expected an array");
    for (const cJSON *e = arr->child; e; e = e->next) {
        uint32_t name, unit;
        gt_number_total t = {0};
        if (!gt_load_name(ld, e, "name", NULL, &name) || !load_total(ld, e, &t)) return false;
        /* The unit as written: the one the rate was shown in. */
        const cJSON *u = gt_load_member(e, "unit", NULL);
        unit = 0;
        if (u && cJSON_IsString(u) && u->valuestring[0]) {
            uint32_t id = gt_strtab_intern(ld->names, u->valuestring, strlen(u->valuestring));
            unit = id;
        }
        gt_nvtx_field *f = gt_nvtx_numbers_field(n, name, unit);
        if (!f) return gt_load_fail(ld, "payload_fields", "out of memory or too many fields");
        gt_number_merge(&f->sum, &t);
    }
    return true;
}

bool gt_load_nvtx_numbers(gt_loader *ld, const cJSON *row, gt_row *out)
{
    const cJSON *payload = gt_load_member(row, "payload", NULL);
    const cJSON *fields = gt_load_member(row, "payload_fields", NULL);
    const cJSON *memory = gt_load_member(row, "memory", NULL);
    if (!payload && !fields && !memory) return true;
    gt_nvtx_numbers *n = gt_row_numbers(out);
    if (!n) return gt_load_fail(ld, NULL, "out of memory");
    if (payload && !load_total(ld, payload, &n->payload)) return false;
    if (fields && !load_fields(ld, fields, n)) return false;
    if (memory) {
        if (!cJSON_IsObject(memory)) return gt_load_fail(ld, "memory", "expected an object");
        n->memory = true;
        if (!gt_load_u64(ld, memory, "allocated_bytes", NULL, &n->allocated_bytes) ||
            !gt_load_u64(ld, memory, "freed_bytes", NULL, &n->freed_bytes) ||
            !gt_load_u64(ld, memory, "peak_bytes", NULL, &n->peak_bytes))
            return false;
    }
    return true;
}

bool gt_load_mark_payload(gt_loader *ld, const cJSON *mark, gt_number_total *out)
{
    const cJSON *payload = gt_load_member(mark, "payload", NULL);
    return !payload || load_total(ld, payload, out);
}

bool gt_load_counters(gt_loader *ld, const cJSON *doc)
{
    if (!gt_load_member(doc, "nvtx_counters", NULL)) return true;
    const cJSON *rows = gt_load_array(ld, doc, "nvtx_counters", NULL);
    if (!rows) return false;
    ld->table = "nvtx_counters";
    ld->index = 0;
    uint64_t start = ld->l->process.start_ns;
    for (const cJSON *e = rows->child; e; e = e->next, ld->index++) {
        if (!cJSON_IsObject(e)) return gt_load_fail(ld, NULL, "expected an object");
        gt_counter_row c = {0};
        uint64_t first, last;
        if (!gt_load_name(ld, e, "domain", NULL, &c.domain) ||
            !gt_load_name(ld, e, "name", NULL, &c.name) ||
            !gt_load_name(ld, e, "unit", NULL, &c.unit) || !load_kind(ld, e, &c.kind) ||
            !gt_load_u64(ld, e, "count", NULL, &c.count) || !load_double(ld, e, "min", &c.min) ||
            !load_double(ld, e, "max", &c.max) || !load_double(ld, e, "last", &c.last) ||
            !gt_load_u64_or(ld, e, "first_ns", NULL, 0, &first) ||
            !gt_load_u64_or(ld, e, "last_ns", NULL, 0, &last))
            return false;
        c.first_ns = start + first;
        c.last_ns = start + last;
        if (gt_counter_table_fold(&ld->r->counters, &c) != 0)
            return gt_load_fail(ld, NULL, "out of memory or too many counters");
    }
    ld->index = -1;
    ld->table = NULL;
    return true;
}

bool gt_load_heaps(gt_loader *ld, const cJSON *memory)
{
    const cJSON *rows = gt_load_member(memory, "heaps", NULL);
    if (!rows) return true;
    if (!cJSON_IsArray(rows)) return gt_load_fail(ld, "heaps", "expected an array");
    ld->table = "memory.heaps";
    ld->index = 0;
    for (const cJSON *e = rows->child; e; e = e->next, ld->index++) {
        if (!cJSON_IsObject(e)) return gt_load_fail(ld, NULL, "expected an object");
        gt_heap_row h = {0};
        bool live;
        if (!gt_load_name(ld, e, "domain", NULL, &h.domain) ||
            !gt_load_name(ld, e, "name", NULL, &h.name) ||
            !gt_load_u64_or(ld, e, "address", NULL, 0, &h.address) ||
            !gt_load_u64(ld, e, "bytes", NULL, &h.bytes) ||
            !gt_load_u64_or(ld, e, "registrations", NULL, 0, &h.registrations) ||
            !gt_load_u64(ld, e, "regions", NULL, &h.regions) ||
            !gt_load_u64(ld, e, "region_bytes", NULL, &h.region_bytes) ||
            !gt_load_u64(ld, e, "regions_peak", NULL, &h.regions_peak) ||
            !gt_load_u64(ld, e, "region_bytes_peak", NULL, &h.region_bytes_peak) ||
            !gt_load_u64_or(ld, e, "regions_added", NULL, 0, &h.regions_added) ||
            !gt_load_bool_or(ld, e, "live", NULL, 0, &live))
            return false;
        h.live = live;
        if (gt_heap_table_fold(&ld->r->heaps, &h) != 0)
            return gt_load_fail(ld, NULL, "out of memory or too many heaps");
    }
    ld->index = -1;
    return true;
}
