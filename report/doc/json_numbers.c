/* The JSON of the numbers NVTX carried (SPEC §12): on `nvtx` rows
 * "payload", "payload_fields" and "memory"; on `nvtx_marks` rows
 * "payload"; the top-level "nvtx_counters"; and the memory's "heaps" (when
 * a pool described any).
 * Rates are per second of the range's GPU time and of its wall time (0
 * when it had none); a field's "unit" is the one its rate is shown in
 * (gt_nvtx_field_unit). */
#include "aggregate.h"
#include "counter_table.h"
#include "heap_table.h"
#include "json_numbers.h"
#include "json_writer.h"
#include "nvtx_marks.h"
#include "nvtx_numbers.h"
#include "report.h"
#include "strtab.h"
#include "table.h"

#include <stdlib.h>

static void rates(gt_json *w, const gt_row *row, double total)
{
    gt_json_kv_number(w, "total", total);
    gt_json_kv_number(w, "per_gpu_s", gt_number_rate(total, row->gpu_ns_total));
    gt_json_kv_number(w, "per_wall_s", gt_number_rate(total, row->time.total));
}

void gt_json_nvtx_numbers(gt_json *w, const gt_report *r, const gt_row *row)
{
    const gt_nvtx_numbers *n = row->numbers;
    if (!n) return;
    if (n->payload.count) {
        gt_json_key(w, "payload");
        gt_json_object_begin(w, true);
        gt_json_kv_string(w, "type", gt_number_total_kind_name(&n->payload));
        rates(w, row, n->payload.total);
        gt_json_kv_uint(w, "count", n->payload.count);
        gt_json_object_end(w);
    }
    if (n->nfields) {
        gt_json_key(w, "payload_fields");
        gt_json_array_begin(w, false);
        for (uint32_t i = 0; i < n->nfields; i++) {
            const gt_nvtx_field *f = &n->fields[i];
            const char *name = gt_strtab_get(r->names, f->name);
            gt_json_object_begin(w, true);
            gt_json_kv_string(w, "name", name);
            rates(w, row, f->sum.total);
            gt_json_kv_string(w, "unit",
                              gt_nvtx_field_unit(name, gt_strtab_get(r->names, f->unit)));
            gt_json_kv_string(w, "type", gt_number_total_kind_name(&f->sum));
            gt_json_kv_uint(w, "count", f->sum.count);
            gt_json_object_end(w);
        }
        gt_json_array_end(w);
    }
    if (n->memory) {
        gt_json_key(w, "memory");
        gt_json_object_begin(w, true);
        gt_json_kv_uint(w, "allocated_bytes", n->allocated_bytes);
        gt_json_kv_uint(w, "freed_bytes", n->freed_bytes);
        gt_json_kv_uint(w, "peak_bytes", n->peak_bytes);
        gt_json_object_end(w);
    }
}

void gt_json_mark_payload(gt_json *w, const gt_nvtx_mark *m)
{
    if (!m->payload.count) return;
    gt_json_key(w, "payload");
    gt_json_object_begin(w, true);
    gt_json_kv_string(w, "type", gt_number_total_kind_name(&m->payload));
    gt_json_kv_number(w, "total", m->payload.total);
    gt_json_kv_uint(w, "count", m->payload.count);
    gt_json_object_end(w);
}

int gt_json_nvtx_counters(gt_json *w, const gt_report *r, uint64_t start_ns)
{
    size_t n = 0;
    const gt_counter_row **rows = gt_report_enabled(r, GT_CAT_NVTX)
                                      ? gt_counter_table_sorted(&r->counters, r->names, &n)
                                      : NULL;
    gt_json_key(w, "nvtx_counters");
    gt_json_array_begin(w, false);
    for (size_t i = 0; i < n; i++) {
        const gt_counter_row *c = rows[i];
        gt_json_object_begin(w, true);
        gt_json_kv_string(w, "domain", gt_strtab_get(r->names, c->domain));
        gt_json_kv_string(w, "name", gt_strtab_get(r->names, c->name));
        gt_json_kv_string(w, "unit", gt_strtab_get(r->names, c->unit));
        gt_json_kv_string(
            w, "type",
            gt_number_total_kind_name(&(gt_number_total){.kind = c->kind, .count = c->count}));
        gt_json_kv_uint(w, "count", c->count);
        gt_json_kv_number(w, "min", c->min);
        gt_json_kv_number(w, "max", c->max);
        gt_json_kv_number(w, "last", c->last);
        gt_json_kv_uint(w, "first_ns", c->first_ns > start_ns ? c->first_ns - start_ns : 0);
        gt_json_kv_uint(w, "last_ns", c->last_ns > start_ns ? c->last_ns - start_ns : 0);
        gt_json_object_end(w);
    }
    gt_json_array_end(w);
    free(rows);
    return n == 0 && r->counters.n && gt_report_enabled(r, GT_CAT_NVTX) ? -1 : 0;
}

int gt_json_heaps(gt_json *w, const gt_report *r)
{
    if (!r->heaps.n) return 0;
    size_t n = 0;
    const gt_heap_row **rows = gt_heap_table_sorted(&r->heaps, &n);
    gt_json_key(w, "heaps");
    gt_json_array_begin(w, false);
    for (size_t i = 0; i < n; i++) {
        const gt_heap_row *h = rows[i];
        gt_json_object_begin(w, true);
        gt_json_kv_string(w, "domain", gt_strtab_get(r->names, h->domain));
        gt_json_kv_string(w, "name", gt_strtab_get(r->names, h->name));
        gt_json_kv_uint(w, "address", h->address);
        gt_json_kv_uint(w, "bytes", h->bytes);
        gt_json_kv_uint(w, "registrations", h->registrations);
        gt_json_kv_uint(w, "regions", h->regions);
        gt_json_kv_uint(w, "region_bytes", h->region_bytes);
        gt_json_kv_uint(w, "regions_peak", h->regions_peak);
        gt_json_kv_uint(w, "region_bytes_peak", h->region_bytes_peak);
        gt_json_kv_uint(w, "regions_added", h->regions_added);
        gt_json_kv_bool(w, "live", h->live);
        gt_json_object_end(w);
    }
    gt_json_array_end(w);
    free(rows);
    return n == 0 && r->heaps.n ? -1 : 0;
}
