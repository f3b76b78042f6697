/* The CUPTI reference recorder's accounting: work outside graphs, graph
 * nodes counted once as calls, graph launch spans (with and without
 * correlation ids), records without timestamps, and the JSON output. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cupti_totals.h"

static ref_work direct(uint64_t bytes, uint64_t start, uint64_t end)
{
    return (ref_work){.bytes = bytes, .start = start, .end = end};
}

static ref_work node(uint64_t bytes, uint64_t start, uint64_t end, uint64_t node_id,
                     uint32_t launch)
{
    return (ref_work){.bytes = bytes,
                      .start = start,
                      .end = end,
                      .graph_id = 7,
                      .node_id = node_id,
                      .correlation_id = launch};
}

static void test_direct_work_is_counted_with_its_time(void **state)
{
    (void)state;
    ref_totals t = {0};
    ref_work a = direct(0, 1000, 1500), b = direct(0, 2000, 2700), c = direct(0, 3000, 3100);
    ref_add_work(&t, &t.kernels, "apps::scale(float*, float, int)", &a);
    ref_add_work(&t, &t.kernels, "apps::scale(float*, float, int)", &b);
    ref_add_work(&t, &t.kernels, "vec_add", &c);
    assert_int_equal(t.kernels.count, 2);
    assert_string_equal(t.kernels.rows[0].key, "apps::scale(float*, float, int)");
    assert_int_equal(t.kernels.rows[0].calls, 2);
    assert_int_equal(t.kernels.rows[0].gpu_ns, 500 + 700);
    assert_int_equal(t.kernels.rows[1].calls, 1);
    assert_int_equal(t.kernels.rows[1].gpu_ns, 100);
    assert_int_equal(t.graph_launches.count, 0);
    ref_totals_free(&t);
}

/* A graph of one kernel and one copy launched three times: the kernel and
 * the copy are one call each (as their capture was), their bytes counted
 * once, and each launch's span runs from its first node's start to its last
 * node's end. */
static void test_graph_nodes_count_once_and_launches_span_their_nodes(void **state)
{
    (void)state;
    ref_totals t = {0};
    for (uint32_t launch = 0; launch < 3; launch++) {
        uint64_t base = 10000 * (launch + 1);
        ref_work k = node(0, base, base + 400, 11, 100 + launch);
        ref_work m = node(4096, base + 450, base + 900, 12, 100 + launch);
        ref_add_work(&t, &t.kernels, "step(float*, int)", &k);
        ref_add_work(&t, &t.copies, "DtoD/none/1", &m);
    }
    ref_work outside = direct(4096, 50000, 50300);
    ref_add_work(&t, &t.copies, "DtoD/none/1", &outside);

    const ref_row *k = &t.kernels.rows[0];
    assert_int_equal(k->calls, 1);
    assert_int_equal(k->graph_nodes, 1);
    assert_int_equal(k->graph_runs, 3);
    assert_int_equal(k->gpu_ns, 0);
    assert_int_equal(k->graph_gpu_ns, 3 * 400);
    const ref_row *m = &t.copies.rows[0];
    assert_int_equal(m->calls, 2);
    assert_int_equal(m->bytes, 2 * 4096);
    assert_int_equal(m->gpu_ns, 300);
    assert_int_equal(m->graph_runs, 3);
    assert_int_equal(t.graph_launches.count, 3);
    assert_int_equal(ref_spans_total_ns(&t.graph_launches), 3 * 900);
    ref_totals_free(&t);
}

/* Records without timestamps (start and end 0) are calls, counted untimed,
 * and widen no span: a graph launch keeps the span of its timed nodes. */
static void test_untimed_records_count_in_no_time(void **state)
{
    (void)state;
    ref_totals t = {0};
    ref_work direct_untimed = direct(64, 0, 0), direct_timed = direct(64, 1000, 1300);
    ref_add_work(&t, &t.copies, "HtoD/pinned/1", &direct_untimed);
    ref_add_work(&t, &t.copies, "HtoD/pinned/1", &direct_timed);
    for (uint32_t launch = 0; launch < 2; launch++) {
        uint64_t base = 1000000000000ULL * (launch + 1);
        ref_work first = node(0, 0, 0, 21, 40 + launch);
        ref_work second = node(0, base + 500, base + 800, 22, 40 + launch);
        ref_add_work(&t, &t.kernels, "k", &first);
        ref_add_work(&t, &t.kernels, "k", &second);
    }
    /* A launch all of whose nodes are untimed still counts, in no time. */
    ref_work alone = node(0, 0, 0, 21, 99);
    ref_add_work(&t, &t.kernels, "k", &alone);
    const ref_row *c = &t.copies.rows[0], *k = &t.kernels.rows[0];
    assert_int_equal(c->calls, 2);
    assert_int_equal(c->bytes, 128);
    assert_int_equal(c->gpu_ns, 300);
    assert_int_equal(c->untimed, 1);
    assert_int_equal(k->untimed, 3);
    assert_int_equal(k->graph_runs, 5);
    assert_int_equal(k->graph_gpu_ns, 2 * 300);
    assert_int_equal(t.untimed, 4);
    assert_int_equal(ref_graph_launches(&t), 3);
    assert_int_equal(ref_graph_launch_ns(&t), 2 * 300);
    ref_totals_free(&t);
}

/* Without correlation ids, the nth run of each node is the nth launch: the
 * launches stay apart, and so do two graphs. */
static void test_launches_without_correlation_ids_stay_apart(void **state)
{
    (void)state;
    ref_totals t = {0};
    for (uint32_t launch = 0; launch < 4; launch++) {
        uint64_t base = 10000 * (launch + 1);
        ref_work a = node(0, base, base + 100, 31, 0), b = node(0, base + 100, base + 250, 32, 0);
        ref_work other = node(0, base + 5000, base + 5010, 41, 0);
        other.graph_id = 8;
        ref_add_work(&t, &t.kernels, "a", &a);
        ref_add_work(&t, &t.kernels, "b", &b);
        ref_add_work(&t, &t.kernels, "other", &other);
    }
    assert_int_equal(ref_graph_launches(&t), 4 + 4);
    assert_int_equal(ref_graph_launch_ns(&t), 4 * 250 + 4 * 10);
    assert_int_equal(t.kernels.rows[0].calls, 1);
    ref_totals_free(&t);
}

static void test_spans_grow_and_keep_every_id(void **state)
{
    (void)state;
    ref_spans s = {0};
    int added;
    for (uint64_t id = 1; id <= 5000; id++) {
        ref_span_widen(ref_spans_get(&s, id, &added), id, id + 10);
        assert_int_equal(added, 1);
    }
    for (uint64_t id = 1; id <= 5000; id++) {
        ref_span_widen(ref_spans_get(&s, id, &added), id + 5, id + 20);
        assert_int_equal(added, 0);
    }
    assert_int_equal(s.count, 5000);
    assert_int_equal(ref_spans_total_ns(&s), 5000 * 20);
    free(s.slots);
}

static void test_table_grows_past_its_first_allocation(void **state)
{
    (void)state;
    ref_table t = {0};
    char key[32];
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof key, "kernel_%d", i);
        ref_row *r = ref_table_row(&t, key);
        assert_non_null(r);
        r->calls = (uint64_t)i;
    }
    assert_int_equal(t.count, 300);
    assert_int_equal(ref_table_row(&t, "kernel_123")->calls, 123);
    assert_int_equal(t.count, 300);
    ref_totals totals = {.kernels = t};
    ref_totals_free(&totals);
}

static void test_json_names_every_total(void **state)
{
    (void)state;
    ref_totals t = {0};
    ref_work k = direct(0, 0, 250), m = direct(64, 0, 30), z = direct(128, 0, 20);
    ref_work g = node(0, 1000, 1600, 5, 9);
    ref_add_work(&t, &t.kernels, "ns::k<\"q\">\\", &k);
    ref_add_work(&t, &t.kernels, "ns::k<\"q\">\\", &g);
    ref_add_work(&t, &t.copies, "HtoD/pinned/1", &m);
    ref_add_work(&t, &t.memsets, "0", &z);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    ref_write_json(f, &t, 2, NULL);
    fclose(f);
    assert_non_null(strstr(text, "\"dropped\": 2, \"untimed\": 0,\n"));
    assert_null(strstr(text, "\"error\""));
    assert_non_null(strstr(text,
                           "{\"name\": \"ns::k<\\\"q\\\">\\\\\", \"calls\": 2, \"gpu_ns\": 250, "
                           "\"graph_nodes\": 1, \"graph_runs\": 1, \"graph_gpu_ns\": 600, "
                           "\"untimed\": 0}"));
    assert_non_null(strstr(text, "{\"direction\": \"HtoD\", \"host_memory\": \"pinned\", "
                                 "\"async\": true, \"calls\": 1, \"bytes\": 64, \"gpu_ns\": 30, "));
    assert_non_null(
        strstr(text, "{\"async\": false, \"calls\": 1, \"bytes\": 128, \"gpu_ns\": 20, "));
    assert_non_null(strstr(text, "\"graphs\": {\"launches\": 1, \"gpu_ns\": 600}}"));
    free(text);
    ref_totals_free(&t);
}

/* A recorder that stood down says why, with empty tables. */
static void test_json_says_why_nothing_was_recorded(void **state)
{
    (void)state;
    ref_totals t = {0};
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    ref_write_json(f, &t, 0, "another CUPTI subscriber: \"x\"");
    fclose(f);
    assert_string_equal(text, "{\"tool\": \"cupti_ref\", \"dropped\": 0, \"untimed\": 0, "
                              "\"error\": \"another CUPTI subscriber: \\\"x\\\"\",\n"
                              " \"kernels\": [],\n \"memcpy\": [],\n \"memset\": [],\n"
                              " \"graphs\": {\"launches\": 0, \"gpu_ns\": 0}}\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_direct_work_is_counted_with_its_time),
        cmocka_unit_test(test_graph_nodes_count_once_and_launches_span_their_nodes),
        cmocka_unit_test(test_untimed_records_count_in_no_time),
        cmocka_unit_test(test_launches_without_correlation_ids_stay_apart),
        cmocka_unit_test(test_spans_grow_and_keep_every_id),
        cmocka_unit_test(test_table_grows_past_its_first_allocation),
        cmocka_unit_test(test_json_names_every_total),
        cmocka_unit_test(test_json_says_why_nothing_was_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
