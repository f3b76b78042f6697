/* Merging reports (report/read/merge.c).
 *
 * Two runs whose records are known: A, the sample run, and B, the same
 * run with more work (longer rk4 launches, a kernel of its own, a copy
 * kind of its own). Their records also go, all of them, into one report
 * C aggregated as a single process would be. The merge of A and B, read
 * back from their JSON, must match C in every exactly-combinable figure
 * (calls, bytes, total, timed count, min, max, avg, first, rest_avg) and
 * come within 1 ns of its standard deviation; its median lies between the
 * inputs' medians. The spread of each row is known from A and B. The
 * merged report survives the JSON round trip (spread and inputs
 * included), and merges again. NVTX marks merge as one process would
 * count them; late, pending and released counts are summed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aggregate.h"
#include "event.h"
#include "loaded.h"
#include "memory_table.h"
#include "merge.h"
#include "nvtx_marks.h"
#include "report.h"
#include "report_round_trip.h"
#include "report_runs.h"
#include "settings.h"
#include "stats.h"
#include "table.h"

/* The row of r labelled `label` in category c, or NULL. */
static const gt_row *row_named(const gt_report *r, enum gt_category c, const char *label)
{
    size_t n;
    gt_sorted_row *rows = gt_report_sorted_rows(r, c, &n);
    const gt_row *found = NULL;
    for (size_t i = 0; i < n && !found; i++) {
        char *l = gt_row_label(r, c, rows[i].row);
        if (strcmp(l, label) == 0) found = rows[i].row;
        free(l);
    }
    free(rows);
    return found;
}

static uint64_t median_of(const gt_report *r, enum gt_category c, const char *label)
{
    const gt_row *row = row_named(r, c, label);
    if (!row) return 0;
    gt_stats_summary s;
    gt_stats_summarize(&row->time, &s);
    return s.med;
}

static void test_merge_matches_one_process(void **unused)
{
    (void)unused;
    runs w;
    runs_build(&w);
    unsigned compared = 0;
    for (unsigned c = 0; c < GT_CAT_COUNT; c++) {
        if (c == GT_CAT_MEMORY) continue;
        size_t n;
        gt_sorted_row *rows = gt_report_sorted_rows(w.combined, c, &n);
        assert_int_equal(w.merged->tables[c].nrows, n);
        for (size_t i = 0; i < n; i++) {
            char *label = gt_row_label(w.combined, c, rows[i].row);
            const gt_row *m = row_named(w.merged, c, label);
            if (!m) fail_msg("%s %s: not in the merge", gt_category_name(c), label);
            const gt_row *want = rows[i].row;
            assert_int_equal(m->calls, want->calls);
            assert_int_equal(m->bytes, want->bytes);
            assert_int_equal(m->timed_bytes, want->timed_bytes);
            assert_int_equal(m->api_ns_total, want->api_ns_total);
            assert_int_equal(m->gpu_ns_total, want->gpu_ns_total);
            assert_int_equal(m->firsts, want->firsts);
            /* Open time is per process: the inputs' summed (one process
             * would count the runs' overlapping ranges once). */
            const gt_row *ia = row_named(w.in[0], c, label), *ib = row_named(w.in[1], c, label);
            assert_int_equal(m->open_ns, (ia ? ia->open_ns : 0) + (ib ? ib->open_ns : 0));
            gt_stats_summary got, exp;
            gt_stats_summarize(&m->time, &got);
            gt_stats_summarize(&want->time, &exp);
            assert_int_equal(got.count, exp.count);
            assert_int_equal(got.total, exp.total);
            assert_int_equal(got.min, exp.min);
            assert_int_equal(got.max, exp.max);
            assert_int_equal(got.avg, exp.avg);
            assert_int_equal(got.first, exp.first);
            assert_int_equal(got.rest_avg, exp.rest_avg);
            uint64_t diff =
                got.stddev > exp.stddev ? got.stddev - exp.stddev : exp.stddev - got.stddev;
            if (diff > 1)
                fail_msg("%s: stddev %llu, all samples give %llu", label,
                         (unsigned long long)got.stddev, (unsigned long long)exp.stddev);
            uint64_t ma = median_of(w.in[0], c, label), mb = median_of(w.in[1], c, label);
            uint64_t lo = ma < mb ? ma : mb, hi = ma < mb ? mb : ma;
            if (!row_named(w.in[0], c, label)) lo = hi = mb;
            if (!row_named(w.in[1], c, label)) lo = hi = ma;
            assert_in_range(got.med, lo, hi);
            free(label);
            compared++;
        }
        free(rows);
    }
    assert_true(compared > 25);
    runs_free(&w);
}

static void test_spread_and_header(void **unused)
{
    (void)unused;
    runs w;
    runs_build(&w);
    const gt_row *rk4 = row_named(w.merged, GT_CAT_KERNEL, SAMPLE_RK4_NAME);
    const gt_row *a = row_named(w.in[0], GT_CAT_KERNEL, SAMPLE_RK4_NAME);
    const gt_row *b = row_named(w.in[1], GT_CAT_KERNEL, SAMPLE_RK4_NAME);
    assert_non_null(rk4);
    const gt_row_spread *s = gt_report_row_spread(w.merged, GT_CAT_KERNEL, rk4);
    assert_non_null(s);
    uint64_t extra = EXTRA_RK4 * EXTRA_RK4_NS + EXTRA_RK4 * (EXTRA_RK4 - 1) / 2;
    assert_int_equal(b->time.total - a->time.total, extra);
    assert_int_equal(s->min, a->time.total);
    assert_int_equal(s->max, b->time.total);
    assert_int_equal(s->med, a->time.total + (extra + 1) / 2);
    assert_int_equal(s->max_input, 1);
    assert_int_equal(s->inputs, 2);
    const gt_row *only = row_named(w.merged, GT_CAT_KERNEL, "only_in_b(float*)");
    s = gt_report_row_spread(w.merged, GT_CAT_KERNEL, only);
    assert_int_equal(s->min, 0);
    assert_int_equal(s->med, (ONLY_B_NS + 1) / 2);
    assert_int_equal(s->max, ONLY_B_NS);
    assert_int_equal(s->max_input, 1);
    assert_int_equal(s->inputs, 1);
    /* Equal totals: the first input is the one named. */
    const gt_row *init = row_named(w.merged, GT_CAT_KERNEL, "init_states(double*, int)");
    assert_int_equal(gt_report_row_spread(w.merged, GT_CAT_KERNEL, init)->max_input, 0);

    const gt_process_info *p = gt_report_process(w.merged);
    assert_int_equal(p->end_ns - p->start_ns, SAMPLE_END - SAMPLE_START);
    assert_string_equal(p->command, "./batch_ode --systems 65536 --chunks 12");
    assert_int_equal(gt_report_event_count(w.merged),
                     gt_report_event_count(w.in[0]) + gt_report_event_count(w.in[1]));
    render_verbosity = GT_VERB_DEFAULT;
    char *text = render(summary_at, w.merged, p);
    assert_non_null(strstr(text, "inputs: 2 reports"));
    assert_non_null(strstr(text, "InMin"));
    assert_non_null(strstr(text, "a.json"));
    assert_non_null(strstr(text, "[leak] In 2 of 2 inputs; #0 has the most: 2 device allocations"));
    assert_non_null(strstr(text, "memory: 2 GPUs, 8 allocations, 4 frees"));
    free(text);
    /* The CSV keeps the spread; a merge has no one pid, and its inputs'
     * host when they share it. */
    char *csv = render(gt_report_write_csv, w.merged, p);
    assert_non_null(strstr(csv, "display_name,clock,time_pct,pid,host,in_min_ns,in_med_ns,"
                                "in_max_ns,max_input\r\n"));
    const char *at = strstr(csv, "\r\nkernel,\"" SAMPLE_RK4_NAME "\"");
    assert_non_null(at);
    char tail[128];
    snprintf(tail, sizeof tail, ",,\"%s\",%llu,%llu,%llu,1\r\n", p->hostname,
             (unsigned long long)a->time.total,
             (unsigned long long)(a->time.total + (extra + 1) / 2),
             (unsigned long long)b->time.total);
    const char *end = strstr(at + 2, "\r\n");
    assert_non_null(end);
    assert_true((size_t)(end + 2 - at) > strlen(tail));
    assert_memory_equal(end + 2 - strlen(tail), tail, strlen(tail));
    assert_non_null(strstr(at, ",gpu,"));
    free(csv);
    runs_free(&w);
}

/* The mark of r labelled `label`, or NULL. */
static const gt_nvtx_mark *mark_named(const gt_report *r, const char *label)
{
    const gt_nvtx_mark *found = NULL;
    for (uint32_t i = 0; i < r->marks.n && !found; i++) {
        char *l = gt_nvtx_label(r, r->marks.marks[i].domain, r->marks.marks[i].name);
        if (strcmp(l, label) == 0) found = &r->marks.marks[i];
        free(l);
    }
    return found;
}

/* Marks as one process would count them (both runs start together); the
 * counts beside the tables, open time and released memory summed; GPU
 * timing off only when it was off in every input. */
static void test_marks_and_counts(void **unused)
{
    (void)unused;
    runs w;
    runs_build(&w);
    assert_true(w.combined->marks.n > 1);
    assert_int_equal(w.merged->marks.n, w.combined->marks.n);
    for (uint32_t i = 0; i < w.combined->marks.n; i++) {
        const gt_nvtx_mark *want = &w.combined->marks.marks[i];
        char *label = gt_nvtx_label(w.combined, want->domain, want->name);
        const gt_nvtx_mark *got = mark_named(w.merged, label);
        if (!got) fail_msg("mark %s: not in the merge", label);
        assert_int_equal(got->count, want->count);
        assert_int_equal(got->first, want->first);
        assert_int_equal(got->last, want->last);
        free(label);
    }
    assert_int_equal(w.merged->nvtx.open_ns, w.in[0]->nvtx.open_ns + w.in[1]->nvtx.open_ns);
    gt_report_set_counts(w.in[0], &(gt_report_counts){.late = 5, .late_gpu_work = 2});
    gt_report_set_counts(w.in[1], &(gt_report_counts){.late = 7, .gpu_pending = 3});
    w.in[0]->memory.devices[0].ctx_released_allocs = 2;
    w.in[0]->memory.devices[0].ctx_released_bytes = 4096;
    w.in[1]->memory.devices[0].ctx_released_allocs = 1;
    w.in[1]->memory.devices[0].ctx_released_bytes = 512;
    gt_report_set_gpu_timing_off(w.in[1], "the driver has no cuEventQuery");
    const char *files[] = {"a.json", "b.json"};
    char err[256];
    gt_report *m = gt_report_merge(w.in, files, 2, w.names, err, sizeof err);
    if (!m) fail_msg("%s", err);
    assert_int_equal(m->late, 12);
    assert_int_equal(m->late_gpu_work, 2);
    assert_int_equal(m->gpu_pending, 3);
    const gt_mem_device *d = gt_memory_device_row(&m->memory, w.in[0]->memory.devices[0].device);
    assert_int_equal(d->ctx_released_allocs, 3);
    assert_int_equal(d->ctx_released_bytes, 4608);
    assert_string_equal(m->gpu_timing_off, "");
    gt_report_destroy(m);
    gt_report_set_gpu_timing_off(w.in[0], "the driver has no cuEventElapsedTime");
    m = gt_report_merge(w.in, files, 2, w.names, err, sizeof err);
    if (!m) fail_msg("%s", err);
    assert_string_equal(m->gpu_timing_off, "the driver has no cuEventElapsedTime");
    render_verbosity = GT_VERB_DEFAULT;
    char *text = render(summary_at, m, gt_report_process(m));
    assert_non_null(strstr(text, "| 12 late"));
    assert_non_null(strstr(text, "Released"));
    free(text);
    gt_report_destroy(m);
    runs_free(&w);
}

static void test_merged_round_trip_and_merge_again(void **unused)
{
    (void)unused;
    runs w;
    runs_build(&w);
    check_round_trip(w.merged, gt_report_process(w.merged));
    /* The merged JSON is an input like any other: it counts as one. */
    gt_report *again_in[3] = {read_back(w.merged, gt_report_process(w.merged), w.names), w.in[0],
                              w.in[1]};
    const char *files[] = {"ab.json", "a.json", "b.json"};
    char err[256];
    gt_report *again = gt_report_merge(again_in, files, 3, w.names, err, sizeof err);
    if (!again) fail_msg("%s", err);
    const gt_row *rk4 = row_named(again, GT_CAT_KERNEL, SAMPLE_RK4_NAME);
    const gt_row *ab = row_named(w.merged, GT_CAT_KERNEL, SAMPLE_RK4_NAME);
    assert_int_equal(rk4->calls, 2 * ab->calls);
    assert_int_equal(rk4->time.total, 2 * ab->time.total);
    const gt_row_spread *s = gt_report_row_spread(again, GT_CAT_KERNEL, rk4);
    assert_int_equal(s->inputs, 3);
    assert_int_equal(s->max, ab->time.total);
    assert_int_equal(s->max_input, 0);
    gt_report_destroy(again);
    gt_report_destroy(again_in[0]);
    runs_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_matches_one_process),
        cmocka_unit_test(test_spread_and_header),
        cmocka_unit_test(test_marks_and_counts),
        cmocka_unit_test(test_merged_round_trip_and_merge_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
