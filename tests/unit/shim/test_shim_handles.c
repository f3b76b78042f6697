/* The handle tables behind the compile and VMM records: every key reads
 * back its info after growth and after removals in between (the shifted
 * entries are still found), edits create or remove entries, and keys are
 * found by range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "handles.h"

#define KEYS 5000u

/* Handles are pointers: aligned, so the low bits carry nothing. */
static uint64_t key_of(uint32_t i)
{
    return 0x7f0000000000ull + (uint64_t)i * 64;
}

static void test_put_get_take(void **state)
{
    (void)state;
    gt_handle_table t = {0};
    gt_handle_info info;
    assert_int_equal(gt_handle_get(&t, key_of(1), &info), 0);
    for (uint32_t i = 0; i < KEYS; i++) {
        gt_handle_info v = {.bytes = i, .count = i * 2};
        assert_int_equal(gt_handle_put(&t, key_of(i), &v), 0);
    }
    assert_int_equal(gt_handle_put(&t, 0, &info), -1); /* 0 is no handle */
    assert_int_equal(t.count, KEYS);
    for (uint32_t i = 0; i < KEYS; i += 3)
        assert_int_equal(gt_handle_take(&t, key_of(i), &info), 1);
    for (uint32_t i = 0; i < KEYS; i++) {
        int present = gt_handle_get(&t, key_of(i), &info);
        assert_int_equal(present, i % 3 != 0);
        if (present) {
            assert_int_equal(info.bytes, i);
            assert_int_equal(info.count, i * 2);
        } else {
            assert_int_equal(info.bytes, 0);
        }
    }
    assert_int_equal(gt_handle_take(&t, key_of(0), &info), 0);
    gt_handle_table_free(&t);
    assert_int_equal(gt_handle_get(&t, key_of(1), &info), 0);
}

static int add_one(gt_handle_info *info, void *ctx)
{
    (void)ctx;
    info->count++;
    return info->count < 3; /* the third edit removes the entry */
}

static void test_edit(void **state)
{
    (void)state;
    gt_handle_table t = {0};
    gt_handle_info info;
    assert_int_equal(gt_handle_edit(&t, key_of(7), 0, add_one, NULL), 0); /* absent, not made */
    assert_int_equal(gt_handle_get(&t, key_of(7), &info), 0);
    assert_int_equal(gt_handle_edit(&t, key_of(7), 1, add_one, NULL), 1);
    assert_int_equal(gt_handle_edit(&t, key_of(7), 0, add_one, NULL), 1);
    assert_int_equal(gt_handle_get(&t, key_of(7), &info), 1);
    assert_int_equal(info.count, 2);
    assert_int_equal(gt_handle_edit(&t, key_of(7), 0, add_one, NULL), 1);
    assert_int_equal(gt_handle_get(&t, key_of(7), &info), 0);
    gt_handle_table_free(&t);
}

static void test_keys_in_range(void **state)
{
    (void)state;
    gt_handle_table t = {0};
    gt_handle_info v = {0};
    for (uint32_t i = 0; i < 100; i++)
        assert_int_equal(gt_handle_put(&t, key_of(i), &v), 0);
    uint64_t keys[100];
    size_t n = gt_handle_keys_in(&t, key_of(10), key_of(20), keys, 100);
    assert_int_equal(n, 10);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(keys[i] >= key_of(10) && keys[i] < key_of(20));
        sum += keys[i];
    }
    assert_int_equal(sum, 10 * key_of(10) + 45 * 64);
    assert_int_equal(gt_handle_keys_in(&t, key_of(10), key_of(20), keys, 4), 4);
    gt_handle_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_take),
        cmocka_unit_test(test_edit),
        cmocka_unit_test(test_keys_in_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
