/* Reading the JSON report's `callsites` (SPEC §12) back into the report's
 * call-site table, as its figures were shown (callsite_table.h: a loaded
 * table), keyed as the shim keys them so that the writers sort and name
 * them as the run did. A report without the member has no call sites. */
#include <string.h>

#include "callsite_table.h"
#include "event.h"
#include "load_internal.h"

static const char *kind_word(int i)
{
    return gt_site_kind_name((uint8_t)i);
}

static const char *language_word(int i)
{
    return gt_site_language_name((enum gt_site_language)i);
}

static bool load_site(gt_loader *ld, const cJSON *row, const cJSON **rh, gt_site *s)
{
    const cJSON *obj = gt_load_object(ld, row, "site", rh, false);
    if (!obj) return false;
    ld->object = "site";
    const cJSON *h = NULL;
    uint32_t language = 0;
    int64_t line = 0;
    bool ok =
        gt_load_enum(ld, obj, &h, "language", language_word, GT_SITE_LANGUAGE_COUNT, &language) &&
        gt_load_name(ld, obj, "file", &h, &s->file) &&
        gt_load_i64_or(ld, obj, "line", &h, -1, INT32_MAX, 0, &line) &&
        gt_load_name(ld, obj, "function", &h, &s->function) &&
        gt_load_name(ld, obj, "module", &h, &s->module) &&
        (!gt_load_member(obj, "via", NULL) || gt_load_name(ld, obj, "via", NULL, &s->via));
    ld->object = NULL;
    s->language = (uint8_t)language;
    s->line = (int32_t)line;
    return ok;
}

/* The row's name: its kind's keys (callsite_table.h gt_site_row). */
static bool load_name(gt_loader *ld, const cJSON *row, const cJSON **h, gt_site_row *out)
{
    bool flag = false;
    switch (out->kind) {
    case GT_EV_KERNEL:
        if (!gt_load_bool_or(ld, row, "graph", NULL, 0, &flag)) return false;
        out->b = flag;
        return flag || gt_load_name(ld, row, "name", h, &out->a);
    case GT_EV_MEMCPY:
        if (!gt_load_enum(ld, row, NULL, "direction", gt_load_dir_name, GT_DIR_COUNT, &out->a) ||
            !gt_load_enum(ld, row, NULL, "host_memory", gt_load_host_name, GT_HOST_COUNT,
                          &out->b) ||
            !gt_load_bool_or(ld, row, "async", NULL, 0, &flag))
            return false;
        out->b |= (uint32_t)flag << 8;
        return true;
    case GT_EV_MEMSET:
        if (!gt_load_bool_or(ld, row, "async", NULL, 0, &flag)) return false;
        out->a = flag;
        return true;
    default:
        return gt_load_enum(ld, row, NULL, "memory_kind", gt_load_mem_kind_name, GT_MEM_COUNT,
                            &out->a) &&
               gt_load_u64_or(ld, row, "peak_bytes", NULL, 0, &out->peak_bytes) &&
               gt_load_u64_or(ld, row, "held_bytes", NULL, 0, &out->held_bytes) &&
               gt_load_u64_or(ld, row, "held_allocs", NULL, 0, &out->held_allocs);
    }
}

static bool load_row(gt_loader *ld, const cJSON *row)
{
    gt_site_row r;
    memset(&r, 0, sizeof r);
    gt_site site;
    memset(&site, 0, sizeof site);
    uint32_t kind = 0, label = 0;
    const cJSON *h = NULL;
    if (!gt_load_enum(ld, row, &h, "kind", kind_word, GT_EV_ALLOC + 1, &kind)) return false;
    r.kind = (uint8_t)kind;
    if (!load_name(ld, row, &h, &r) || !load_site(ld, row, NULL, &site) ||
        !gt_load_u64(ld, row, "calls", NULL, &r.calls) ||
        !gt_load_u64(ld, row, "sampled", NULL, &r.samples) ||
        !gt_load_u64(ld, row, "gpu_ns_total", NULL, &r.gpu_ns) ||
        !gt_load_u64(ld, row, "bytes", NULL, &r.bytes) ||
        !gt_load_name(ld, row, "label", NULL, &label))
        return false;
    if (!label) return gt_load_fail(ld, "label", "empty");
    gt_site_table *cs = &ld->r->callsites;
    int32_t at = gt_callsites_add_site(cs, label, &site);
    if (at < 0 || gt_callsites_add_shown(cs, &r, (uint32_t)at) != 0)
        return gt_load_fail(ld, NULL, "out of memory");
    return true;
}

bool gt_load_callsites(gt_loader *ld, const cJSON *doc)
{
    const cJSON *rows = gt_load_member(doc, "callsites", NULL);
    if (!rows) return true;
    if (!cJSON_IsArray(rows)) return gt_load_fail(ld, "callsites", "expected an array");
    ld->table = "callsites";
    ld->index = 0;
    for (const cJSON *row = rows->child; row; row = row->next, ld->index++) {
        if (!cJSON_IsObject(row)) return gt_load_fail(ld, NULL, "expected an object");
        if (!load_row(ld, row)) return false;
    }
    ld->index = -1;
    ld->table = NULL;
    return true;
}
