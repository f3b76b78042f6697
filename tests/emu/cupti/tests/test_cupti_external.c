/* External correlation: a stack of ids per thread and kind; each API record
 * made inside a region is preceded by one external correlation record per
 * kind with a region open, carrying the API record's correlation id. */
#include "cupti_test.h"

TEST_CLIENT_DEFINE;

static CUfunction quick;

static int setup(void **state)
{
    if (setup_primary(state) != 0) return -1;
    quick = load_test_function("quick");
    return 0;
}

static void *push_elsewhere(void *unused)
{
    (void)unused;
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 555);
    return NULL;
}

static void test_records_precede_api_records(void **state)
{
    (void)state;
    test_client_start(1 << 20);
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    /* Another thread's regions are its own. */
    pthread_t other;
    assert_int_equal(pthread_create(&other, NULL, push_elsewhere, NULL), 0);
    assert_int_equal(pthread_join(other, NULL), 0);

    uint64_t last = 0;
    ok_cupti(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 100));
    launch1(quick, NULL);
    ok_cupti(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 7));
    ok_cupti(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 101));
    launch1(quick, NULL);
    ok_cupti(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last));
    assert_int_equal(last, 101);
    launch1(quick, NULL);
    ok_cupti(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last));
    assert_int_equal(last, 7);
    ok_cupti(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, NULL));
    launch1(quick, NULL);
    ok_cu(cuCtxSynchronize());
    test_flush();
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER));

    /* In delivery order: (kind, external id) before each API record. */
    const struct {
        int api;                            /* the API record, 1-4 */
        CUpti_ExternalCorrelationKind kind; /* INVALID: the API record itself */
        uint64_t id;
    } expected[] = {
        {1, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 100},
        {1, CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 0},
        {2, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 101},
        {2, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 7},
        {2, CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 0},
        {3, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 100},
        {3, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 7},
        {3, CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 0},
        {4, CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 0},
    };
    size_t n = sizeof expected / sizeof expected[0];
    pthread_mutex_lock(&test_client.lock);
    assert_int_equal(test_client.count, n);
    for (size_t i = 0; i < n; i++) {
        const struct test_record *r = &test_client.records[i];
        /* The API record's id, which its external records carry. */
        size_t api_at = i;
        while (test_client.records[api_at].r.base.kind != CUPTI_ACTIVITY_KIND_DRIVER)
            api_at++;
        uint32_t id = test_client.records[api_at].r.api.correlationId;
        if (expected[i].kind == CUPTI_EXTERNAL_CORRELATION_KIND_INVALID) {
            assert_int_equal(r->r.base.kind, CUPTI_ACTIVITY_KIND_DRIVER);
            continue;
        }
        assert_int_equal(r->r.base.kind, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
        assert_int_equal(r->r.external.externalKind, expected[i].kind);
        assert_int_equal(r->r.external.externalId, expected[i].id);
        assert_int_equal(r->r.external.correlationId, id);
        assert_true(id != 0);
    }
    pthread_mutex_unlock(&test_client.lock);
}

static void test_stack_rules(void **state)
{
    (void)state;
    uint64_t id;
    expect_cupti(CUPTI_ERROR_QUEUE_EMPTY, cuptiActivityPopExternalCorrelationId(
                                              CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN, &id));
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER, cuptiActivityPushExternalCorrelationId(
                                                    CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 1));
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER,
                 cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_SIZE, 1));
    /* Deep regions. */
    for (uint64_t i = 0; i < 1000; i++)
        ok_cupti(
            cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC, i));
    for (uint64_t i = 1000; i-- > 0;) {
        ok_cupti(
            cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC, &id));
        assert_int_equal(id, i);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_precede_api_records),
        cmocka_unit_test(test_stack_rules),
    };
    return cmocka_run_group_tests(tests, setup, teardown_primary);
}
