/* The copies that await their synchronize (shim/checksum/checksum_pending.c)
 * alone, with what becomes of each copy caught in place of its record: a
 * synchronize hashes exactly the copies it covers (a stream's, an event's
 * recorded after them, a context's; the default streams per context), a
 * copy written over or pushed out of the full table is counted unhashed
 * once, the exit counts the rest, and threads that queue and synchronize
 * at once lose and repeat no copy (run under ThreadSanitizer: label
 * pipeline). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "checksum.h"
#include "checksum_internal.h"
#include "event.h"
#include "process.h"

#define COPIES 4096u
#define NO_OUTCOME 0xffu
#define HASHED_EARLY 0xfeu /* hashed without having waited: never, here */

/* What became of copy i: a gt_checksum_status, and how many times. */
static _Atomic uint8_t outcome[COPIES];
static _Atomic uint32_t outcomes[COPIES];

void gt_checksum_hash_now(const gt_checksum_id *id, int waited)
{
    atomic_store(&outcome[id->index], waited ? GT_CK_HASHED : HASHED_EARLY);
    atomic_fetch_add(&outcomes[id->index], 1);
}

void gt_checksum_record_unhashed(const gt_checksum_id *id, enum gt_checksum_status why)
{
    atomic_store(&outcome[id->index], (uint8_t)why);
    atomic_fetch_add(&outcomes[id->index], 1);
}

/* The library's fork handling (shim/init.c): no fork here. */
int gt_atfork_child_add(void (*fn)(void))
{
    (void)fn;
    return 0;
}

static int setup(void **state)
{
    (void)state;
    gt_checksum_exit(); /* empties the table a test left */
    for (uint32_t i = 0; i < COPIES; i++) {
        atomic_store(&outcome[i], NO_OUTCOME);
        atomic_store(&outcomes[i], 0);
    }
    return 0;
}

enum { CTX_A = 0xa000, CTX_B = 0xb000, STREAM_1 = 0x1000, STREAM_2 = 0x2000, BUF = 0x100000 };

/* Copy `index` of 256 bytes into its own part of the buffer. */
static void queue(uint64_t index, uint64_t stream, uint64_t context)
{
    gt_checksum_id id = {.dst = BUF + index * 256u, .bytes = 256, .index = index, .stream = stream};
    gt_checksum_pending_add(&id, context);
}

static uint8_t got(uint64_t index)
{
    return atomic_load(&outcome[index]);
}

static void test_a_stream_synchronize_hashes_its_stream_only(void **state)
{
    (void)state;
    queue(0, STREAM_1, CTX_A);
    queue(1, STREAM_2, CTX_A);
    queue(2, STREAM_1, CTX_A);
    gt_checksum_stream_synced(STREAM_1, CTX_A);
    assert_int_equal(got(0), GT_CK_HASHED);
    assert_int_equal(got(1), NO_OUTCOME);
    assert_int_equal(got(2), GT_CK_HASHED);
    gt_checksum_stream_synced(STREAM_2, CTX_B); /* a created stream is one in the process */
    assert_int_equal(got(1), GT_CK_HASHED);
}

static void test_the_default_streams_are_their_contexts(void **state)
{
    (void)state;
    queue(0, 0, CTX_A);
    queue(1, 0, CTX_B);
    queue(2, GT_PER_THREAD_STREAM, CTX_A);
    gt_checksum_stream_synced(0, CTX_B);
    assert_int_equal(got(0), NO_OUTCOME);
    assert_int_equal(got(1), GT_CK_HASHED);
    assert_int_equal(got(2), NO_OUTCOME);
    gt_checksum_stream_synced(GT_PER_THREAD_STREAM, CTX_A);
    assert_int_equal(got(0), NO_OUTCOME);
    assert_int_equal(got(2), GT_CK_HASHED);
}

static void test_an_event_covers_its_stream_before_its_record(void **state)
{
    (void)state;
    queue(0, STREAM_1, CTX_A);
    queue(1, STREAM_2, CTX_A);
    gt_checksum_event_recorded(0xe1, STREAM_1, CTX_A);
    queue(2, STREAM_1, CTX_A);
    gt_checksum_event_synced(0xe2); /* never recorded: covers nothing */
    assert_int_equal(got(0), NO_OUTCOME);
    gt_checksum_event_synced(0xe1);
    assert_int_equal(got(0), GT_CK_HASHED);
    assert_int_equal(got(1), NO_OUTCOME);
    assert_int_equal(got(2), NO_OUTCOME);
    /* Recorded again: it now stands after copy 2. */
    gt_checksum_event_recorded(0xe1, STREAM_1, CTX_A);
    gt_checksum_event_synced(0xe1);
    assert_int_equal(got(2), GT_CK_HASHED);
    assert_int_equal(got(1), NO_OUTCOME);
}

static void test_a_context_synchronize_hashes_its_context_only(void **state)
{
    (void)state;
    queue(0, STREAM_1, CTX_A);
    queue(1, STREAM_2, CTX_B);
    queue(2, 0, CTX_A);
    gt_checksum_context_synced(CTX_A);
    assert_int_equal(got(0), GT_CK_HASHED);
    assert_int_equal(got(1), NO_OUTCOME);
    assert_int_equal(got(2), GT_CK_HASHED);
}

static void test_a_copy_written_over_is_counted_not_hashed(void **state)
{
    (void)state;
    queue(0, STREAM_1, CTX_A); /* [BUF, BUF + 256) */
    queue(1, STREAM_1, CTX_A); /* [BUF + 256, BUF + 512) */
    gt_checksum_pending_overwritten(BUF + 255, 1);
    assert_int_equal(got(0), GT_CK_OVERWRITTEN);
    assert_int_equal(got(1), NO_OUTCOME);
    gt_checksum_pending_overwritten(BUF + 512, 4096); /* just past copy 1 */
    gt_checksum_stream_synced(STREAM_1, CTX_A);
    assert_int_equal(got(1), GT_CK_HASHED);
    assert_int_equal(atomic_load(&outcomes[0]), 1);
}

static void test_a_full_table_pushes_out_the_oldest(void **state)
{
    (void)state;
    /* The table's bound (checksum_pending.c): the next copy pushes out the first. */
    const uint64_t bound = 1024;
    for (uint64_t i = 0; i <= bound; i++)
        queue(i, STREAM_1, CTX_A);
    assert_int_equal(got(0), GT_CK_PENDING_FULL);
    assert_int_equal(got(1), NO_OUTCOME);
    gt_checksum_stream_synced(STREAM_1, CTX_A);
    for (uint64_t i = 1; i <= bound; i++)
        assert_int_equal(got(i), GT_CK_HASHED);
    assert_int_equal(atomic_load(&outcomes[0]), 1);
}

static void test_the_exit_counts_what_still_waits(void **state)
{
    (void)state;
    queue(0, STREAM_1, CTX_A);
    queue(1, STREAM_2, CTX_B);
    gt_checksum_exit();
    assert_int_equal(got(0), GT_CK_UNSYNCED);
    assert_int_equal(got(1), GT_CK_UNSYNCED);
    gt_checksum_context_synced(CTX_A);
    assert_int_equal(atomic_load(&outcomes[0]), 1);
}

#define THREADS 4u
#define PER_THREAD (COPIES / THREADS)

/* Thread t queues its copies on its own stream, synchronizing it now and
 * then, and now and then writes over the copy before. */
static void *worker(void *arg)
{
    uint64_t t = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < PER_THREAD; i++) {
        uint64_t index = t * PER_THREAD + i;
        if (i % 97 == 1) gt_checksum_pending_overwritten(BUF + (index - 1) * 256u, 256);
        queue(index, STREAM_1 + t, CTX_A);
        if (i % 16 == 15) gt_checksum_stream_synced(STREAM_1 + t, CTX_A);
        if (i % 64 == 0) gt_checksum_event_recorded(0xe0 + t, STREAM_1 + t, CTX_A);
        if (i % 64 == 32) gt_checksum_event_synced(0xe0 + t);
    }
    return NULL;
}

static void *context_syncer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200; i++)
        gt_checksum_context_synced(CTX_A);
    return NULL;
}

static void test_threads_lose_and_repeat_no_copy(void **state)
{
    (void)state;
    pthread_t th[THREADS + 1];
    for (uint32_t t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t), 0);
    assert_int_equal(pthread_create(&th[THREADS], NULL, context_syncer, NULL), 0);
    for (uint32_t t = 0; t <= THREADS; t++)
        pthread_join(th[t], NULL);
    gt_checksum_exit();
    for (uint32_t i = 0; i < COPIES; i++) {
        assert_int_equal(atomic_load(&outcomes[i]), 1);
        assert_true(got(i) == GT_CK_HASHED || got(i) == GT_CK_UNSYNCED ||
                    got(i) == GT_CK_OVERWRITTEN);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_stream_synchronize_hashes_its_stream_only, setup),
        cmocka_unit_test_setup(test_the_default_streams_are_their_contexts, setup),
        cmocka_unit_test_setup(test_an_event_covers_its_stream_before_its_record, setup),
        cmocka_unit_test_setup(test_a_context_synchronize_hashes_its_context_only, setup),
        cmocka_unit_test_setup(test_a_copy_written_over_is_counted_not_hashed, setup),
        cmocka_unit_test_setup(test_a_full_table_pushes_out_the_oldest, setup),
        cmocka_unit_test_setup(test_the_exit_counts_what_still_waits, setup),
        cmocka_unit_test_setup(test_threads_lose_and_repeat_no_copy, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
