/* Faults on demand: registered once per fault (CMakeLists.txt), with the
 * fault's variable set and GTEMU_CUPTI_FAULT naming the case to run:
 *   drop        GPUTRACE_EMU_CUPTI_DROP=3: every third record is dropped, counted
 *   zero        GPUTRACE_EMU_CUPTI_ZERO_TIMESTAMPS=2: every second GPU record has none
 *   subscriber  GPUTRACE_EMU_CUPTI_SUBSCRIBER=Nsight Systems: cuptiSubscribe fails
 *   init        GPUTRACE_EMU_CUPTI_INIT_ERROR=insufficient-privileges: every call fails
 *   kinds       GPUTRACE_EMU_CUPTI_FAIL_KINDS=memset,memcpy2: those kinds cannot be enabled
 *   bad         bad values: one warning each, and no fault */
#include "cupti_test.h"

#include <unistd.h>

TEST_CLIENT_DEFINE;

static CUfunction quick, busy;

static int setup(void **state)
{
    if (setup_primary(state) != 0) return -1;
    quick = load_test_function("quick");
    busy = load_test_function("_Z4busyPfi");
    return 0;
}

static void CUPTIAPI ignore_call(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

/* Launches `n` kernels with kernel records (and API records) on. */
static void launch_traced(CUfunction f, int n)
{
    test_client_start(1 << 20);
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    for (int i = 0; i < n; i++)
        launch1(f, NULL);
    ok_cu(cuCtxSynchronize());
    test_flush();
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER));
}

static void test_every_third_record_dropped(void **state)
{
    (void)state;
    launch_traced(quick, 6); /* 12 records: 6 API, 6 kernels */
    struct test_record r[12];
    size_t kept = test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, r, 12) +
                  test_records(CUPTI_ACTIVITY_KIND_DRIVER, r, 12);
    size_t dropped = 0;
    ok_cupti(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped));
    assert_int_equal(kept, 8);
    assert_int_equal(dropped, 4);
}

static void test_every_second_gpu_record_without_timestamps(void **state)
{
    (void)state;
    launch_traced(busy, 4);
    struct test_record k[4], api[4];
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k, 4), 4);
    for (int i = 0; i < 4; i++) {
        const CUpti_ActivityKernel10 *r = &k[i].r.kernel;
        if (i % 2 == 1)
            assert_true(r->start == 0 && r->end == 0);
        else
            assert_int_equal(r->end - r->start, 2000000);
    }
    /* API records keep theirs. */
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_DRIVER, api, 4), 4);
    for (int i = 0; i < 4; i++)
        assert_true(api[i].r.api.start != 0);
}

static void test_another_subscriber(void **state)
{
    (void)state;
    CUpti_SubscriberHandle sub;
    expect_cupti(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                 cuptiSubscribe(&sub, ignore_call, NULL));
    char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
    CUpti_SubscriberParams params = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
                                     .oldSubscriberName = old,
                                     .oldSubscriberSize = sizeof old};
    expect_cupti(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                 cuptiSubscribe_v2(&sub, ignore_call, NULL, &params));
    assert_string_equal(old, "Nsight Systems");
}

static void test_initialisation_fails(void **state)
{
    (void)state;
    const CUptiResult fault = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
    CUpti_SubscriberHandle sub;
    uint32_t id;
    size_t dropped;
    CUpti_Activity *rec = NULL;
    uint8_t buffer[64] = {0};
    expect_cupti(fault, cuptiSubscribe(&sub, ignore_call, NULL));
    expect_cupti(fault, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    expect_cupti(fault,
                 cuptiActivityRegisterCallbacks(test_buffer_requested, test_buffer_completed));
    expect_cupti(fault, cuptiActivityFlushAll(0));
    expect_cupti(fault, cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped));
    expect_cupti(fault, cuptiActivityGetNextRecord(buffer, sizeof buffer, &rec));
    expect_cupti(
        fault, cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 1));
    expect_cupti(fault, cuptiGetContextId(*(CUcontext *)state, &id));
    expect_cupti(fault, cuptiFinalize());
    /* What needs no initialisation still answers; CUDA works untraced. */
    uint32_t version;
    uint64_t now;
    const char *name;
    ok_cupti(cuptiGetVersion(&version));
    ok_cupti(cuptiGetTimestamp(&now));
    ok_cupti(cuptiGetResultString(fault, &name));
    launch1(quick, NULL);
    ok_cu(cuCtxSynchronize());
}

static void test_kinds_that_cannot_be_enabled(void **state)
{
    (void)state;
    expect_cupti(CUPTI_ERROR_NOT_COMPATIBLE, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
    expect_cupti(CUPTI_ERROR_NOT_COMPATIBLE, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2));
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY));
}

/* Reading the settings printed exactly one warning for each bad value, and
 * no fault is on. */
static void test_bad_values_warn_once(void **state)
{
    (void)state;
    FILE *err = tmpfile();
    int saved = dup(2);
    assert_true(err && saved >= 0);
    fflush(stderr);
    dup2(fileno(err), 2);
    CUpti_SubscriberHandle sub;
    CUptiResult subscribed = cuptiSubscribe(&sub, ignore_call, NULL);
    CUptiResult enabled = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[2048];
    rewind(err);
    text[fread(text, 1, sizeof text - 1, err)] = '\0';
    fclose(err);
    assert_string_equal(
        text,
        "gputrace-emu: warning: GPUTRACE_EMU_CUPTI_INIT_ERROR='nope' ignored: expected "
        "not-initialized, insufficient-privileges, not-supported or unknown\n"
        "gputrace-emu: warning: GPUTRACE_EMU_CUPTI_DROP='x' ignored: expected a whole number "
        "from 1 (every Nth record)\n"
        "gputrace-emu: warning: GPUTRACE_EMU_CUPTI_ZERO_TIMESTAMPS='0' ignored: expected a whole "
        "number from 1 (every Nth record)\n"
        "gputrace-emu: warning: GPUTRACE_EMU_CUPTI_SUBSCRIBER='' ignored: expected the name of the "
        "other subscriber\n"
        "gputrace-emu: warning: GPUTRACE_EMU_CUPTI_FAIL_KINDS='memset,bogus' ignored: expected a "
        "comma list of memcpy, memcpy2, memset, kernel, concurrent_kernel, driver, runtime, "
        "external_correlation, graph_trace\n");
    expect_cupti(CUPTI_SUCCESS, subscribed);
    expect_cupti(CUPTI_SUCCESS, enabled);
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET));
    ok_cupti(cuptiUnsubscribe(sub));
    launch_traced(busy, 3);
    struct test_record k[3];
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k, 3), 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(k[i].r.kernel.end - k[i].r.kernel.start, 2000000);
}

int main(void)
{
    const char *fault = getenv("GTEMU_CUPTI_FAULT");
    const struct {
        const char *fault;
        struct CMUnitTest test;
    } cases[] = {
        {"drop", cmocka_unit_test(test_every_third_record_dropped)},
        {"zero", cmocka_unit_test(test_every_second_gpu_record_without_timestamps)},
        {"subscriber", cmocka_unit_test(test_another_subscriber)},
        {"init", cmocka_unit_test(test_initialisation_fails)},
        {"kinds", cmocka_unit_test(test_kinds_that_cannot_be_enabled)},
        {"bad", cmocka_unit_test(test_bad_values_warn_once)},
    };
    for (size_t i = 0; fault && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(fault, cases[i].fault)) {
            const struct CMUnitTest tests[] = {cases[i].test};
            return cmocka_run_group_tests(tests, setup, teardown_primary);
        }
    fprintf(stderr, "GTEMU_CUPTI_FAULT names no case\n");
    return 2;
}
