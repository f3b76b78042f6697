/* Comparing reports (report/read/diff.c).
 *
 * A and B (report_runs.h) differ in known ways: B has EXTRA_RK4 more rk4
 * launches (its total grows by a known amount; cuLaunchKernel's host
 * time by 6 x 4 us), a kernel and a peer copy of its own (new rows, with
 * cuMemcpyPeerAsync in api). Everything else is the same to the
 * nanosecond. The verdicts, changes, gate and the three formats follow;
 * then NVTX marks, which B is given one more of, and the header's late
 * and pending counts. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aggregate.h"
#include "diff.h"
#include "event.h"
#include "nvtx_marks.h"
#include "report.h"
#include "report_runs.h"
#include "strtab.h"
#include "table.h"

static const gt_diff_row *row_of(const gt_diff *d, enum gt_category c, const char *name)
{
    for (size_t i = 0; i < d->nrows; i++)
        if (d->rows[i].cat == c && strcmp(d->rows[i].name, name) == 0) return &d->rows[i];
    fail_msg("%s %s: not in the comparison", gt_category_name(c), name);
    return NULL;
}

static gt_diff compare(const runs *w, bool forward, double threshold, uint64_t min_ns)
{
    gt_diff_options o = {threshold, min_ns, GT_CAT_ALL};
    gt_diff d;
    const gt_report *base = w->in[forward ? 0 : 1], *next = w->in[forward ? 1 : 0];
    assert_int_equal(gt_diff_reports(base, next, "a.json", "b.json", &o, &d), 0);
    return d;
}

static uint64_t total_of(const gt_report *r, enum gt_category c, const char *name)
{
    size_t n;
    gt_sorted_row *rows = gt_report_sorted_rows(r, c, &n);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        char *l = gt_row_label(r, c, rows[i].row);
        if (strcmp(l, name) == 0) total = rows[i].row->time.total;
        free(l);
    }
    free(rows);
    return total;
}

static void test_known_differences(void **unused)
{
    (void)unused;
    runs w;
    runs_build(&w);
    gt_diff d = compare(&w, true, GT_DIFF_DEFAULT_THRESHOLD_PCT, 0);
    assert_int_equal(d.count[GT_DIFF_SLOWER], 2);
    assert_int_equal(d.count[GT_DIFF_NEW], 3);
    assert_int_equal(d.count[GT_DIFF_FASTER], 0);
    assert_int_equal(d.count[GT_DIFF_GONE], 0);
    assert_int_equal(d.failing, 5);
    assert_int_equal(d.nrows, d.count[GT_DIFF_SAME] + 5);

    uint64_t before = total_of(w.in[0], GT_CAT_KERNEL, SAMPLE_RK4_NAME);
    uint64_t extra = EXTRA_RK4 * EXTRA_RK4_NS + EXTRA_RK4 * (EXTRA_RK4 - 1) / 2;
    const gt_diff_row *rk4 = row_of(&d, GT_CAT_KERNEL, SAMPLE_RK4_NAME);
    assert_int_equal(rk4->verdict, GT_DIFF_SLOWER);
    assert_int_equal(rk4->before.total, before);
    assert_int_equal(rk4->after.total, before + extra);
    assert_int_equal(rk4->before.calls, SAMPLE_CHUNKS);
    assert_int_equal(rk4->after.calls, SAMPLE_CHUNKS + EXTRA_RK4);
    assert_true(rk4->change_pct == (double)extra * 100.0 / (double)before);
    const gt_diff_row *launch = row_of(&d, GT_CAT_API, "cuLaunchKernel");
    assert_int_equal(launch->after.total - launch->before.total, (EXTRA_RK4 + 1) * 4000);
    assert_int_equal(launch->verdict, GT_DIFF_SLOWER);
    const gt_diff_row *only = row_of(&d, GT_CAT_KERNEL, "only_in_b(float*)");
    assert_int_equal(only->verdict, GT_DIFF_NEW);
    assert_false(only->before.present);
    assert_int_equal(only->after.total, ONLY_B_NS);
    assert_true(isnan(only->change_pct));
    assert_int_equal(row_of(&d, GT_CAT_MEMCPY, "PtoP async")->verdict, GT_DIFF_NEW);
    assert_int_equal(row_of(&d, GT_CAT_API, "cuMemcpyPeerAsync")->verdict, GT_DIFF_NEW);
    const gt_diff_row *same = row_of(&d, GT_CAT_SYNC, "cuStreamSynchronize");
    assert_int_equal(same->verdict, GT_DIFF_SAME);
    assert_true(same->change_pct == 0.0);
    /* The largest move first within a category. */
    assert_ptr_equal(&d.rows[0], rk4);
    gt_diff_free(&d);

    /* The other way round: what grew shrank, what was new is gone. */
    d = compare(&w, false, GT_DIFF_DEFAULT_THRESHOLD_PCT, 0);
    assert_int_equal(d.count[GT_DIFF_FASTER], 2);
    assert_int_equal(d.count[GT_DIFF_GONE], 3);
    assert_int_equal(d.count[GT_DIFF_SLOWER] + d.count[GT_DIFF_NEW], 0);
    assert_int_equal(d.failing, 0);
    gt_diff_free(&d);
    runs_free(&w);
}

static void test_threshold_and_min_ns(void **unused)
{
    (void)unused;
    runs w;
    runs_build(&w);
    /* rk4 grew by about 61%, cuLaunchKernel by 24%: 30% keeps one of them. */
    gt_diff d = compare(&w, true, 30.0, 0);
    assert_int_equal(d.count[GT_DIFF_SLOWER], 1);
    assert_int_equal(row_of(&d, GT_CAT_API, "cuLaunchKernel")->verdict, GT_DIFF_SAME);
    gt_diff_free(&d);
    d = compare(&w, true, 100.0, 0);
    assert_int_equal(d.count[GT_DIFF_SLOWER], 0);
    assert_int_equal(d.failing, 3); /* the new rows still add time */
    gt_diff_free(&d);
    /* Under 200 us: only rk4 is big enough to fail the gate. */
    d = compare(&w, true, GT_DIFF_DEFAULT_THRESHOLD_PCT, 200000);
    assert_int_equal(d.failing, 1);
    assert_true(row_of(&d, GT_CAT_KERNEL, SAMPLE_RK4_NAME)->fails);
    assert_false(row_of(&d, GT_CAT_KERNEL, "only_in_b(float*)")->fails);
    assert_int_equal(row_of(&d, GT_CAT_KERNEL, "only_in_b(float*)")->verdict, GT_DIFF_NEW);
    gt_diff_free(&d);
    /* Only some categories. */
    gt_diff_options o = {GT_DIFF_DEFAULT_THRESHOLD_PCT, 0, GT_CAT_BIT(GT_CAT_SYNC)};
    assert_int_equal(gt_diff_reports(w.in[0], w.in[1], "a", "b", &o, &d), 0);
    assert_int_equal(d.failing, 0);
    assert_int_equal(d.nrows, d.count[GT_DIFF_SAME]);
    assert_true(d.nrows > 0);
    gt_diff_free(&d);
    runs_free(&w);
}

typedef int (*diff_writer)(const gt_diff *d, FILE *out);

static char *write_to_string(const gt_diff *d, diff_writer w)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(w(d, f), 0);
    fclose(f);
    return buf;
}

static int text_changed(const gt_diff *d, FILE *out)
{
    return gt_diff_write_text(d, false, 0, out);
}

static int text_all(const gt_diff *d, FILE *out)
{
    return gt_diff_write_text(d, true, 0, out);
}

static void test_formats(void **unused)
{
    (void)unused;
    runs w;
    runs_build(&w);
    gt_diff d = compare(&w, true, GT_DIFF_DEFAULT_THRESHOLD_PCT, 0);
    char *text = write_to_string(&d, text_changed);
    assert_non_null(strstr(text, "gputrace diff: a.json -> b.json | threshold 5.0%"));
    assert_non_null(strstr(text, "verdict: 2 slower, 3 new, 0 moved, 0 faster, 0 gone"));
    assert_non_null(strstr(text, ": FAIL, 5 rows are slower or new"));
    assert_non_null(strstr(text, "only_in_b(float*)"));
    assert_null(strstr(text, "cuStreamSynchronize")); /* the same: not listed */
    free(text);
    text = write_to_string(&d, text_all);
    assert_non_null(strstr(text, "cuStreamSynchronize"));
    free(text);
    char *json = write_to_string(&d, gt_diff_write_json);
    assert_non_null(strstr(json, "\"failing\": 5"));
    assert_non_null(strstr(json,
                           "\"fails\": true,\n  \"categories\": [\"kernel\", \"memcpy\", "
                           "\"memset\", \"compile\", \"module\", \"sync\", \"nvtx\", \"api\"]"));
    assert_non_null(strstr(json, "\"name\": \"only_in_b(float*)\", \"verdict\": \"new\", "
                                 "\"fails\": true, \"change_pct\": null"));
    free(json);
    char *csv = write_to_string(&d, gt_diff_write_csv);
    assert_int_equal(strncmp(csv, "category,name,verdict,fails,change_pct,", 39), 0);
    size_t lines = 0;
    for (const char *p = csv; (p = strstr(p, "\r\n")); p += 2)
        lines++;
    assert_int_equal(lines, d.nrows + 1);
    free(csv);
    gt_diff_free(&d);
    runs_free(&w);
}

/* A run as a CI gate sees it: kernels and copies on the GPU, launch
 * calls on the host. copies: (direction, host memory, async) rows of
 * `count` copies each of `ns` GPU time. */
typedef struct copy_rows {
    uint8_t dir, host_mem;
    unsigned count;
    uint64_t ns;
} copy_rows;

static gt_report *gate_run(gt_strtab *names, uint64_t kernel_ns, uint64_t launch_ns,
                           const copy_rows *copies, size_t ncopies)
{
    gt_report *r = gt_report_create(NULL, names);
    uint64_t t = 1000000;
    for (int i = 0; i < 20; i++, t += kernel_ns + 1000) {
        gt_event ev = kernel_event(intern(names, "step(double*)"), 1, t, t, t + kernel_ns);
        ev.host_end = ev.host_start + launch_ns;
        ev.api = intern(names, "cuLaunchKernel");
        gt_report_add(r, &ev);
        ev = host_event(GT_EV_API, 1, t, t + launch_ns);
        ev.api = intern(names, "cuLaunchKernel");
        gt_report_add(r, &ev);
    }
    for (size_t k = 0; k < ncopies; k++)
        for (unsigned i = 0; i < copies[k].count; i++, t += copies[k].ns + 1000) {
            gt_event ev = host_event(GT_EV_MEMCPY, 1, t, t + copies[k].ns);
            ev.u.copy.dir = copies[k].dir;
            ev.u.copy.host_mem = copies[k].host_mem;
            ev.flags |= GT_EVF_ASYNC;
            ev.bytes = 1 << 20;
            set_gpu(&ev, t, t + copies[k].ns);
            gt_report_add(r, &ev);
        }
    return r;
}

static gt_diff gate(const gt_report *base, const gt_report *next)
{
    gt_diff_options o = {GT_DIFF_DEFAULT_THRESHOLD_PCT, GT_DIFF_MIN_AUTO,
                         GT_DIFF_DEFAULT_CATEGORIES};
    gt_diff d;
    assert_int_equal(gt_diff_reports(base, next, "a", "b", &o, &d), 0);
    return d;
}

/* The defaults: GPU-timed rows and the GPU busy total. Launch calls twice
 * as slow on the host do not fail; a kernel 30% slower does, and the GPU
 * busy time says by how much; rows under 1% of the GPU busy time are noise. */
static void test_gate_defaults(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    const copy_rows copies[] = {{GT_DIR_HTOD, GT_HOST_PINNED, 4, 20000}};
    gt_report *base = gate_run(names, 1000000, 5000, copies, 1);
    gt_report *noisy = gate_run(names, 1000000, 10000, copies, 1);
    gt_diff d = gate(base, noisy);
    assert_false(gt_diff_fails(&d));
    assert_true(d.gpu_compared);
    assert_int_equal(d.opt.min_ns, (20 * 1000000 + 4 * 20000) / 100);
    for (size_t i = 0; i < d.nrows; i++)
        assert_true(d.rows[i].cat == GT_CAT_KERNEL || d.rows[i].cat == GT_CAT_MEMCPY);
    gt_diff_free(&d);

    gt_report *slower = gate_run(names, 1300000, 5000, copies, 1);
    d = gate(base, slower);
    assert_true(gt_diff_fails(&d));
    assert_true(d.gpu_busy_fails);
    assert_int_equal(d.failing, 1);
    assert_int_equal(row_of(&d, GT_CAT_KERNEL, "step(double*)")->verdict, GT_DIFF_SLOWER);
    char *text = write_to_string(&d, text_changed);
    assert_non_null(strstr(text, ": FAIL, 1 row is slower or new, and the GPU busy time grew; "
                                 "GPU busy +29.9%\n"));
    assert_non_null(strstr(text, "| kernel, memcpy, memset\n  GPU busy: "));
    free(text);
    gt_diff_free(&d);

    /* a copy row 20% slower, but under 1% of the GPU's time: noise-sized */
    const copy_rows slow_copies[] = {{GT_DIR_HTOD, GT_HOST_PINNED, 4, 24000}};
    gt_report *small = gate_run(names, 1000000, 5000, slow_copies, 1);
    d = gate(base, small);
    assert_false(gt_diff_fails(&d));
    assert_int_equal(row_of(&d, GT_CAT_MEMCPY, "HtoD pinned async")->verdict, GT_DIFF_SLOWER);
    assert_false(row_of(&d, GT_CAT_MEMCPY, "HtoD pinned async")->fails);
    gt_diff_free(&d);
    gt_report_destroy(small);
    gt_report_destroy(slower);
    gt_report_destroy(noisy);
    gt_report_destroy(base);
    gt_strtab_destroy(names);
}

/* The tool's own advice applied: pageable copies pinned, twice as many
 * in pieces, in a fraction of the time. The pinned row is new and larger,
 * but it took over the pageable row's work: moved, and the gate passes. */
static void test_gate_moved_work(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    const copy_rows pageable[] = {{GT_DIR_DTOH, GT_HOST_PAGEABLE, 8, 2000000},
                                  {GT_DIR_HTOD, GT_HOST_PINNED, 4, 50000}};
    const copy_rows pinned[] = {{GT_DIR_DTOH, GT_HOST_PINNED, 16, 100000},
                                {GT_DIR_HTOD, GT_HOST_PINNED, 8, 50000}};
    gt_report *base = gate_run(names, 1000000, 5000, pageable, 2);
    gt_report *next = gate_run(names, 1000000, 5000, pinned, 2);
    gt_diff d = gate(base, next);
    assert_false(gt_diff_fails(&d));
    assert_int_equal(row_of(&d, GT_CAT_MEMCPY, "DtoH pinned async")->verdict, GT_DIFF_MOVED);
    assert_int_equal(row_of(&d, GT_CAT_MEMCPY, "HtoD pinned async")->verdict, GT_DIFF_MOVED);
    assert_int_equal(row_of(&d, GT_CAT_MEMCPY, "DtoH pageable async")->verdict, GT_DIFF_GONE);
    assert_int_equal(d.count[GT_DIFF_MOVED], 2);
    char *text = write_to_string(&d, text_changed);
    assert_non_null(strstr(text, ": pass, nothing slower; GPU busy -"));
    assert_non_null(strstr(text, "\nmoved: grew or appeared while other rows"));
    free(text);
    gt_diff_free(&d);
    /* the other way: the pinned rows went, the pageable row that took
     * their work grew the table's total: slower, not moved */
    d = gate(next, base);
    assert_true(gt_diff_fails(&d));
    assert_int_equal(row_of(&d, GT_CAT_MEMCPY, "DtoH pageable async")->verdict, GT_DIFF_NEW);
    gt_diff_free(&d);
    gt_report_destroy(next);
    gt_report_destroy(base);
    gt_strtab_destroy(names);
}

/* The mark row of d named `name`, or NULL. */
static const gt_diff_row *mark_of(const gt_diff *d, const char *name)
{
    for (size_t i = 0; i < d->nrows; i++)
        if (d->rows[i].mark && strcmp(d->rows[i].name, name) == 0) return &d->rows[i];
    return NULL;
}

/* NVTX marks matched by domain and name: counts before and after, new
 * and gone, never failing; the header compares late and pending work. */
static void test_marks_and_header(void **unused)
{
    (void)unused;
    runs w;
    runs_build(&w);
    uint32_t only = gt_strtab_intern(w.names, "only in b", 9);
    gt_nvtx_mark extra = {.name = only, .count = 4, .first = SAMPLE_START, .last = SAMPLE_END};
    assert_int_equal(gt_nvtx_marks_fold(&w.in[1]->marks, &extra), 0);
    gt_report_set_counts(w.in[1], &(gt_report_counts){.late = 7, .gpu_pending = 2});
    gt_diff d = compare(&w, true, GT_DIFF_DEFAULT_THRESHOLD_PCT, 0);
    const gt_diff_row *chunk = mark_of(&d, "chunk done"),
                      *halved = mark_of(&d, "ode:step size halved");
    assert_non_null(chunk);
    assert_non_null(halved);
    assert_int_equal(chunk->verdict, GT_DIFF_SAME);
    assert_int_equal(chunk->before.calls, chunk->after.calls);
    assert_true(chunk->before.calls > 0);
    const gt_diff_row *b = mark_of(&d, "only in b");
    assert_non_null(b);
    assert_int_equal(b->verdict, GT_DIFF_NEW);
    assert_int_equal(b->after.calls, 4);
    assert_false(b->fails);
    assert_int_equal(d.count[GT_DIFF_NEW], 4);
    assert_int_equal(d.failing, 5); /* as without the mark */
    char *text = write_to_string(&d, text_changed);
    assert_non_null(strstr(text, "\nnvtx_mark: 1 new, 2 same\n"));
    assert_non_null(strstr(text, "| late: 0 -> 7 | GPU pending at exit: 0 -> 2\n"));
    assert_non_null(strstr(text, "NVTX open: "));
    assert_non_null(
        strstr(text, "  new           -       -      -      -       4    -     -  only in b\n"));
    free(text);
    char *json = write_to_string(&d, gt_diff_write_json);
    assert_non_null(strstr(json, "\"category\": \"nvtx_mark\", \"name\": \"only in b\", "
                                 "\"verdict\": \"new\", \"fails\": false"));
    assert_non_null(strstr(json, "\"late_events\": 7, \"gpu_pending_at_exit\": 2"));
    free(json);
    gt_diff_free(&d);
    d = compare(&w, false, GT_DIFF_DEFAULT_THRESHOLD_PCT, 0);
    assert_int_equal(mark_of(&d, "only in b")->verdict, GT_DIFF_GONE);
    gt_diff_free(&d);
    runs_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_differences), cmocka_unit_test(test_threshold_and_min_ns),
        cmocka_unit_test(test_formats),           cmocka_unit_test(test_gate_defaults),
        cmocka_unit_test(test_gate_moved_work),   cmocka_unit_test(test_marks_and_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
