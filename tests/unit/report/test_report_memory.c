/* The memory category: per-device counts, current and peak bytes, leaks,
 * memory released with its context, and records that reach the report
 * out of order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "event.h"
#include "memory_table.h"
#include "report_events.h"

static gt_memory mem;

static int reset(void **unused)
{
    (void)unused;
    gt_memory_free(&mem);
    return 0;
}

static void alloc_at(uint64_t t, uint64_t addr, uint64_t bytes, uint8_t kind, uint16_t device)
{
    gt_event ev = mem_event(GT_EV_ALLOC, 1, t, addr, bytes, kind, device);
    gt_memory_add(&mem, &ev);
}

static void free_at(uint64_t t, uint64_t addr, uint8_t kind, uint16_t device)
{
    gt_event ev = mem_event(GT_EV_FREE, 2, t, addr, 0, kind, device);
    gt_memory_add(&mem, &ev);
}

/* The same, made outside a capture window. */
static void alloc_outside(uint64_t t, uint64_t addr, uint64_t bytes)
{
    gt_event ev = mem_event(GT_EV_ALLOC, 1, t, addr, bytes, GT_MEM_DEVICE, 0);
    ev.flags |= GT_EVF_UNCAPTURED;
    gt_memory_add(&mem, &ev);
}

static void free_outside(uint64_t t, uint64_t addr)
{
    gt_event ev = mem_event(GT_EV_FREE, 2, t, addr, 0, GT_MEM_DEVICE, 0);
    ev.flags |= GT_EVF_UNCAPTURED;
    gt_memory_add(&mem, &ev);
}

/* What the sink heard: the first changes, and over all of them the count,
 * the highest value and whether time ever went back. */
typedef struct heard {
    uint64_t time[16], bytes[16];
    uint64_t count, highest, last_time, last_bytes;
    bool backwards;
} heard;

static void hear(void *ctx, int32_t device, uint64_t time, uint64_t bytes)
{
    heard *h = ctx;
    assert_int_equal(device, 0);
    if (h->count < 16) h->time[h->count] = time, h->bytes[h->count] = bytes;
    h->backwards |= h->count && time < h->last_time;
    h->count++;
    h->last_time = time;
    h->last_bytes = bytes;
    if (bytes > h->highest) h->highest = bytes;
}

static const gt_mem_device *device(int32_t d)
{
    for (uint32_t i = 0; i < mem.ndevices; i++)
        if (mem.devices[i].device == d) return &mem.devices[i];
    fail_msg("no row for device %d", d);
    return NULL;
}

static void test_peak_and_leak(void **unused)
{
    (void)unused;
    alloc_at(10, 0x1000, 100, GT_MEM_DEVICE, 0);
    alloc_at(20, 0x2000, 300, GT_MEM_DEVICE, 0);
    free_at(30, 0x1000, GT_MEM_DEVICE, 0);
    alloc_at(40, 0x3000, 50, GT_MEM_MANAGED, 0);
    alloc_at(50, 0x9000, 1000, GT_MEM_DEVICE, 1);
    free_at(60, 0x9000, GT_MEM_DEVICE, 1);
    const gt_mem_device *d0 = device(0);
    assert_int_equal(d0->allocs, 3);
    assert_int_equal(d0->frees, 1);
    assert_int_equal(d0->peak_bytes, 400);
    assert_int_equal(d0->current_bytes, 350);
    assert_int_equal(d0->live_allocs, 2);
    const gt_mem_device *d1 = device(1);
    assert_int_equal(d1->peak_bytes, 1000);
    assert_int_equal(d1->current_bytes, 0);
    assert_int_equal(d1->live_allocs, 0);
    assert_int_equal(mem.devices[0].device, 0); /* rows in device order */

    gt_mem_leak leaks[4];
    size_t n = gt_memory_largest_leaks(&mem, 0, leaks, 4);
    assert_int_equal(n, 2);
    assert_int_equal(leaks[0].addr, 0x2000);
    assert_int_equal(leaks[0].bytes, 300);
    assert_int_equal(leaks[1].addr, 0x3000);
    assert_int_equal(leaks[1].kind, GT_MEM_MANAGED);
    n = gt_memory_largest_leaks(&mem, 0, leaks, 1);
    assert_int_equal(n, 1);
    assert_int_equal(leaks[0].bytes, 300);
}

static void alloc_in(uint64_t t, uint64_t addr, uint64_t bytes, uint8_t kind, uint64_t ctx)
{
    gt_event ev = mem_event(GT_EV_ALLOC, 1, t, addr, bytes, kind, 0);
    ev.u.mem.ctx = ctx;
    gt_memory_add(&mem, &ev);
}

static void end_context_at(uint64_t t, uint64_t ctx)
{
    gt_event ev = mem_event(GT_EV_CTX_END, 1, t, 0, 0, GT_MEM_DEVICE, GT_NO_DEVICE);
    ev.u.mem.ctx = ctx;
    gt_memory_add(&mem, &ev);
}

/* How memory ends: freed; released with its context (the context's live
 * allocations made before its end, whatever their kind but VMM memory,
 * which outlives contexts); still held at the end (leaked). Released
 * memory is no longer in use and is no leak. */
static void test_released_with_context(void **unused)
{
    (void)unused;
    heard h = {0};
    gt_memory_set_sink(&mem, hear, &h);
    alloc_in(10, 0x1000, 100, GT_MEM_DEVICE, 0xa);
    alloc_in(20, 0x2000, 200, GT_MEM_MANAGED, 0xa);
    alloc_in(30, 0x3000, 400, GT_MEM_DEVICE, 0xb); /* another context: stays */
    alloc_in(40, 0x4000, 800, GT_MEM_VMM, 0);      /* VMM: no context */
    free_at(50, 0x1000, GT_MEM_DEVICE, 0);
    end_context_at(60, 0xa);
    alloc_in(70, 0x5000, 16, GT_MEM_DEVICE, 0xa); /* a later context at the same handle */
    gt_memory_finish(&mem);
    const gt_mem_device *d = device(0);
    assert_int_equal(d->allocs, 5);
    assert_int_equal(d->frees, 1);
    assert_int_equal(d->ctx_released_allocs, 1);
    assert_int_equal(d->ctx_released_bytes, 200);
    assert_int_equal(d->live_allocs, 3);
    assert_int_equal(d->current_bytes, 400 + 800 + 16);
    assert_int_equal(d->peak_bytes, 100 + 200 + 400 + 800);
    assert_int_equal(h.last_bytes, 400 + 800 + 16); /* the trace's counter went down too */
    gt_mem_leak leaks[4];
    assert_int_equal(gt_memory_largest_leaks(&mem, 0, leaks, 4), 3);
    /* A context's end without a context, and one that never had memory,
     * change nothing. */
    end_context_at(80, 0);
    end_context_at(90, 0xc);
    assert_int_equal(device(0)->live_allocs, 3);
}

/* A context's end arriving before an allocation made in it earlier (two
 * threads' records out of order) leaves that allocation alone: it is
 * matched by time, as frees are. */
static void test_context_end_takes_only_earlier(void **unused)
{
    (void)unused;
    end_context_at(50, 0xa);
    alloc_in(60, 0x1000, 100, GT_MEM_DEVICE, 0xa);
    assert_int_equal(device(0)->live_allocs, 1);
    assert_int_equal(device(0)->ctx_released_allocs, 0);
}

/* Thread 2's free is drained before thread 1's allocation. */
static void test_free_before_its_alloc(void **unused)
{
    (void)unused;
    free_at(20, 0x5000, GT_MEM_DEVICE, 0);
    assert_int_equal(gt_memory_unknown_frees(device(0)), 1);
    alloc_at(10, 0x5000, 4096, GT_MEM_DEVICE, 0);
    const gt_mem_device *d = device(0);
    assert_int_equal(d->allocs, 1);
    assert_int_equal(d->frees, 1);
    assert_int_equal(d->current_bytes, 0);
    assert_int_equal(d->live_allocs, 0);
    assert_int_equal(d->peak_bytes, 4096);
    assert_int_equal(gt_memory_unknown_frees(d), 0);
}

/* An address reused before the free of its first allocation arrives: the
 * free belongs to the allocation before it in time. */
static void test_address_reuse_out_of_order(void **unused)
{
    (void)unused;
    alloc_at(10, 0x7000, 100, GT_MEM_DEVICE, 0);
    alloc_at(30, 0x7000, 200, GT_MEM_DEVICE, 0); /* arrives before the free at 20 */
    free_at(20, 0x7000, GT_MEM_DEVICE, 0);
    gt_mem_leak leak;
    assert_int_equal(gt_memory_largest_leaks(&mem, 0, &leak, 1), 1);
    assert_int_equal(leak.bytes, 200);
    assert_int_equal(device(0)->current_bytes, 200);
    /* a free after the second allocation releases it */
    free_at(40, 0x7000, GT_MEM_DEVICE, 0);
    assert_int_equal(device(0)->current_bytes, 0);
    assert_int_equal(device(0)->frees, 2);
}

/* A free waiting for its allocation is not matched by an allocation that
 * started after it (that one is a new block at a reused address). */
static void test_early_free_needs_earlier_alloc(void **unused)
{
    (void)unused;
    free_at(20, 0x8000, GT_MEM_DEVICE, 0);
    alloc_at(30, 0x8000, 64, GT_MEM_DEVICE, 0);
    assert_int_equal(device(0)->live_allocs, 1);
    assert_int_equal(gt_memory_unknown_frees(device(0)), 1);
}

static void test_unknown_frees_are_bounded(void **unused)
{
    (void)unused;
    uint64_t n = GT_MEM_PENDING_FREES + 100;
    for (uint64_t i = 0; i < n; i++)
        free_at(10, 0x100000 + i * 16, GT_MEM_DEVICE, 0);
    assert_int_equal(gt_memory_unknown_frees(device(0)), n);
    assert_int_equal(mem.pending.count, GT_MEM_PENDING_FREES);
    free_at(10, 0, GT_MEM_DEVICE, 0); /* freeing NULL is nothing */
    assert_int_equal(gt_memory_unknown_frees(device(0)), n);
}

/* Pinned host memory has its own row; VMM handles and device pointers are
 * different name spaces even when the numbers coincide. */
static void test_address_spaces(void **unused)
{
    (void)unused;
    alloc_at(10, 0x4000, 100, GT_MEM_PINNED, 0);
    alloc_at(10, 0x4000, 200, GT_MEM_DEVICE, 0);
    alloc_at(10, 0x4000, 400, GT_MEM_VMM, 0);
    free_at(20, 0x4000, GT_MEM_VMM, 0);
    assert_int_equal(device(GT_MEM_HOST_DEVICE)->current_bytes, 100);
    assert_int_equal(device(0)->current_bytes, 200);
    assert_int_equal(device(0)->peak_bytes, 600);
    assert_int_equal(mem.devices[0].device, GT_MEM_HOST_DEVICE);
}

/* Many live blocks: the maps grow and every free finds its block. */
static void test_many_blocks(void **unused)
{
    (void)unused;
    enum { N = 20000 };
    for (uint64_t i = 0; i < N; i++)
        alloc_at(i, 0x10000000 + i * 256, 256, GT_MEM_DEVICE, 0);
    assert_int_equal(device(0)->current_bytes, N * 256);
    for (uint64_t i = 0; i < N; i += 2)
        free_at(N + i, 0x10000000 + i * 256, GT_MEM_DEVICE, 0);
    assert_int_equal(device(0)->live_allocs, N / 2);
    assert_int_equal(gt_memory_unknown_frees(device(0)), 0);
    for (uint64_t i = 0; i < N; i++)
        alloc_at(3 * N + i, 0x20000000 + i * 256, 256, GT_MEM_DEVICE, 0);
    assert_int_equal(device(0)->peak_bytes, (N / 2 + N) * 256);
}

/* Two threads' records: thread 2's allocation (at 15) arrives after
 * thread 1's free (at 30) although both blocks were live from 15 to 30. */
static void test_peak_in_time_order(void **unused)
{
    (void)unused;
    heard h = {.count = 0};
    gt_memory_set_sink(&mem, hear, &h);
    alloc_at(10, 0x1000, 100, GT_MEM_DEVICE, 0);
    free_at(30, 0x1000, GT_MEM_DEVICE, 0);
    alloc_at(15, 0x2000, 50, GT_MEM_DEVICE, 0);
    free_at(40, 0x2000, GT_MEM_DEVICE, 0);
    alloc_at(50, 0x3000, 120, GT_MEM_DEVICE, 0);
    assert_int_equal(device(0)->peak_bytes, 120); /* in arrival order */
    gt_memory_finish(&mem);
    assert_int_equal(device(0)->peak_bytes, 150);
    assert_int_equal(device(0)->current_bytes, 120);
    /* the sink heard the bytes in use after each change, in time order */
    const uint64_t times[] = {10, 15, 30, 40, 50}, in_use[] = {100, 150, 50, 0, 120};
    assert_int_equal(h.count, 5);
    assert_memory_equal(h.time, times, sizeof times);
    assert_memory_equal(h.bytes, in_use, sizeof in_use);
    /* A free and an allocation at the same moment make no peak. */
    free_at(60, 0x3000, GT_MEM_DEVICE, 0);
    alloc_at(60, 0x4000, 200, GT_MEM_DEVICE, 0);
    gt_memory_finish(&mem);
    assert_int_equal(device(0)->peak_bytes, 200);
    /* only the new changes, the free first */
    assert_int_equal(h.count, 7);
    assert_int_equal(h.bytes[5], 0);
    assert_int_equal(h.bytes[6], 200);
}

/* One sink per trace: both hear every change; a third is refused; a sink
 * removed hears no more, the other goes on. */
static void test_two_sinks(void **unused)
{
    (void)unused;
    heard a = {.count = 0}, b = {.count = 0}, c = {.count = 0};
    assert_int_equal(gt_memory_set_sink(&mem, hear, &a), 0);
    assert_int_equal(gt_memory_set_sink(&mem, hear, &b), 0);
    assert_int_equal(gt_memory_set_sink(&mem, hear, &b), 0); /* b's own, replaced */
    assert_int_equal(gt_memory_set_sink(&mem, hear, &c), -1);
    alloc_at(10, 0x1000, 100, GT_MEM_DEVICE, 0);
    gt_memory_finish(&mem);
    assert_int_equal(gt_memory_set_sink(&mem, NULL, &a), 0);
    free_at(20, 0x1000, GT_MEM_DEVICE, 0);
    gt_memory_finish(&mem);
    assert_int_equal(a.count, 1);
    assert_int_equal(a.bytes[0], 100);
    assert_int_equal(b.count, 2);
    assert_int_equal(b.bytes[1], 0);
    assert_int_equal(c.count, 0);
}

/* More changes than are kept: the older half is folded, the peak stays
 * exact for records that arrive in time. */
static void test_peak_after_folding(void **unused)
{
    (void)unused;
    uint64_t n = GT_MEM_DELTAS_MAX; /* n allocations and n frees: folded once at least */
    heard h = {.count = 0};
    gt_memory_set_sink(&mem, hear, &h);
    for (uint64_t i = 0; i < n; i++) {
        alloc_at(2 * i, 0x10000000 + i * 64, i == n / 3 ? 5000 : 64, GT_MEM_DEVICE, 0);
        free_at(2 * i + 1, 0x10000000 + i * 64, GT_MEM_DEVICE, 0);
    }
    alloc_at(2 * n, 0x1000, 64, GT_MEM_DEVICE, 0);
    gt_memory_finish(&mem);
    assert_int_equal(device(0)->peak_bytes, 5000);
    assert_int_equal(device(0)->current_bytes, 64);
    assert_true(device(0)->ndeltas <= GT_MEM_DELTAS_MAX);
    /* every change heard once, in time order, folded or not */
    assert_int_equal(h.count, 2 * n + 1);
    assert_false(h.backwards);
    assert_int_equal(h.highest, 5000);
    assert_int_equal(h.last_bytes, 64);
}

/* Capture windows: memory allocated and freed outside them moves the
 * bytes in use, but only what happens inside is counted, and the peak is
 * the most in use at a moment inside a window (its opening included). */
static void test_outside_capture_windows(void **unused)
{
    (void)unused;
    heard h = {0};
    gt_memory_set_sink(&mem, hear, &h);
    alloc_outside(10, 0x1000, 1000); /* before the first window */
    alloc_outside(15, 0x5000, 5000);
    free_outside(18, 0x5000); /* a peak of 6000 that no window saw */
    gt_memory_window_open(&mem, 20);
    alloc_at(30, 0x2000, 200, GT_MEM_DEVICE, 0); /* in the window: 1200 */
    free_outside(40, 0x1000);                    /* between windows: 200 */
    gt_memory_window_open(&mem, 50);
    free_at(60, 0x2000, GT_MEM_DEVICE, 0); /* in the second: 0 */
    alloc_outside(70, 0x3000, 400);        /* after them: still allocated at the end */
    gt_memory_finish(&mem);
    const gt_mem_device *d = device(0);
    assert_int_equal(d->allocs, 1);
    assert_int_equal(d->frees, 1);
    assert_int_equal(d->current_bytes, 400);
    assert_int_equal(d->live_allocs, 1);
    assert_int_equal(d->peak_bytes, 1200);
    /* The sink hears the windows' moments only: their openings and what
     * happened in them, with the bytes in use then. */
    assert_int_equal(h.count, 4);
    assert_int_equal(h.time[0], 20);
    assert_int_equal(h.bytes[0], 1000);
    assert_int_equal(h.time[1], 30);
    assert_int_equal(h.bytes[1], 1200);
    assert_int_equal(h.time[2], 50);
    assert_int_equal(h.bytes[2], 200);
    assert_int_equal(h.time[3], 60);
    assert_int_equal(h.bytes[3], 0);
}

/* A free made in a window that reaches the report before the allocation
 * it releases (made outside) is counted, the allocation not. */
static void test_early_free_keeps_its_window(void **unused)
{
    (void)unused;
    free_at(20, 0x6000, GT_MEM_DEVICE, 0);
    alloc_outside(10, 0x6000, 64);
    const gt_mem_device *d = device(0);
    assert_int_equal(d->allocs, 0);
    assert_int_equal(d->frees, 1);
    assert_int_equal(d->current_bytes, 0);
    assert_int_equal(d->live_allocs, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_peak_and_leak, reset),
        cmocka_unit_test_teardown(test_released_with_context, reset),
        cmocka_unit_test_teardown(test_context_end_takes_only_earlier, reset),
        cmocka_unit_test_teardown(test_peak_in_time_order, reset),
        cmocka_unit_test_teardown(test_peak_after_folding, reset),
        cmocka_unit_test_teardown(test_two_sinks, reset),
        cmocka_unit_test_teardown(test_free_before_its_alloc, reset),
        cmocka_unit_test_teardown(test_address_reuse_out_of_order, reset),
        cmocka_unit_test_teardown(test_early_free_needs_earlier_alloc, reset),
        cmocka_unit_test_teardown(test_unknown_frees_are_bounded, reset),
        cmocka_unit_test_teardown(test_address_spaces, reset),
        cmocka_unit_test_teardown(test_many_blocks, reset),
        cmocka_unit_test_teardown(test_outside_capture_windows, reset),
        cmocka_unit_test_teardown(test_early_free_keeps_its_window, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
