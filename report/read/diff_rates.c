/* Rates in a comparison (diff.h): each payload number of an NVTX range
 * that both reports give, per second of the range's GPU time, as
 * throughput: less of it is worse. */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "nvtx_numbers.h"
#include "report.h"
#include "strtab.h"
#include "table.h"

/* Per GPU second, or per wall second when the range enclosed no GPU work
 * in either report. */
static double rate_of(const gt_row *row, double total, bool gpu)
{
    return gt_number_rate(total, gpu ? row->gpu_ns_total : row->time.total);
}

static int add_rate(gt_diff *d, size_t *cap, const gt_report *base, const gt_row *b,
                    const gt_row *n, const char *what, const char *unit, double before,
                    double after)
{
    char *label = gt_row_label(base, GT_CAT_NVTX, b);
    gt_diff_row *out = label ? gt_diff_add_row(d, cap) : NULL;
    if (!out) {
        free(label);
        return -1;
    }
    bool gpu = b->gpu_ns_total && n->gpu_ns_total;
    size_t len = strlen(label) + strlen(what) + 32;
    char *name = malloc(len);
    if (!name) {
        d->nrows--;
        free(label);
        return -1;
    }
    snprintf(name, len, "%s %s%s", label, what, gpu ? "" : " (per wall s)");
    free(label);
    *out = (gt_diff_row){.cat = GT_CAT_NVTX, .rate = true, .name = name};
    snprintf(out->unit, sizeof out->unit, "%s", unit);
    out->rate_before = rate_of(b, before, gpu);
    out->rate_after = rate_of(n, after, gpu);
    out->before = (gt_diff_side){.present = true, .calls = b->calls};
    out->after = (gt_diff_side){.present = true, .calls = n->calls};
    double rb = out->rate_before, ra = out->rate_after;
    out->change_pct = rb != 0 ? (ra - rb) * 100.0 / fabs(rb) : NAN;
    if (rb != 0 && -out->change_pct > d->opt.threshold_pct)
        out->verdict = GT_DIFF_SLOWER;
    else if (rb != 0 && out->change_pct > d->opt.threshold_pct)
        out->verdict = GT_DIFF_FASTER;
    else
        out->verdict = GT_DIFF_SAME;
    out->fails = out->verdict == GT_DIFF_SLOWER;
    d->count[out->verdict]++;
    d->failing += out->fails;
    return 0;
}

int gt_diff_rates(gt_diff *d, size_t *cap, const gt_report *base, const gt_report *next)
{
    const gt_table *t = &base->tables[GT_CAT_NVTX];
    for (uint32_t i = 0; i < t->nrows; i++) {
        const gt_row *b = &t->rows[i];
        const gt_row *n = gt_table_find(&next->tables[GT_CAT_NVTX], &b->key);
        const gt_nvtx_numbers *bn = b->numbers, *nn = n ? n->numbers : NULL;
        if (!bn || !nn) continue;
        if (bn->payload.count && nn->payload.count &&
            add_rate(d, cap, base, b, n, "payload", "", bn->payload.total, nn->payload.total) != 0)
            return -1;
        for (uint32_t f = 0; f < bn->nfields; f++) {
            const gt_nvtx_field *bf = &bn->fields[f];
            const gt_nvtx_field *nf = NULL;
            for (uint32_t g = 0; g < nn->nfields && !nf; g++)
                if (nn->fields[g].name == bf->name) nf = &nn->fields[g];
            if (!nf) continue;
            const char *name = gt_strtab_get(base->names, bf->name);
            const char *unit = gt_nvtx_field_unit(name, gt_strtab_get(base->names, bf->unit));
            if (add_rate(d, cap, base, b, n, name, unit, bf->sum.total, nf->sum.total) != 0)
                return -1;
        }
    }
    return 0;
}
