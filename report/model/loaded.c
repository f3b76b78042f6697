#include "loaded.h"

#include <stdlib.h>

#include "aggregate.h"
#include "event.h"
#include "report.h"
#include "strtab.h"
#include "table.h"

gt_report *gt_loaded_report_create(const gt_report_options *opt, const gt_strtab *names)
{
    gt_report *r = gt_report_create(opt, names);
    if (!r) return NULL;
    r->loaded = calloc(1, sizeof(*r->loaded));
    if (!r->loaded) {
        gt_report_destroy(r);
        return NULL;
    }
    return r;
}

const gt_process_info *gt_report_process(const gt_report *r)
{
    return r->loaded ? &r->loaded->process : NULL;
}

const gt_row_spread *gt_report_row_spread(const gt_report *r, enum gt_category c, const gt_row *row)
{
    if (!r->loaded || (unsigned)c >= GT_CAT_COUNT || !r->loaded->spread[c]) return NULL;
    return &r->loaded->spread[c][row - r->tables[c].rows];
}

static void free_members(gt_loaded_member *m, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        free(m[i].key);
        free(m[i].json);
    }
    free(m);
}

void gt_loaded_free(gt_loaded *l)
{
    if (!l) return;
    free(l->hostname);
    free(l->command);
    for (unsigned c = 0; c < GT_CAT_COUNT; c++) {
        free(l->summaries[c]);
        free(l->spread[c]);
    }
    for (uint32_t i = 0; i < l->ninputs; i++) {
        free(l->inputs[i].file);
        free(l->inputs[i].hostname);
        free(l->inputs[i].command);
    }
    free(l->inputs);
    free_members(l->totals, l->ntotals);
    free_members(l->members, l->nmembers);
    free(l);
}
