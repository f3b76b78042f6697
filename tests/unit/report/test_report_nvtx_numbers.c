/* The numbers NVTX carries, in the report: payloads and named fields per
 * range (given at the opening or the closing call, on the range's thread or
 * another), their rates per GPU second, memory per range (push/pop and
 * start/end ranges, another thread's memory, the bounded stack of levels),
 * counters (min, max, latest by time) and heaps with their regions. Driven
 * through gt_report_add, as the shim's records are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "aggregate.h"
#include "counter_table.h"
#include "event.h"
#include "heap_table.h"
#include "nvtx_numbers.h"
#include "nvtx_table.h"
#include "report.h"
#include "report_events.h"
#include "report_fixture.h"
#include "strtab.h"
#include "table.h"

static uint64_t f64(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits;
}

static gt_event with_payload(gt_event ev, uint8_t kind, uint64_t bits)
{
    ev.u.nvtx.payload_kind = kind;
    ev.u.nvtx.payload = bits;
    return ev;
}

/* An NVTX record that fields records follow. */
static gt_event with_fields(gt_event ev)
{
    ev.u.nvtx.fields = 1;
    return ev;
}

static gt_event fields(uint32_t tid, uint64_t t, const char *name, uint64_t value,
                       const char *name2, double value2)
{
    gt_event ev = host_event(GT_EV_NVTX_FIELDS, tid, t, t);
    ev.u.fields.name[0] = intern(names, name);
    ev.u.fields.kind[0] = GT_NUM_U64;
    ev.u.fields.value[0] = value;
    if (name2) {
        ev.u.fields.name[1] = intern(names, name2);
        ev.u.fields.kind[1] = GT_NUM_F64;
        ev.u.fields.value[1] = f64(value2);
    }
    return ev;
}

static const gt_nvtx_numbers *numbers(const char *name)
{
    const gt_row *row = find_row(r, GT_CAT_NVTX, 0, intern(names, name), 0);
    assert_non_null(row);
    return row->numbers;
}

static const gt_nvtx_field *field(const gt_nvtx_numbers *n, const char *name)
{
    for (uint32_t i = 0; n && i < n->nfields; i++)
        if (n->fields[i].name == intern(names, name)) return &n->fields[i];
    return NULL;
}

/* A push with a payload, fields after the push and after the pop: all the
 * range's; the rates divide by the GPU time inside it. */
static void test_payload_and_fields(void **unused)
{
    (void)unused;
    uint32_t solve = intern(names, "solve");
    for (int i = 0; i < 2; i++) {
        uint64_t t = 1000 + (uint64_t)i * 1000;
        add(with_fields(
            with_payload(nvtx_event(GT_EV_NVTX_PUSH, 1, t, 0, solve, 0), GT_NUM_U32, 7)));
        add(fields(1, t, "flops", 1000, "bytes_read", 0.5));
        add(kernel_event(intern(names, "k"), 1, t + 10, t + 20, t + 520)); /* 500 ns */
        add(with_fields(nvtx_event(GT_EV_NVTX_POP, 1, t + 100, 0, 0, 0)));
        add(fields(1, t + 100, "bytes_written", 64, NULL, 0));
    }
    gt_report_finish(r, 10000);
    const gt_nvtx_numbers *n = numbers("solve");
    assert_non_null(n);
    assert_int_equal(n->payload.kind, GT_NUM_U32);
    assert_int_equal(n->payload.count, 2);
    assert_true(n->payload.total == 14.0);
    const gt_nvtx_field *flops = field(n, "flops"), *read = field(n, "bytes_read"),
                        *written = field(n, "bytes_written");
    assert_non_null(flops);
    assert_non_null(read);
    assert_non_null(written);
    assert_true(flops->sum.total == 2000.0 && read->sum.total == 1.0 && written->sum.total == 128);
    const gt_row *row = find_row(r, GT_CAT_NVTX, 0, solve, 0);
    assert_int_equal(row->gpu_ns_total, 1000);
    /* 2000 FLOP in 1000 ns of GPU work: 2e9 per second. */
    assert_true(gt_number_rate(flops->sum.total, row->gpu_ns_total) == 2e9);
    assert_string_equal(gt_nvtx_field_unit("flops", ""), "FLOP");
    assert_string_equal(gt_nvtx_field_unit("bytes_read", ""), "B");
    assert_string_equal(gt_nvtx_field_unit("elements", "rows"), "rows");
}

/* A start/end range ended on another thread: the end's payload is the
 * range's; mixed kinds say so. */
static void test_payload_at_end_on_another_thread(void **unused)
{
    (void)unused;
    uint32_t load = intern(names, "load");
    add(with_payload(nvtx_event(GT_EV_NVTX_START, 1, 100, 0, load, 9), GT_NUM_I64, (uint64_t)-3));
    add(with_payload(nvtx_event(GT_EV_NVTX_END, 2, 200, 0, 0, 9), GT_NUM_F64, f64(0.5)));
    gt_report_finish(r, 1000);
    const gt_nvtx_numbers *n = numbers("load");
    assert_non_null(n);
    assert_int_equal(n->payload.count, 2);
    assert_int_equal(n->payload.kind, GT_NUM_MIXED);
    assert_true(n->payload.total == -2.5);
}

static void alloc(uint32_t tid, uint64_t t, uint64_t addr, uint64_t bytes)
{
    add(mem_event(GT_EV_ALLOC, tid, t, addr, bytes, GT_MEM_DEVICE, 0));
}

static void release(uint32_t tid, uint64_t t, uint64_t addr)
{
    add(mem_event(GT_EV_FREE, tid, t, addr, 0, GT_MEM_DEVICE, 0));
}

/* Push/pop: the thread's allocations and frees, the nested range's in its
 * parent too; the peak in use while open, another thread's memory
 * included. */
static void test_memory_per_range(void **unused)
{
    (void)unused;
    alloc(3, 10, 0xA000, 1000); /* held before: in use, in no range */
    add(nvtx_event(GT_EV_NVTX_PUSH, 1, 100, 0, intern(names, "outer"), 0));
    add(nvtx_event(GT_EV_NVTX_PUSH, 1, 110, 0, intern(names, "inner"), 0));
    alloc(1, 120, 0xB000, 300);
    alloc(2, 125, 0xC000, 50); /* another thread's: moves the peak only */
    release(1, 130, 0xB000);
    add(nvtx_event(GT_EV_NVTX_POP, 1, 140, 0, 0, 0));
    release(2, 145, 0xC000);
    alloc(1, 150, 0xD000, 200);
    add(nvtx_event(GT_EV_NVTX_POP, 1, 160, 0, 0, 0));
    gt_report_finish(r, 1000);
    const gt_nvtx_numbers *inner = numbers("inner"), *outer = numbers("outer");
    assert_non_null(inner);
    assert_non_null(outer);
    assert_true(inner->memory && outer->memory);
    assert_int_equal(inner->allocated_bytes, 300);
    assert_int_equal(inner->freed_bytes, 300);
    assert_int_equal(inner->peak_bytes, 1350);
    assert_int_equal(outer->allocated_bytes, 500);
    assert_int_equal(outer->freed_bytes, 300);
    assert_int_equal(outer->peak_bytes, 1350);
}

/* A start/end range whose end comes late from another thread: the work of
 * its thread waits in the log, memory included, and goes to the range by
 * issue time. */
static void test_memory_of_start_end_range(void **unused)
{
    (void)unused;
    add(nvtx_event(GT_EV_NVTX_START, 1, 100, 0, intern(names, "phase"), 5));
    alloc(1, 110, 0xB000, 400);
    alloc(1, 300, 0xC000, 100); /* after the end: not the range's */
    add(nvtx_event(GT_EV_NVTX_END, 2, 200, 0, 0, 5));
    add(nvtx_event(GT_EV_NVTX_MARK, 1, 400, 0, intern(names, "later"), 0));
    gt_report_finish(r, 1000);
    const gt_nvtx_numbers *n = numbers("phase");
    assert_non_null(n);
    assert_int_equal(n->allocated_bytes, 400);
    assert_int_equal(n->freed_bytes, 0);
}

/* The stack of levels stays bounded while memory keeps falling; a range
 * opened before the fold still sees the highest level since. */
static void test_levels_fold(void **unused)
{
    (void)unused;
    gt_nvtx_levels l = {0};
    gt_nvtx_levels_change(&l, 5000000);
    gt_nvtx_mem_mark opened = gt_nvtx_levels_now(&l);
    gt_nvtx_levels_change(&l, 9000000);
    for (uint64_t level = 8000000; level > 8000000 - 3 * GT_NVTX_LEVELS_MAX; level--)
        gt_nvtx_levels_change(&l, level);
    assert_true(l.n <= GT_NVTX_LEVELS_MAX);
    assert_int_equal(gt_nvtx_levels_peak(&l, opened), 9000000);
    gt_nvtx_mem_mark late = gt_nvtx_levels_now(&l);
    gt_nvtx_levels_change(&l, 100);
    assert_int_equal(gt_nvtx_levels_peak(&l, late), late.level);
    gt_nvtx_levels_free(&l);
}

static gt_event sample(uint32_t tid, uint64_t t, const char *name, int64_t v)
{
    gt_event ev = host_event(GT_EV_NVTX_COUNTER, tid, t, t);
    ev.name = intern(names, name);
    ev.u.counter.kind = GT_NUM_I64;
    ev.u.counter.value = (uint64_t)v;
    return ev;
}

/* The latest value is the latest in time, whatever order samples come. */
static void test_counters(void **unused)
{
    (void)unused;
    add(sample(1, 300, "depth", 4));
    add(sample(2, 100, "depth", -8));
    add(sample(1, 200, "depth", 11));
    assert_int_equal(r->counters.n, 1);
    const gt_counter_row *c = &r->counters.rows[0];
    assert_int_equal(c->count, 3);
    assert_true(c->min == -8 && c->max == 11 && c->last == 4);
    assert_int_equal(c->first_ns, 100);
    assert_int_equal(c->last_ns, 300);
}

static gt_event heap_op(uint8_t op, uint64_t heap, uint64_t region, uint64_t bytes)
{
    gt_event ev = host_event(GT_EV_NVTX_HEAP, 1, 10, 10);
    ev.u.heap.op = op;
    ev.u.heap.heap = heap;
    ev.u.heap.region = region;
    ev.bytes = bytes;
    return ev;
}

static void test_heaps(void **unused)
{
    (void)unused;
    gt_event reg = heap_op(GT_HEAP_REGISTER, 0x1000, 0, 4096);
    reg.name = intern(names, "pool");
    add(reg);
    add(heap_op(GT_HEAP_REGION_ADD, 0x1000, 0x1000, 100));
    add(heap_op(GT_HEAP_REGION_ADD, 0x1000, 0x1100, 200));
    add(heap_op(GT_HEAP_REGION_RESIZE, 0, 0x1100, 500));
    add(heap_op(GT_HEAP_REGION_REMOVE, 0, 0x1000, 0));
    assert_int_equal(r->heaps.n, 1);
    const gt_heap_row *h = &r->heaps.rows[0];
    assert_int_equal(h->regions, 1);
    assert_int_equal(h->region_bytes, 500);
    assert_int_equal(h->regions_peak, 2);
    assert_int_equal(h->region_bytes_peak, 600);
    add(heap_op(GT_HEAP_REGION_ADD, 0x1000, 0x1200, 50));
    add(heap_op(GT_HEAP_RESET, 0x1000, 0, 0));
    assert_int_equal(h->regions, 0);
    assert_int_equal(h->region_bytes, 0);
    assert_true(h->live);
    add(heap_op(GT_HEAP_UNREGISTER, 0x1000, 0, 0));
    assert_false(h->live);
    assert_int_equal(h->regions_added, 3);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_payload_and_fields),
        T(test_payload_at_end_on_another_thread),
        T(test_memory_per_range),
        T(test_memory_of_start_end_range),
        T(test_levels_fold),
        T(test_counters),
        T(test_heaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
