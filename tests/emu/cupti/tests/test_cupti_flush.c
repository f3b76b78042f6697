/* Delivery: a record is delivered once its work is complete; a forced
 * flush delivers incomplete records with zero timestamps; flushed buffers
 * are completed on the flushing thread, full ones on CUPTI's worker thread,
 * empty ones handed back by a forced flush;
 * the client's buffer size, alignment and record limit hold; a buffer
 * request answered with no buffer drops records, counted. Configuration
 * (CMakeLists.txt): GPUTRACE_EMU_KERNEL_NS=slow=100000000,quick=0,*=1000. */
#include "cupti_test.h"

#include <unistd.h>

TEST_CLIENT_DEFINE;

#define SLOW_NS 100000000ULL

static CUfunction slow, quick;
static CUstream stream;

static int setup(void **state)
{
    if (setup_primary(state) != 0) return -1;
    slow = load_test_function("_Z4slowv");
    quick = load_test_function("quick");
    return cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS ? 0 : -1;
}

static void start(size_t bytes)
{
    test_client_start(bytes);
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
}

static void stop(void)
{
    ok_cu(cuStreamSynchronize(stream));
    test_flush();
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    size_t dropped;
    ok_cupti(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped));
}

static size_t kernels(struct test_record *out, size_t max)
{
    return test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, out, max);
}

static void test_flush_delivers_complete_work_only(void **state)
{
    (void)state;
    start(1 << 20);
    launch1(slow, stream);
    test_flush();
    struct test_record k;
    assert_int_equal(kernels(&k, 1), 0);
    ok_cu(cuStreamSynchronize(stream));
    test_flush();
    assert_int_equal(kernels(&k, 1), 1);
    assert_int_equal(k.r.kernel.end - k.r.kernel.start, SLOW_NS);
    assert_true(pthread_equal(k.thread, pthread_self()));
    stop();
}

static void test_forced_flush_delivers_incomplete_records(void **state)
{
    (void)state;
    start(1 << 20);
    launch1(slow, stream);
    ok_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    struct test_record k[2];
    assert_int_equal(kernels(k, 2), 1);
    assert_true(k[0].r.kernel.start == 0 && k[0].r.kernel.end == 0);
    assert_true(pthread_equal(k[0].thread, pthread_self()));
    stop(); /* delivered once: nothing more once the work completes */
    assert_int_equal(kernels(k, 2), 1);
}

/* A buffer too small for any record is kept, empty, until a forced flush
 * hands it back; the records that found no room are dropped. */
static void test_forced_flush_hands_back_empty_buffers(void **state)
{
    (void)state;
    start(16);
    launch1(quick, stream);
    ok_cu(cuStreamSynchronize(stream));
    test_flush();
    pthread_mutex_lock(&test_client.lock);
    assert_int_equal(test_client.buffers, 0);
    pthread_mutex_unlock(&test_client.lock);
    ok_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    pthread_mutex_lock(&test_client.lock);
    assert_int_equal(test_client.buffers, 1);
    assert_int_equal(test_client.empty_buffers, 1);
    pthread_mutex_unlock(&test_client.lock);
    size_t dropped = 0;
    ok_cupti(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped));
    assert_int_equal(dropped, 1);
    stop();
}

static void test_full_buffers_are_completed_on_the_worker(void **state)
{
    (void)state;
    const size_t per_buffer = 3, launches = 10;
    start(per_buffer * sizeof(CUpti_ActivityKernel10));
    for (size_t i = 0; i < launches; i++)
        launch1(quick, stream);
    ok_cu(cuStreamSynchronize(stream));
    struct test_record k[16];
    /* The three full buffers come without a flush, from another thread. */
    for (int tries = 0; kernels(k, 16) < 9 && tries < 200; tries++)
        usleep(10000);
    assert_int_equal(kernels(k, 16), 9);
    for (int i = 0; i < 9; i++)
        assert_false(pthread_equal(k[i].thread, pthread_self()));
    test_flush();
    assert_int_equal(kernels(k, 16), launches);
    assert_true(pthread_equal(k[9].thread, pthread_self()));
    pthread_mutex_lock(&test_client.lock);
    for (unsigned b = 1; b <= 4; b++)
        assert_true(test_client.per_buffer[b] <= per_buffer);
    pthread_mutex_unlock(&test_client.lock);
    stop();
}

/* Buffers of an odd size starting off an 8-byte boundary, with records of
 * several sizes: no record lies past a buffer's end or off alignment. */
static void test_buffer_size_and_alignment_hold(void **state)
{
    (void)state;
    test_client_start(1001);
    pthread_mutex_lock(&test_client.lock);
    test_client.misalign = 3;
    pthread_mutex_unlock(&test_client.lock);
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    for (int i = 0; i < 20; i++)
        launch1(quick, stream);
    ok_cu(cuStreamSynchronize(stream));
    test_flush();
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER));
    struct test_record r[1];
    assert_int_equal(kernels(r, 1), 20);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_DRIVER, r, 1), 20);
    pthread_mutex_lock(&test_client.lock);
    assert_false(test_client.overrun);
    assert_false(test_client.misplaced);
    assert_true(test_client.buffers > 4);
    pthread_mutex_unlock(&test_client.lock);
    stop();
}

static void test_record_limit_holds(void **state)
{
    (void)state;
    start(1 << 20);
    pthread_mutex_lock(&test_client.lock);
    test_client.max_records = 2;
    pthread_mutex_unlock(&test_client.lock);
    for (int i = 0; i < 5; i++)
        launch1(quick, stream);
    stop();
    struct test_record k[8];
    assert_int_equal(kernels(k, 8), 5);
    pthread_mutex_lock(&test_client.lock);
    assert_int_equal(test_client.buffers, 3);
    assert_int_equal(test_client.per_buffer[1], 2);
    assert_int_equal(test_client.per_buffer[3], 1);
    pthread_mutex_unlock(&test_client.lock);
}

/* Records that find no buffer are dropped and counted; the count is reset
 * when read. */
static void check_refused(bool zero_size)
{
    test_client_start(zero_size ? 1 << 20 : 0);
    pthread_mutex_lock(&test_client.lock);
    test_client.zero_size = zero_size;
    pthread_mutex_unlock(&test_client.lock);
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    for (int i = 0; i < 4; i++)
        launch1(quick, stream);
    ok_cu(cuStreamSynchronize(stream));
    test_flush();
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    struct test_record k;
    assert_int_equal(kernels(&k, 1), 0);
    pthread_mutex_lock(&test_client.lock);
    assert_true(test_client.requests >= 4);
    pthread_mutex_unlock(&test_client.lock);
    size_t dropped = 0;
    ok_cupti(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped));
    assert_int_equal(dropped, 4);
    ok_cupti(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped));
    assert_int_equal(dropped, 0);
}

static void test_refused_buffers_drop_records(void **state)
{
    (void)state;
    check_refused(false);
    check_refused(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flush_delivers_complete_work_only),
        cmocka_unit_test(test_forced_flush_delivers_incomplete_records),
        cmocka_unit_test(test_forced_flush_hands_back_empty_buffers),
        cmocka_unit_test(test_full_buffers_are_completed_on_the_worker),
        cmocka_unit_test(test_buffer_size_and_alignment_hold),
        cmocka_unit_test(test_record_limit_holds),
        cmocka_unit_test(test_refused_buffers_drop_records),
    };
    return cmocka_run_group_tests(tests, setup, teardown_primary);
}
