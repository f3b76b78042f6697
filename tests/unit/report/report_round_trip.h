/* Rendering a report in memory, and the round trip every report must
 * survive: written as JSON and read back, it renders in every format
 * exactly as it did. Include after cmocka.h. */
#ifndef TEST_REPORT_ROUND_TRIP_H
#define TEST_REPORT_ROUND_TRIP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "report.h"
#include "settings.h"
#include "strtab.h"

typedef int (*writer)(const gt_report *r, const gt_process_info *p, FILE *out);

/* Not inlined: GCC 12 then takes the returned buffer for open_memstream's
 * local pointer and warns of a dangling pointer where there is none. */
static __attribute__((noinline, unused)) char *render(writer w, const gt_report *r,
                                                      const gt_process_info *p)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(w(r, p, f), 0);
    fclose(f);
    return buf;
}

static enum gt_verbosity render_verbosity;

static inline int summary_at(const gt_report *r, const gt_process_info *p, FILE *out)
{
    return gt_report_write_summary_at(r, p, render_verbosity, out);
}

static inline gt_report *load_text(const char *json, gt_strtab *names, char *err)
{
    return gt_report_load_buffer(json, strlen(json), "r.json", names, err, GT_LOAD_ERROR_MAX);
}

/* Every format of r equals that of its JSON read back. */
static inline void check_round_trip(const gt_report *r, const gt_process_info *p)
{
    char *json = render(gt_report_write_json, r, p);
    gt_strtab *names = gt_strtab_create();
    char err[GT_LOAD_ERROR_MAX] = "";
    gt_report *back = load_text(json, names, err);
    if (!back) fail_msg("%s", err);
    const gt_process_info *bp = gt_report_process(back);
    char *again = render(gt_report_write_json, back, bp);
    assert_string_equal(again, json);
    for (render_verbosity = GT_VERB_DEFAULT; render_verbosity <= GT_VERB_DEBUG;
         render_verbosity++) {
        char *want = render(summary_at, r, p), *got = render(summary_at, back, bp);
        assert_string_equal(got, want);
        free(want);
        free(got);
    }
    char *want = render(gt_report_write_csv, r, p), *got = render(gt_report_write_csv, back, bp);
    assert_string_equal(got, want);
    free(want);
    free(got);
    free(again);
    free(json);
    gt_report_destroy(back);
    gt_strtab_destroy(names);
}

#endif
