/* The report's call sites (report/model/callsite_table.c): a name's
 * sampled calls scaled up to the calls the sampling passed over, so that
 * its sites add up to its calls; allocations followed to their free (bytes,
 * peak, held at the end) and leaks naming their site; a table read back or
 * merged keeps its figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "callsite_json.h"
#include "callsite_table.h"
#include "json_writer.h"
#include "memory_table.h"
#include "report_events.h"

typedef struct fixture {
    gt_strtab *names;
    gt_report *r;
} fixture;

static fixture make(void)
{
    fixture f;
    f.names = gt_strtab_create();
    gt_report_options opt = {
        .categories = GT_CAT_ALL, .verbosity = GT_VERB_DEFAULT, .gpu_timing = GT_GPU_TIMING_EVENTS};
    f.r = gt_report_create(&opt, f.names);
    assert_non_null(f.r);
    return f;
}

static void drop(fixture *f)
{
    gt_report_destroy(f->r);
    gt_strtab_destroy(f->names);
}

/* A native site at file:line in fn, told to the report; its label's id. */
static uint32_t site(fixture *f, const char *fn, int line)
{
    gt_site s = {.language = GT_SITE_NATIVE,
                 .line = line,
                 .file = intern(f->names, "solver.c"),
                 .function = intern(f->names, fn)};
    char label[GT_SITE_LABEL_MAX];
    size_t len = gt_site_label(f->names, &s, label, sizeof label);
    uint32_t id = gt_strtab_intern(f->names, label, len);
    gt_report_add_site(f->r, id, &s);
    return id;
}

static const gt_site_row *row_at(const fixture *f, const char *fn, uint8_t kind)
{
    const gt_site_table *cs = &f->r->callsites;
    for (uint32_t i = 0; i < cs->nrows; i++) {
        const gt_site_row *row = &cs->rows[i];
        if (row->kind == kind && row->site < cs->nsites &&
            !strcmp(gt_strtab_get(f->names, cs->sites[row->site].function), fn))
            return row;
    }
    return NULL;
}

static void launch(fixture *f, uint32_t kernel, uint32_t site_field, uint64_t t)
{
    gt_event ev = kernel_event(kernel, 1, t, t + 10, t + 1010);
    ev.site = site_field;
    gt_report_add(f->r, &ev);
}

static void test_sampled_calls_stand_for_the_skipped(void **state)
{
    (void)state;
    fixture f = make();
    uint32_t k = intern(f.names, "k");
    uint32_t a = site(&f, "first", 10), b = site(&f, "second", 20);
    uint64_t t = 1000;
    for (int i = 0; i < 4; i++, t += 2000)
        launch(&f, k, a, t);
    for (int i = 0; i < 2; i++, t += 2000)
        launch(&f, k, a | GT_SITE_SAMPLED, t);
    for (int i = 0; i < 6; i++, t += 2000)
        launch(&f, k, b | GT_SITE_SAMPLED, t);
    for (int i = 0; i < 24; i++, t += 2000)
        launch(&f, k, GT_SITE_SKIPPED, t);
    gt_report_finish(f.r, t);
    /* 8 sampled calls stand for 32: each counts 4 times. */
    const gt_site_row *first = row_at(&f, "first", GT_EV_KERNEL);
    const gt_site_row *second = row_at(&f, "second", GT_EV_KERNEL);
    assert_non_null(first);
    assert_non_null(second);
    assert_int_equal(first->calls, 4 + 2 * 4);
    assert_int_equal(first->gpu_ns, 1000 * (4 + 2 * 4));
    assert_int_equal(first->samples, 2);
    assert_int_equal(second->calls, 6 * 4);
    assert_int_equal(second->gpu_ns, 1000 * 6 * 4);
    assert_int_equal(second->samples, 6);
    size_t n;
    const gt_site_row **sorted = gt_callsites_sorted(&f.r->callsites, f.names, &n);
    assert_int_equal(n, 2);
    assert_ptr_equal(sorted[0], second); /* the most GPU time first */
    free(sorted);
    drop(&f);
}

static void alloc(fixture *f, uint32_t site_field, uint64_t addr, uint64_t bytes, uint64_t t)
{
    gt_event ev = mem_event(GT_EV_ALLOC, 1, t, addr, bytes, GT_MEM_DEVICE, 0);
    ev.site = site_field;
    gt_report_add(f->r, &ev);
}

static void test_allocations_are_followed_to_their_free(void **state)
{
    (void)state;
    fixture f = make();
    uint32_t c = site(&f, "grow", 30), d = site(&f, "scratch", 40);
    alloc(&f, c, 0x1000, 100, 10);
    alloc(&f, c, 0x2000, 200, 20);
    gt_event free_ev = mem_event(GT_EV_FREE, 1, 30, 0x1000, 0, GT_MEM_DEVICE, 0);
    gt_report_add(f.r, &free_ev);
    alloc(&f, d, 0x3000, 50, 40);
    gt_report_finish(f.r, 100);
    const gt_site_row *grow = row_at(&f, "grow", GT_EV_ALLOC);
    const gt_site_row *scratch = row_at(&f, "scratch", GT_EV_ALLOC);
    assert_non_null(grow);
    assert_non_null(scratch);
    assert_int_equal(grow->calls, 2);
    assert_int_equal(grow->bytes, 300);
    assert_int_equal(grow->peak_bytes, 300);
    assert_int_equal(grow->held_bytes, 200);
    assert_int_equal(grow->held_allocs, 1);
    assert_int_equal(scratch->held_bytes, 50);
    gt_mem_leak leaks[4];
    size_t n = gt_memory_largest_leaks(&f.r->memory, 0, leaks, 4);
    assert_int_equal(n, 2);
    assert_int_equal(leaks[0].bytes, 200);
    assert_int_equal(leaks[0].site, c);
    assert_int_equal(leaks[1].site, d);
    drop(&f);
}

static void test_a_merged_table_keeps_its_figures(void **state)
{
    (void)state;
    fixture f = make();
    uint32_t k = intern(f.names, "k");
    uint32_t a = site(&f, "first", 10);
    launch(&f, k, a, 1000);
    launch(&f, k, a, 3000);
    alloc(&f, a, 0x1000, 64, 10);
    gt_report_finish(f.r, 5000);
    gt_site_table merged;
    memset(&merged, 0, sizeof merged);
    assert_int_equal(gt_callsites_merge(&merged, &f.r->callsites), 0);
    assert_int_equal(gt_callsites_merge(&merged, &f.r->callsites), 0);
    gt_callsites_settle(&merged);
    gt_callsites_release(&merged, 1, 64); /* a loaded table's figures are the data */
    assert_int_equal(merged.nsites, 1);
    size_t n;
    const gt_site_row **rows = gt_callsites_sorted(&merged, f.names, &n);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0]->kind, GT_EV_KERNEL);
    assert_int_equal(rows[0]->calls, 4);
    assert_int_equal(rows[0]->gpu_ns, 4000);
    assert_int_equal(rows[1]->kind, GT_EV_ALLOC);
    assert_int_equal(rows[1]->bytes, 128);
    assert_int_equal(rows[1]->held_bytes, 128);
    assert_int_equal(rows[1]->peak_bytes, 128);
    free(rows);
    gt_callsites_free(&merged);
    drop(&f);
}

/* A site the report knows with no row listing it (a checksum's: the
 * copy's own record was not made) is a complete, empty table, not a
 * failed write. */
static void test_a_known_site_without_rows_writes_an_empty_table(void **state)
{
    (void)state;
    fixture f = make();
    site(&f, "read_back", 7);
    assert_int_equal(gt_callsites_listed(&f.r->callsites), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    gt_json w;
    gt_json_init(&w, out);
    gt_json_object_begin(&w, false);
    assert_int_equal(gt_callsites_write_json(&w, f.r), 0);
    gt_json_object_end(&w);
    fclose(out);
    assert_non_null(strstr(text, "\"callsites\": []"));
    free(text);
    drop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampled_calls_stand_for_the_skipped),
        cmocka_unit_test(test_allocations_are_followed_to_their_free),
        cmocka_unit_test(test_a_merged_table_keeps_its_figures),
        cmocka_unit_test(test_a_known_site_without_rows_writes_an_empty_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
