#include <stdio.h>
#include <stdlib.h>

#include "aggregate.h"
#include "counter_table.h"
#include "checksum_list.h"
#include "checksum_mode.h"
#include "callsite_table.h"
#include "event.h"
#include "gpu_busy.h"
#include "heap_table.h"
#include "loaded.h"
#include "memory_table.h"
#include "nvtx_marks.h"
#include "nvtx_table.h"
#include "settings.h"
#include "strtab.h"
#include "table.h"

gt_report *gt_report_create(const gt_report_options *opt, const gt_strtab *names)
{
    gt_report *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    if (opt)
        r->opt = *opt;
    else
        r->opt = (gt_report_options){.categories = GT_CAT_ALL,
                                     .verbosity = GT_VERB_DEFAULT,
                                     .gpu_timing = GT_GPU_TIMING_EVENTS};
    r->names = names;
    r->nvtx.memory = gt_report_enabled(r, GT_CAT_NVTX) && gt_report_enabled(r, GT_CAT_MEMORY);
    r->memory.sites = &r->callsites;
    return r;
}

void gt_report_destroy(gt_report *r)
{
    if (!r) return;
    for (unsigned c = 0; c < GT_CAT_COUNT; c++)
        gt_table_free(&r->tables[c]);
    gt_memory_free(&r->memory);
    gt_nvtx_free(&r->nvtx);
    gt_nvtx_marks_free(&r->marks);
    gt_idmap_free(&r->nvtx_targets);
    gt_counter_table_free(&r->counters);
    gt_heap_table_free(&r->heaps);
    gt_gpu_busy_free(&r->busy);
    gt_callsites_free(&r->callsites);
    gt_idmap_free(&r->stream_threads);
    gt_checksums_free(&r->checksums);
    gt_loaded_free(r->loaded);
    free(r);
}

gt_report_options gt_report_get_options(const gt_report *r)
{
    return r->opt;
}

void gt_report_set_options(gt_report *r, const gt_report_options *opt)
{
    r->opt = *opt;
}

void gt_report_set_counts(gt_report *r, const gt_report_counts *c)
{
    r->dropped = c->dropped;
    snprintf(r->dropped_why, sizeof r->dropped_why, "%s", c->dropped_why ? c->dropped_why : "");
    r->late = c->late;
    r->late_gpu_work = c->late_gpu_work;
    r->gpu_pending = c->gpu_pending;
}

void gt_report_set_gpu_source(gt_report *r, enum gt_gpu_source source, const char *detail)
{
    r->gpu_source = source;
    r->gpu_source_set = true;
    snprintf(r->gpu_source_detail, sizeof r->gpu_source_detail, "%s", detail ? detail : "");
}

enum gt_gpu_source gt_report_gpu_source(const gt_report *r)
{
    if (r->gpu_source_set) return r->gpu_source;
    return r->opt.gpu_timing == GT_GPU_TIMING_OFF ? GT_GPU_SOURCE_OFF : GT_GPU_SOURCE_EVENTS;
}

const char *gt_report_gpu_source_detail(const gt_report *r)
{
    return r->gpu_source_detail;
}

void gt_report_set_gpu_timing_off(gt_report *r, const char *reason)
{
    snprintf(r->gpu_timing_off, sizeof r->gpu_timing_off, "%s", reason ? reason : "");
}

void gt_report_set_checksum_mode(gt_report *r, gt_checksum_mode m)
{
    gt_checksums_set_mode(&r->checksums, m);
}

uint64_t gt_report_event_count(const gt_report *r)
{
    return r->events;
}

void gt_report_finish(gt_report *r, uint64_t end_ns)
{
    gt_nvtx_finish(&r->nvtx, &r->tables[GT_CAT_NVTX], end_ns);
    gt_memory_finish(&r->memory);
    gt_callsites_settle(&r->callsites);
}

void gt_report_work_recorded(const gt_report *r, char *buf, size_t cap)
{
    static const enum gt_category work[] = {GT_CAT_KERNEL, GT_CAT_MEMCPY, GT_CAT_MEMSET};
    unsigned on = 0;
    size_t len = 0;
    if (!cap) return;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof work / sizeof work[0]; i++)
        on += gt_report_enabled(r, work[i]);
    if (on == sizeof work / sizeof work[0]) return;
    if (!on) {
        snprintf(buf, cap, "none");
        return;
    }
    for (size_t i = 0; i < sizeof work / sizeof work[0] && len < cap; i++)
        if (gt_report_enabled(r, work[i]))
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? " and " : "",
                                    gt_category_name(work[i]));
}
