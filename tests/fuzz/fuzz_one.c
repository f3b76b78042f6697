#include "fuzz_one.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "load.h"
#include "merge.h"

/* Where the writers write: nowhere, through a real FILE. */
static FILE *sink(void)
{
    static FILE *null;
    if (!null) null = fopen("/dev/null", "w");
    return null;
}

static void write_all(const gt_report *r)
{
    const gt_process_info *p = gt_report_process(r);
    for (int v = GT_VERB_NONE; v <= GT_VERB_DEBUG; v++)
        gt_report_write_summary_at(r, p, (enum gt_verbosity)v, sink());
    gt_report_write_csv(r, p, sink());
}

/* The JSON of r read back, written again. */
static void json_again(const gt_report *r, gt_strtab *names)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) return;
    gt_report_write_json(r, gt_report_process(r), f);
    if (fclose(f) == 0) {
        char err[GT_LOAD_ERROR_MAX];
        gt_report *back = gt_report_load_buffer(buf, size, "again", names, err, sizeof err);
        if (back) write_all(back);
        gt_report_destroy(back);
    }
    free(buf);
}

int gt_fuzz_one(const uint8_t *data, size_t size)
{
    gt_strtab *names = gt_strtab_create();
    char err[GT_LOAD_ERROR_MAX];
    gt_report *r = gt_report_load_buffer((const char *)data, size, "fuzz", names, err, sizeof err);
    if (!r) {
        gt_strtab_destroy(names);
        return 0;
    }
    write_all(r);
    json_again(r, names);
    gt_report *twice[2] = {r, r};
    const char *files[2] = {"a", "b"};
    gt_report *merged = gt_report_merge(twice, files, 2, names, err, sizeof err);
    if (merged) {
        write_all(merged);
        json_again(merged, names);
    }
    gt_diff d;
    gt_diff_options o = {GT_DIFF_DEFAULT_THRESHOLD_PCT, 0, ~0u};
    if (gt_diff_reports(r, merged ? merged : r, "a", "b", &o, &d) == 0) {
        gt_diff_write_text(&d, true, 0, sink());
        gt_diff_write_json(&d, sink());
        gt_diff_write_csv(&d, sink());
        gt_diff_free(&d);
    }
    gt_report_destroy(merged);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
    return 1;
}
