/* Interned strings: ids are stable and shared, lookups need no lock and
 * run while other threads intern. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "strtab.h"

static uint32_t intern(gt_strtab *t, const char *s)
{
    return gt_strtab_intern(t, s, strlen(s));
}

static void test_ids(void **unused)
{
    (void)unused;
    gt_strtab *t = gt_strtab_create();
    assert_non_null(t);
    assert_string_equal(gt_strtab_get(t, 0), "");
    assert_int_equal(gt_strtab_intern(t, "", 0), 0);
    uint32_t a = intern(t, "cuLaunchKernel");
    uint32_t b = intern(t, "cuMemcpyHtoD_v2");
    assert_int_not_equal(a, 0);
    assert_int_not_equal(a, b);
    assert_int_equal(intern(t, "cuLaunchKernel"), a);
    /* Only len bytes count: a prefix is its own string. */
    uint32_t prefix = gt_strtab_intern(t, "cuLaunchKernel_ptsz", 14);
    assert_int_equal(prefix, a);
    assert_string_equal(gt_strtab_get(t, a), "cuLaunchKernel");
    assert_string_equal(gt_strtab_get(t, b), "cuMemcpyHtoD_v2");
    assert_string_equal(gt_strtab_get(t, 999999), "");
    assert_string_equal(gt_strtab_get(t, UINT32_MAX), "");
    assert_string_equal(gt_strtab_get(NULL, a), "");
    gt_strtab_destroy(t);
}

/* Enough strings to cross several id segments and share buckets. */
static void test_many_strings(void **unused)
{
    (void)unused;
    enum { N = 20000 };
    static uint32_t ids[N];
    gt_strtab *t = gt_strtab_create();
    char buf[64];
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "kernel_%d<float>", i);
        ids[i] = intern(t, buf);
        assert_int_not_equal(ids[i], 0);
    }
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "kernel_%d<float>", i);
        assert_string_equal(gt_strtab_get(t, ids[i]), buf);
        assert_int_equal(intern(t, buf), ids[i]);
    }
    gt_strtab_destroy(t);
}

enum { THREADS = 4, SHARED = 3000, OWN = 1000 };

typedef struct worker {
    gt_strtab *t;
    int index;
    uint32_t shared_ids[SHARED];
    int bad_lookups;
} worker;

/* Each thread interns the shared names in its own order, its own names,
 * and reads back every id it got, while the others are interning. */
static void *intern_concurrently(void *arg)
{
    worker *w = arg;
    char buf[64];
    for (int k = 0; k < SHARED; k++) {
        int i = (k * 7 + w->index * 997) % SHARED;
        snprintf(buf, sizeof(buf), "shared::name_%d", i);
        w->shared_ids[i] = intern(w->t, buf);
        if (strcmp(gt_strtab_get(w->t, w->shared_ids[i]), buf) != 0) w->bad_lookups++;
        snprintf(buf, sizeof(buf), "own_%d_%d", w->index, k % OWN);
        uint32_t own = intern(w->t, buf);
        if (own == 0 || strcmp(gt_strtab_get(w->t, own), buf) != 0) w->bad_lookups++;
    }
    return NULL;
}

static void test_concurrent_intern_and_get(void **unused)
{
    (void)unused;
    static worker workers[THREADS];
    gt_strtab *t = gt_strtab_create();
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (worker){.t = t, .index = i};
        assert_int_equal(pthread_create(&threads[i], NULL, intern_concurrently, &workers[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    char buf[64];
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(workers[i].bad_lookups, 0);
        for (int s = 0; s < SHARED; s++) {
            assert_int_not_equal(workers[i].shared_ids[s], 0);
            /* every thread got the same id for the same string */
            assert_int_equal(workers[i].shared_ids[s], workers[0].shared_ids[s]);
        }
    }
    for (int s = 0; s < SHARED; s++) {
        snprintf(buf, sizeof(buf), "shared::name_%d", s);
        assert_string_equal(gt_strtab_get(t, workers[0].shared_ids[s]), buf);
    }
    gt_strtab_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_many_strings),
        cmocka_unit_test(test_concurrent_intern_and_get),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
