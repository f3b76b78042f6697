/* The call sites in the CSV report: one record per row of the table
 * (callsite_table.h), category "callsite", after every other category.
 * The name is the row's name and its site, "NAME @ LABEL"; calls and
 * bytes are the row's (estimates when `sampled` in the JSON is not 0),
 * total_ns its GPU time (empty for allocations, whose bytes are the bytes
 * allocated). */
#include "callsite_csv.h"

#include "aggregate.h"
#include "callsite_table.h"
#include "csv.h"
#include "event.h"
#include "strtab.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int gt_callsites_write_csv(FILE *out, const gt_report *r)
{
    const gt_site_table *cs = &r->callsites;
    size_t n = 0;
    const gt_site_row **rows = gt_callsites_sorted(cs, r->names, &n);
    for (size_t i = 0; i < n; i++) {
        const gt_site_row *row = rows[i];
        char name[GT_SITE_LABEL_MAX], text[2 * GT_SITE_LABEL_MAX + 4];
        gt_site_row_name(r->names, row, name, sizeof name);
        snprintf(text, sizeof text, "%s @ %s", name,
                 gt_strtab_get(r->names, cs->labels[row->site]));
        fputs("callsite,", out);
        gt_csv_write_name(out, text);
        fprintf(out, ",%" PRIu64 ",", row->calls);
        if (row->kind != GT_EV_ALLOC) fprintf(out, "%" PRIu64, row->gpu_ns);
        fprintf(out, ",,,,,,,,%" PRIu64 ",\r\n", row->bytes);
    }
    int rc = !rows && cs->nsites ? -1 : 0;
    free(rows);
    return rc;
}
