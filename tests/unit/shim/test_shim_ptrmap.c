/* The lock-free pointer map behind the kernel-name and cuGetProcAddress
 * caches: every stored key reads back its latest value, absent keys read
 * 0, a full probe window refuses instead of overwriting, and threads that
 * race to add the same keys agree on one slot per key. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ptrmap.h"

GT_PTRMAP_DEFINE(small, 6);   /* 64 slots */
GT_PTRMAP_DEFINE(shared, 12); /* 4096 slots */

#define THREADS 4
#define KEYS 1500

static void test_values_read_back(void **state)
{
    (void)state;
    for (uint64_t k = 1; k <= 20; k++)
        assert_int_equal(gt_ptrmap_put(&small, k * 64, k * 10), 0);
    for (uint64_t k = 1; k <= 20; k++)
        assert_int_equal(gt_ptrmap_get(&small, k * 64), k * 10);
    assert_int_equal(gt_ptrmap_put(&small, 5 * 64, 99), 0);
    assert_int_equal(gt_ptrmap_get(&small, 5 * 64), 99);
    assert_int_equal(gt_ptrmap_get(&small, 21 * 64), 0);
}

static void test_full_window_refuses(void **state)
{
    (void)state;
    GT_PTRMAP_DEFINE(tiny, 5); /* 32 slots: exactly one probe window */
    for (uint64_t k = 1; k <= 32; k++)
        assert_int_equal(gt_ptrmap_put(&tiny, k << 8, k), 0);
    assert_int_equal(gt_ptrmap_put(&tiny, 33u << 8, 33), -1);
    assert_int_equal(gt_ptrmap_get(&tiny, 33u << 8), 0);
    for (uint64_t k = 1; k <= 32; k++)
        assert_int_equal(gt_ptrmap_get(&tiny, k << 8), k);
}

/* Every thread adds every key with a value naming the key. */
static void *add_all(void *arg)
{
    (void)arg;
    for (uint64_t k = 1; k <= KEYS; k++)
        gt_ptrmap_put(&shared, k * 48, k * 3);
    return NULL;
}

static void test_racing_writers_agree(void **state)
{
    (void)state;
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, add_all, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    size_t used = 0;
    for (size_t i = 0; i <= shared.mask; i++)
        used += atomic_load(&shared.slots[i].key) != 0;
    assert_int_equal(used, KEYS);
    for (uint64_t k = 1; k <= KEYS; k++)
        assert_int_equal(gt_ptrmap_get(&shared, k * 48), k * 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_read_back),
        cmocka_unit_test(test_full_window_refuses),
        cmocka_unit_test(test_racing_writers_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
