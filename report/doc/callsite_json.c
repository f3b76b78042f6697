/* The JSON report's `callsites` (SPEC §12): one object per row of the call
 * site table, in report order (callsite_table.h). Beyond SPEC's keys:
 * "label" (the site in words, as the traces name it), "estimate" (true
 * when sampled calls went into the figures), the row's name in its
 * table's keys ("direction", "host_memory", "async" for copies, "async"
 * for memsets, "graph" for graph launches, "memory_kind" for
 * allocations) and, for allocations, "peak_bytes", "held_bytes" and
 * "held_allocs" (still held when the report was made). */
#include "callsite_json.h"

#include "aggregate.h"
#include "callsite_table.h"
#include "event.h"
#include "json_writer.h"
#include "strtab.h"

#include <stdio.h>
#include <stdlib.h>

void gt_site_write_json(gt_json *w, const gt_strtab *names, const gt_site *s)
{
    gt_json_object_begin(w, true);
    gt_json_kv_string(w, "language", gt_site_language_name(s->language));
    gt_json_kv_string(w, "file", gt_strtab_get(names, s->file));
    gt_json_kv_int(w, "line", s->line);
    gt_json_kv_string(w, "function", gt_strtab_get(names, s->function));
    gt_json_kv_string(w, "module", gt_strtab_get(names, s->module));
    gt_json_kv_string(w, "via", gt_strtab_get(names, s->via));
    gt_json_object_end(w);
}

size_t gt_site_json_text(const gt_strtab *names, const gt_site *s, char *buf, size_t cap)
{
    FILE *f = fmemopen(buf, cap, "w");
    if (!f) return 0;
    gt_json w;
    gt_json_init(&w, f);
    w.tight = true;
    gt_site_write_json(&w, names, s);
    /* Written whole, with room for the terminating NUL. */
    long len = ftell(f);
    bool whole = fflush(f) == 0 && len > 0 && (size_t)len < cap;
    fclose(f);
    if (!whole) return 0;
    buf[len] = '\0';
    return (size_t)len;
}

static void write_row(gt_json *w, const gt_strtab *names, const gt_site_table *cs,
                      const gt_site_row *row)
{
    char name[GT_SITE_LABEL_MAX];
    gt_site_row_name(names, row, name, sizeof name);
    gt_json_object_begin(w, true);
    gt_json_kv_string(w, "kind", gt_site_kind_name(row->kind));
    gt_json_kv_string(w, "name",
                      row->kind == GT_EV_KERNEL && !row->b && row->a ? gt_strtab_get(names, row->a)
                                                                     : name);
    gt_json_key(w, "site");
    gt_site_write_json(w, names, &cs->sites[row->site]);
    gt_json_kv_uint(w, "calls", row->calls);
    gt_json_kv_uint(w, "sampled", row->samples);
    gt_json_kv_uint(w, "gpu_ns_total", row->gpu_ns);
    gt_json_kv_uint(w, "bytes", row->bytes);
    gt_json_kv_string(w, "label", gt_strtab_get(names, cs->labels[row->site]));
    gt_json_kv_bool(w, "estimate", row->samples != 0);
    switch (row->kind) {
    case GT_EV_KERNEL:
        if (row->b) gt_json_kv_bool(w, "graph", true);
        break;
    case GT_EV_MEMCPY:
        gt_json_kv_string(w, "direction", gt_copy_dir_name(row->a));
        gt_json_kv_string(w, "host_memory", gt_host_mem_name(row->b & 0xffu));
        gt_json_kv_bool(w, "async", (row->b >> 8) != 0);
        break;
    case GT_EV_MEMSET:
        gt_json_kv_bool(w, "async", row->a != 0);
        break;
    case GT_EV_ALLOC:
        gt_json_kv_string(w, "memory_kind", gt_mem_kind_name(row->a));
        gt_json_kv_uint(w, "peak_bytes", row->peak_bytes);
        gt_json_kv_uint(w, "held_bytes", row->held_bytes);
        gt_json_kv_uint(w, "held_allocs", row->held_allocs);
        break;
    }
    gt_json_object_end(w);
}

int gt_callsites_write_json(gt_json *w, const gt_report *r)
{
    size_t n;
    const gt_site_row **rows = gt_callsites_sorted(&r->callsites, r->names, &n);
    gt_json_key(w, "callsites");
    gt_json_array_begin(w, false);
    for (size_t i = 0; i < n; i++)
        write_row(w, r->names, &r->callsites, rows[i]);
    gt_json_array_end(w);
    /* No rows is complete: sites may be known (a checksum's) with none listed. */
    int complete = rows || !gt_callsites_listed(&r->callsites);
    free(rows);
    return complete ? 0 : -1;
}
