/* The registry of page-locked and managed host ranges that classifies
 * copies: lookups at and around range bounds, a new range replacing the
 * ones it overlaps, removal by start address only, growth to many ranges,
 * and readers that never see a wrong kind while writers add and remove
 * ranges on other threads. */
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "event.h"
#include "hostmem_registry.h"

#define PAGE 0x1000u

static enum gt_host_mem kind_at(uintptr_t addr)
{
    uint32_t version;
    enum gt_host_mem kind = gt_hostmem_lookup(addr, &version);
    assert_int_not_equal(version, GT_HOSTMEM_BUSY); /* no writer runs in these tests */
    return kind;
}

static int reset(void **state)
{
    (void)state;
    gt_hostmem_reset();
    return 0;
}

static void test_bounds(void **state)
{
    (void)state;
    uint32_t before, after;
    gt_hostmem_lookup(0, &before);
    assert_int_equal(gt_hostmem_add(0x10000, PAGE, GT_HOST_PINNED), 0);
    gt_hostmem_lookup(0, &after);
    assert_int_not_equal(before, after); /* cached answers of the driver are stale now */
    assert_int_equal(kind_at(0x10000), GT_HOST_PINNED);
    assert_int_equal(kind_at(0x10000 + PAGE - 1), GT_HOST_PINNED);
    assert_int_equal(kind_at(0x10000 + PAGE), GT_HOST_NONE);
    assert_int_equal(kind_at(0x10000 - 1), GT_HOST_NONE);
    assert_int_equal(kind_at(0), GT_HOST_NONE);
    /* An empty range, or one past the end of the address space, is refused. */
    assert_int_equal(gt_hostmem_add(0x20000, 0, GT_HOST_PINNED), -1);
    assert_int_equal(gt_hostmem_add(UINTPTR_MAX - 10, 100, GT_HOST_PINNED), -1);
    assert_int_equal(gt_hostmem_count(), 1);
}

static void test_overlap_replaces(void **state)
{
    (void)state;
    assert_int_equal(gt_hostmem_add(0x1000, 0x2000, GT_HOST_PINNED), 0);  /* A [1000, 3000) */
    assert_int_equal(gt_hostmem_add(0x5000, 0x1000, GT_HOST_MANAGED), 0); /* B [5000, 6000) */
    assert_int_equal(gt_hostmem_add(0x8000, 0x1000, GT_HOST_PINNED), 0);  /* D [8000, 9000) */
    /* Adjacent, not overlapping: both stay. */
    assert_int_equal(gt_hostmem_add(0x3000, 0x1000, GT_HOST_MANAGED), 0); /* E [3000, 4000) */
    assert_int_equal(gt_hostmem_count(), 4);
    assert_int_equal(kind_at(0x2fff), GT_HOST_PINNED);
    assert_int_equal(kind_at(0x3000), GT_HOST_MANAGED);
    /* C [2800, 5800) overlaps A, E and B: all three give way to it. */
    assert_int_equal(gt_hostmem_add(0x2800, 0x3000, GT_HOST_PINNED), 0);
    assert_int_equal(gt_hostmem_count(), 2);
    assert_int_equal(kind_at(0x1000), GT_HOST_NONE);
    assert_int_equal(kind_at(0x2800), GT_HOST_PINNED);
    assert_int_equal(kind_at(0x3000), GT_HOST_PINNED);
    assert_int_equal(kind_at(0x57ff), GT_HOST_PINNED);
    assert_int_equal(kind_at(0x5800), GT_HOST_NONE);
    assert_int_equal(kind_at(0x8000), GT_HOST_PINNED);
    /* A range inside another replaces it too. */
    assert_int_equal(gt_hostmem_add(0x8100, 0x10, GT_HOST_MANAGED), 0);
    assert_int_equal(kind_at(0x8000), GT_HOST_NONE);
    assert_int_equal(kind_at(0x8100), GT_HOST_MANAGED);
    assert_int_equal(gt_hostmem_count(), 2);
}

static void test_remove_by_start(void **state)
{
    (void)state;
    assert_int_equal(gt_hostmem_add(0x10000, PAGE, GT_HOST_PINNED), 0);
    assert_int_equal(gt_hostmem_add(0x20000, PAGE, GT_HOST_MANAGED), 0);
    /* Not the start of a range, or no range: nothing happens. */
    assert_int_equal(gt_hostmem_remove(0x10010), GT_HOST_NONE);
    assert_int_equal(gt_hostmem_remove(0x30000), GT_HOST_NONE);
    assert_int_equal(kind_at(0x10010), GT_HOST_PINNED);
    assert_int_equal(gt_hostmem_remove(0x10000), GT_HOST_PINNED);
    assert_int_equal(kind_at(0x10010), GT_HOST_NONE);
    assert_int_equal(kind_at(0x20010), GT_HOST_MANAGED);
    assert_int_equal(gt_hostmem_remove(0x10000), GT_HOST_NONE); /* twice */
    assert_int_equal(gt_hostmem_count(), 1);
}

/* A context's end: every range forgotten, the version moved (so that the
 * driver's cached answers are asked again), and the registry usable after. */
static void test_clear(void **state)
{
    (void)state;
    assert_int_equal(gt_hostmem_add(0x10000, PAGE, GT_HOST_PINNED), 0);
    assert_int_equal(gt_hostmem_add(0x20000, PAGE, GT_HOST_MANAGED), 0);
    uint32_t before, after;
    assert_int_equal(gt_hostmem_lookup(0x10010, &before), GT_HOST_PINNED);
    gt_hostmem_clear();
    assert_int_equal(gt_hostmem_count(), 0);
    assert_int_equal(gt_hostmem_lookup(0x10010, &after), GT_HOST_NONE);
    assert_int_not_equal(after, before);
    assert_int_equal(kind_at(0x20010), GT_HOST_NONE);
    assert_int_equal(gt_hostmem_add(0x10000, PAGE, GT_HOST_MANAGED), 0);
    assert_int_equal(kind_at(0x10010), GT_HOST_MANAGED);
}

#define MANY 20000u

static void test_many_ranges(void **state)
{
    (void)state;
    /* Added out of order, so that inserts land everywhere in the array. */
    for (uint32_t i = 0; i < MANY; i++) {
        uint32_t k = (i * 7919u) % MANY;
        enum gt_host_mem kind = k % 3 ? GT_HOST_PINNED : GT_HOST_MANAGED;
        assert_int_equal(gt_hostmem_add((uintptr_t)(k + 1) * 4 * PAGE, PAGE, kind), 0);
    }
    assert_int_equal(gt_hostmem_count(), MANY);
    for (uint32_t k = 0; k < MANY; k += 2)
        assert_int_equal(gt_hostmem_remove((uintptr_t)(k + 1) * 4 * PAGE),
                         k % 3 ? GT_HOST_PINNED : GT_HOST_MANAGED);
    for (uint32_t k = 0; k < MANY; k++) {
        uintptr_t start = (uintptr_t)(k + 1) * 4 * PAGE;
        enum gt_host_mem want = k % 2 ? (k % 3 ? GT_HOST_PINNED : GT_HOST_MANAGED) : GT_HOST_NONE;
        assert_int_equal(kind_at(start + PAGE / 2), want);
        assert_int_equal(kind_at(start + PAGE), GT_HOST_NONE);
    }
}

/* Threads: ranges that stay read right throughout, while writers move them
 * about in the array; each writer adds and removes ranges of one kind in its
 * own region, where readers may see that kind or none, never the other. */
#define WRITERS 3
#define READERS 3
#define STABLE 200u
#define CHURN 20000u
#define REGION(w) ((uintptr_t)0x40000000u + (uintptr_t)(w)*0x1000000u)
/* Above every writer's region: each add or remove there moves them all. */
#define STABLE_AT(s) ((uintptr_t)0x80000000u + (uintptr_t)(s)*2 * PAGE)

static enum gt_host_mem writer_kind(int w)
{
    return w % 2 ? GT_HOST_PINNED : GT_HOST_MANAGED;
}

static enum gt_host_mem stable_kind(uint32_t i)
{
    return i % 2 ? GT_HOST_MANAGED : GT_HOST_PINNED;
}

static _Atomic int writers_done;              /* relaxed: the join orders what matters */
static _Atomic unsigned long wrong, answered; /* relaxed counters, read after the join */

static void *writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    for (uint32_t i = 0; i < CHURN; i++) {
        uintptr_t start = REGION(w) + (uintptr_t)(i % 64) * 2 * PAGE;
        if (i % 3 == 2)
            gt_hostmem_remove(start);
        else
            gt_hostmem_add(start, PAGE + (i % 7) * 16, writer_kind(w));
    }
    atomic_fetch_add_explicit(&writers_done, 1, memory_order_relaxed);
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    uint32_t i = 0;
    while (atomic_load_explicit(&writers_done, memory_order_relaxed) < WRITERS) {
        uint32_t version;
        uint32_t s = i % STABLE;
        enum gt_host_mem kind = gt_hostmem_lookup(STABLE_AT(s) + 8, &version);
        /* Busy (writers kept the lookup from finishing) is an answer the
         * caller takes to the driver; any other must be right. */
        if (version != GT_HOSTMEM_BUSY) {
            atomic_fetch_add_explicit(&answered, 1, memory_order_relaxed);
            if (kind != stable_kind(s)) atomic_fetch_add_explicit(&wrong, 1, memory_order_relaxed);
        }
        int w = (int)(i % WRITERS);
        kind = gt_hostmem_lookup(REGION(w) + (uintptr_t)(i % 64) * 2 * PAGE + 4, &version);
        if (kind != GT_HOST_NONE && kind != writer_kind(w))
            atomic_fetch_add_explicit(&wrong, 1, memory_order_relaxed);
        i++;
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    for (uint32_t s = 0; s < STABLE; s++)
        assert_int_equal(gt_hostmem_add(STABLE_AT(s), PAGE, stable_kind(s)), 0);
    pthread_t t[WRITERS + READERS];
    for (int i = 0; i < READERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, reader, NULL), 0);
    for (int w = 0; w < WRITERS; w++)
        assert_int_equal(pthread_create(&t[READERS + w], NULL, writer, (void *)(intptr_t)w), 0);
    for (int i = 0; i < WRITERS + READERS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load_explicit(&wrong, memory_order_relaxed), 0);
    assert_true(atomic_load_explicit(&answered, memory_order_relaxed) > 0);
    for (uint32_t s = 0; s < STABLE; s++)
        assert_int_equal(kind_at(STABLE_AT(s)), stable_kind(s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_bounds, reset),
        cmocka_unit_test_setup(test_overlap_replaces, reset),
        cmocka_unit_test_setup(test_remove_by_start, reset),
        cmocka_unit_test_setup(test_clear, reset),
        cmocka_unit_test_setup(test_many_ranges, reset),
        cmocka_unit_test_setup(test_threads, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
