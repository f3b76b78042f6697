/* The CUPTI correlation table (shim/gpu/cupti_table.c): records fold into
 * their call's entry (span the union, untimed and running counted), an
 * entry leaves when its call takes it, an id `slots` later moves an
 * untaken one to the overflow and the next one there pushes it out
 * (counted, and remembered as pushed out), a graph launch's nodes hang off
 * its entry within the bound, and a backlog of sequential ids as large as
 * the table and its overflow stays whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cupti_internal.h"

/* The smallest table: an event buffer whose eighth is under its minimum. */
#define SMALL_BUFFER 1024u

static uint32_t slots;

static int setup(void **state)
{
    (void)state;
    gt_cupti_table_free();
    gt_cupti_table_init(SMALL_BUFFER);
    slots = (uint32_t)gt_cupti_table_slots();
    return 0;
}

static int teardown_group(void **state)
{
    (void)state;
    gt_cupti_table_free();
    return 0;
}

static void test_records_of_one_call_fold_into_its_span(void **state)
{
    (void)state;
    gt_cupti_table_add(7, 1000, 2000, 1, 50, 0);
    gt_cupti_table_add(7, 500, 1500, 2, 60, 0);
    gt_cupti_table_add(7, 1800, 2600, 3, 70, 0);
    const gt_cupti_entry *e = gt_cupti_table_find(7);
    assert_non_null(e);
    assert_int_equal(e->start, 500);
    assert_int_equal(e->end, 2600);
    assert_int_equal(e->records, 3);
    assert_int_equal(e->untimed, 0);
    assert_int_equal(e->device, 1); /* the first record's */
    assert_int_equal(e->updated, 70);
    assert_null(gt_cupti_table_find(8));
    assert_int_equal(gt_cupti_table_count(), 1);
}

static void test_untimed_records_are_counted_and_running_only_when_forced(void **state)
{
    (void)state;
    gt_cupti_table_add(3, 0, 0, 0, 1, 0);
    gt_cupti_table_add(4, 0, 0, 0, 1, 1);
    gt_cupti_table_add(5, 900, 800, 0, 1, 0); /* an end before the start */
    assert_int_equal(gt_cupti_table_find(3)->untimed, 1);
    assert_int_equal(gt_cupti_table_find(3)->running, 0);
    assert_int_equal(gt_cupti_table_find(4)->running, 1);
    assert_int_equal(gt_cupti_table_find(5)->untimed, 1);
    assert_int_equal(gt_cupti_table_find(5)->start, 0);
    gt_cupti_table_add(0, 10, 20, 0, 1, 0); /* id 0 is no call's */
    assert_null(gt_cupti_table_find(0));
    assert_int_equal(gt_cupti_table_count(), 3);
}

static void test_a_taken_entry_leaves_and_its_slot_is_reused(void **state)
{
    (void)state;
    uint64_t evicted = gt_cupti_table_evicted();
    gt_cupti_table_add(11, 10, 20, 0, 1, 0);
    gt_cupti_table_remove(11, NULL);
    assert_null(gt_cupti_table_find(11));
    assert_int_equal(gt_cupti_table_count(), 0);
    assert_false(gt_cupti_table_pushed_out(11));
    gt_cupti_table_add(11 + slots, 30, 40, 0, 1, 0);
    assert_int_equal(gt_cupti_table_find(11 + slots)->start, 30);
    assert_int_equal(gt_cupti_table_evicted(), evicted);
}

/* An id a cycle later moves the untaken entry to the overflow, where it
 * waits for its call (a thread that lost its core with records not yet
 * published); the next entry that needs its overflow slot pushes it out. */
static void test_an_untaken_entry_is_pushed_out_two_id_cycles_later(void **state)
{
    (void)state;
    uint64_t evicted = gt_cupti_table_evicted();
    gt_cupti_table_add(21, 10, 20, 0, 1, 0);
    gt_cupti_table_add(21 + slots, 30, 40, 0, 1, 0);
    assert_int_equal(gt_cupti_table_find(21)->start, 10);
    assert_int_equal(gt_cupti_table_find(21 + slots)->start, 30);
    assert_false(gt_cupti_table_pushed_out(21));
    assert_int_equal(gt_cupti_table_evicted(), evicted);
    assert_int_equal(gt_cupti_table_count(), 2);
    /* A record of the moved entry's call still folds into it. */
    gt_cupti_table_add(21, 5, 25, 0, 1, 0);
    assert_int_equal(gt_cupti_table_find(21)->start, 5);
    assert_int_equal(gt_cupti_table_find(21)->records, 2);
    assert_int_equal(gt_cupti_table_count(), 2);

    gt_cupti_table_add(21 + 2 * slots, 50, 60, 0, 1, 0);
    assert_null(gt_cupti_table_find(21));
    assert_true(gt_cupti_table_pushed_out(21));
    assert_false(gt_cupti_table_pushed_out(21 + slots));
    assert_int_equal(gt_cupti_table_find(21 + slots)->start, 30);
    assert_int_equal(gt_cupti_table_find(21 + 2 * slots)->start, 50);
    assert_int_equal(gt_cupti_table_evicted(), evicted + 1);
    assert_int_equal(gt_cupti_table_count(), 2);
    /* Taking the others keeps the memory of the one pushed out. */
    gt_cupti_table_remove(21 + slots, NULL);
    gt_cupti_table_remove(21 + 2 * slots, NULL);
    assert_int_equal(gt_cupti_table_count(), 0);
    assert_true(gt_cupti_table_pushed_out(21));
}

/* A drain behind by a whole table and its overflow of sequential ids
 * loses none of them; one more id pushes out exactly the oldest. */
static void test_a_backlog_of_sequential_ids_fills_the_table_whole(void **state)
{
    (void)state;
    uint32_t first = 1000, whole = slots + slots / 8;
    uint64_t evicted = gt_cupti_table_evicted();
    for (uint32_t i = 0; i < whole; i++)
        gt_cupti_table_add(first + i, 100 + i, 200 + i, 0, 1, 0);
    assert_int_equal(gt_cupti_table_count(), whole);
    assert_int_equal(gt_cupti_table_evicted(), evicted);
    gt_cupti_table_add(first + whole, 1, 2, 0, 1, 0);
    assert_int_equal(gt_cupti_table_evicted(), evicted + 1);
    assert_true(gt_cupti_table_pushed_out(first));
    assert_null(gt_cupti_table_find(first));
    for (uint32_t i = 1; i <= whole; i++) {
        const gt_cupti_entry *e = gt_cupti_table_find(first + i);
        assert_non_null(e);
        gt_cupti_table_remove(first + i, NULL);
    }
    assert_int_equal(gt_cupti_table_count(), 0);
}

static void test_graph_nodes_follow_their_launch_within_the_bound(void **state)
{
    (void)state;
    gt_cupti_table_add(40, 100, 200, 0, 1, 0);
    for (uint32_t n = 1; n <= 3; n++)
        gt_cupti_table_add_node(40,
                                &(gt_cupti_node){.name = n, .start = 100 * n, .end = 100 * n + 50});
    uint32_t list = 0;
    gt_cupti_table_remove(40, &list);
    assert_null(gt_cupti_table_find(40));
    gt_cupti_node node;
    uint32_t seen = 0;
    while (gt_cupti_table_take_node(&list, &node)) {
        assert_int_equal(node.end - node.start, 50);
        assert_int_equal(node.start, 100 * node.name);
        seen |= 1u << node.name;
    }
    assert_int_equal(seen, 0xe); /* nodes 1, 2 and 3, each once */
    assert_false(gt_cupti_table_take_node(&list, &node));

    /* The store holds `slots` nodes: one more is dropped and counted. */
    uint64_t dropped = gt_cupti_table_nodes_dropped();
    gt_cupti_table_add(41, 100, 200, 0, 1, 0);
    for (uint32_t n = 0; n <= slots; n++)
        gt_cupti_table_add_node(41, &(gt_cupti_node){.name = 1});
    assert_int_equal(gt_cupti_table_nodes_dropped(), dropped + 1);
    /* Removed without a list, its nodes go back to the store. */
    gt_cupti_table_remove(41, NULL);
    gt_cupti_table_add(42, 100, 200, 0, 1, 0);
    gt_cupti_table_add_node(42, &(gt_cupti_node){.name = 9});
    assert_int_equal(gt_cupti_table_nodes_dropped(), dropped + 1);
}

static void test_the_bound_follows_the_event_buffers(void **state)
{
    (void)state;
    gt_cupti_table_free();
    gt_cupti_table_init((size_t)64 << 20);
    size_t big = gt_cupti_table_slots();
    assert_true(big > slots);
    assert_true((big & (big - 1)) == 0);
    /* An eighth of the buffers at most, the overflow and nodes included. */
    assert_true(big * (sizeof(gt_cupti_entry) + sizeof(gt_cupti_node)) +
                    big / 8 * sizeof(gt_cupti_entry) <=
                ((size_t)64 << 20) / 8);
    assert_int_equal(big, 65536); /* the bound the documentation gives */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_records_of_one_call_fold_into_its_span, setup),
        cmocka_unit_test_setup(test_untimed_records_are_counted_and_running_only_when_forced,
                               setup),
        cmocka_unit_test_setup(test_a_taken_entry_leaves_and_its_slot_is_reused, setup),
        cmocka_unit_test_setup(test_an_untaken_entry_is_pushed_out_two_id_cycles_later, setup),
        cmocka_unit_test_setup(test_a_backlog_of_sequential_ids_fills_the_table_whole, setup),
        cmocka_unit_test_setup(test_graph_nodes_follow_their_launch_within_the_bound, setup),
        cmocka_unit_test_setup(test_the_bound_follows_the_event_buffers, setup),
    };
    return cmocka_run_group_tests(tests, NULL, teardown_group);
}
