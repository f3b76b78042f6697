/* Folding records into the kernel, memcpy, memset, compile, module, sync
 * and api tables, and the GPU busy union. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "aggregate.h"
#include "event.h"
#include "gpu_busy.h"
#include "report.h"
#include "report_events.h"
#include "settings.h"
#include "strtab.h"
#include "table.h"

typedef struct fixture {
    gt_strtab *names;
    gt_report *r;
} fixture;

static fixture make(unsigned categories, enum gt_gpu_timing timing)
{
    fixture f;
    f.names = gt_strtab_create();
    gt_report_options opt = {
        .categories = categories, .verbosity = GT_VERB_DEFAULT, .gpu_timing = timing};
    f.r = gt_report_create(&opt, f.names);
    assert_non_null(f.r);
    return f;
}

static void drop(fixture *f)
{
    gt_report_destroy(f->r);
    gt_strtab_destroy(f->names);
}

static void test_kernel_rows(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_ALL, GT_GPU_TIMING_EVENTS);
    uint32_t k = intern(f.names, "saxpy(float*)");
    uint32_t launch = intern(f.names, "cuLaunchKernel");
    gt_event ev = kernel_event(k, 1, 1000, 5000, 5400); /* host 100 ns, GPU 400 ns */
    ev.api = launch;
    gt_report_add(f.r, &ev);
    ev = kernel_event(k, 1, 2000, 6000, 6600);
    ev.api = launch;
    gt_report_add(f.r, &ev);
    /* launched into a stream capture: a call, no GPU sample */
    ev = host_event(GT_EV_KERNEL, 1, 3000, 3050);
    ev.name = k;
    ev.api = launch;
    ev.flags = GT_EVF_CAPTURED;
    gt_report_add(f.r, &ev);
    /* timing on but this launch never got a GPU time */
    ev.flags = 0;
    gt_report_add(f.r, &ev);

    const gt_row *row = find_row(f.r, GT_CAT_KERNEL, k, 0, 0);
    assert_non_null(row);
    assert_int_equal(row->calls, 4);
    assert_int_equal(row->time.count, 2);
    assert_int_equal(row->time.total, 1000);
    assert_int_equal(row->time.first, 400);
    assert_int_equal(row->api_ns_total, 100 + 100 + 50 + 50);
    assert_int_equal(gt_report_event_count(f.r), 4);
    drop(&f);
}

static void test_graph_launch_row(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_ALL, GT_GPU_TIMING_EVENTS);
    gt_event ev = host_event(GT_EV_GRAPH, 1, 0, 10);
    set_gpu(&ev, 100, 900);
    gt_report_add(f.r, &ev);
    const gt_row *row = find_row(f.r, GT_CAT_KERNEL, 0, 1, 0);
    assert_non_null(row);
    assert_int_equal(row->calls, 1);
    assert_int_equal(row->time.total, 800);
    assert_int_equal(f.r->tables[GT_CAT_KERNEL].nrows, 1);
    drop(&f);
}

/* With GPU timing off the GPU columns hold the host wall time (SPEC §6). */
static void test_timing_off_uses_host_time(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_ALL, GT_GPU_TIMING_OFF);
    gt_event ev = host_event(GT_EV_KERNEL, 1, 1000, 1750);
    ev.name = intern(f.names, "k");
    gt_report_add(f.r, &ev);
    const gt_row *row = find_row(f.r, GT_CAT_KERNEL, ev.name, 0, 0);
    assert_int_equal(row->time.total, 750);
    assert_int_equal(gt_gpu_busy_ns(&f.r->busy), 0); /* no GPU interval is known */
    drop(&f);
}

static gt_event copy_event(uint8_t dir, uint8_t host_mem, bool async, uint64_t bytes,
                           uint64_t gpu_ns)
{
    gt_event ev = host_event(GT_EV_MEMCPY, 1, 0, 10);
    ev.u.copy.dir = dir;
    ev.u.copy.host_mem = host_mem;
    ev.flags = async ? GT_EVF_ASYNC : 0;
    ev.bytes = bytes;
    set_gpu(&ev, 1000, 1000 + gpu_ns);
    return ev;
}

static void test_memcpy_keys_and_bandwidth(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_ALL, GT_GPU_TIMING_EVENTS);
    gt_event a = copy_event(GT_DIR_HTOD, GT_HOST_PAGEABLE, false, 1000000, 100000);
    gt_event b = copy_event(GT_DIR_HTOD, GT_HOST_PAGEABLE, false, 3000000, 100000);
    gt_event c = copy_event(GT_DIR_HTOD, GT_HOST_PINNED, true, 500, 50);
    gt_event d = copy_event(GT_DIR_DTOH, GT_HOST_PAGEABLE, false, 8, 8);
    gt_event captured = copy_event(GT_DIR_HTOD, GT_HOST_PAGEABLE, false, 7777, 0);
    captured.flags = GT_EVF_CAPTURED;
    gt_report_add(f.r, &a);
    gt_report_add(f.r, &b);
    gt_report_add(f.r, &c);
    gt_report_add(f.r, &d);
    gt_report_add(f.r, &captured);
    assert_int_equal(f.r->tables[GT_CAT_MEMCPY].nrows, 3);
    const gt_row *row = find_row(f.r, GT_CAT_MEMCPY, GT_DIR_HTOD, GT_HOST_PAGEABLE, 0);
    assert_int_equal(row->calls, 3);
    assert_int_equal(row->bytes, 4007777);
    /* 4 MB in 200 us of GPU time = 20 GB/s; the captured copy has no time */
    assert_int_equal(row->timed_bytes, 4000000);
    assert_int_equal(row->time.total, 200000);
    row = find_row(f.r, GT_CAT_MEMCPY, GT_DIR_HTOD, GT_HOST_PINNED, 1);
    assert_non_null(row);
    assert_int_equal(row->calls, 1);
    drop(&f);
}

static void test_memset_rows(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_ALL, GT_GPU_TIMING_EVENTS);
    gt_event ev = host_event(GT_EV_MEMSET, 1, 0, 10);
    ev.bytes = 4096;
    set_gpu(&ev, 0, 300);
    gt_report_add(f.r, &ev);
    ev.flags |= GT_EVF_ASYNC;
    gt_report_add(f.r, &ev);
    gt_report_add(f.r, &ev);
    assert_int_equal(find_row(f.r, GT_CAT_MEMSET, 0, 0, 0)->calls, 1);
    const gt_row *async = find_row(f.r, GT_CAT_MEMSET, 1, 0, 0);
    assert_int_equal(async->calls, 2);
    assert_int_equal(async->bytes, 8192);
    assert_int_equal(async->time.total, 600);
    drop(&f);
}

static void test_compile_and_module(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_ALL, GT_GPU_TIMING_EVENTS);
    uint32_t nvrtc = intern(f.names, "nvrtcCompileProgram");
    uint32_t prog = intern(f.names, "rhs.cu");
    gt_event ev = host_event(GT_EV_COMPILE, 1, 0, 5000000);
    ev.api = nvrtc;
    ev.name = prog;
    ev.bytes = 1200;
    gt_report_add(f.r, &ev);
    ev.result = 6; /* NVRTC_ERROR_COMPILATION */
    gt_report_add(f.r, &ev);
    const gt_row *ok = find_row(f.r, GT_CAT_COMPILE, nvrtc, prog, 1);
    const gt_row *failed = find_row(f.r, GT_CAT_COMPILE, nvrtc, prog, 0);
    assert_non_null(ok);
    assert_non_null(failed);
    assert_int_equal(ok->calls, 1);
    assert_int_equal(failed->calls, 1);
    assert_int_equal(ok->time.total, 5000000);
    assert_int_equal(ok->bytes, 1200);

    uint32_t load = intern(f.names, "cuModuleLoadData");
    ev = host_event(GT_EV_MODULE, 1, 0, 2000);
    ev.api = load;
    ev.u.module.image_kind = GT_IMAGE_PTX;
    ev.bytes = 300;
    gt_report_add(f.r, &ev);
    gt_report_add(f.r, &ev);
    ev.u.module.image_kind = GT_IMAGE_CUBIN;
    gt_report_add(f.r, &ev);
    ev.result = 200; /* a failed load loaded nothing */
    gt_report_add(f.r, &ev);
    const gt_row *ptx = find_row(f.r, GT_CAT_MODULE, load, GT_IMAGE_PTX, 0);
    assert_int_equal(ptx->calls, 2);
    assert_int_equal(ptx->bytes, 600);
    assert_int_equal(ptx->time.total, 4000);
    assert_int_equal(find_row(f.r, GT_CAT_MODULE, load, GT_IMAGE_CUBIN, 0)->calls, 1);
    drop(&f);
}

static void test_sync_and_blocking_calls(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_ALL, GT_GPU_TIMING_EVENTS);
    uint32_t sync = intern(f.names, "cuStreamSynchronize");
    uint32_t copy = intern(f.names, "cuMemcpyDtoH_v2");
    gt_event ev = host_event(GT_EV_SYNC, 1, 0, 7000);
    ev.api = sync;
    gt_report_add(f.r, &ev);
    ev = copy_event(GT_DIR_DTOH, GT_HOST_PAGEABLE, false, 100, 10);
    ev.host_end = 3000;
    ev.api = copy;
    ev.flags |= GT_EVF_BLOCKING;
    gt_report_add(f.r, &ev);
    assert_int_equal(find_row(f.r, GT_CAT_SYNC, sync, 0, 0)->time.total, 7000);
    const gt_row *blocked = find_row(f.r, GT_CAT_SYNC, copy, 0, 0);
    assert_non_null(blocked);
    assert_int_equal(blocked->time.total, 3000);
    assert_int_equal(find_row(f.r, GT_CAT_MEMCPY, GT_DIR_DTOH, GT_HOST_PAGEABLE, 0)->calls, 1);
    drop(&f);
}

static void test_api_rows_and_errors(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_ALL, GT_GPU_TIMING_EVENTS);
    uint32_t malloc_api = intern(f.names, "cudaMalloc");
    uint32_t oom = intern(f.names, "cudaErrorMemoryAllocation");
    gt_event ev = host_event(GT_EV_API, 1, 100, 350);
    ev.api = malloc_api;
    gt_report_add(f.r, &ev);
    ev.result = 2;
    ev.error = oom;
    gt_report_add(f.r, &ev);
    gt_report_add(f.r, &ev);
    ev.error = 0; /* a status the shim could not name */
    ev.result = 999;
    gt_report_add(f.r, &ev);
    /* no api id: nothing to count in the api table */
    gt_event anonymous = host_event(GT_EV_SYNC, 1, 0, 10);
    gt_report_add(f.r, &anonymous);

    const gt_row *row = find_row(f.r, GT_CAT_API, malloc_api, 0, 0);
    assert_int_equal(row->calls, 4);
    assert_int_equal(row->time.total, 1000);
    assert_int_equal(row->nerrors, 2);
    assert_int_equal(row->errors[0].name, oom);
    assert_int_equal(row->errors[0].count, 2);
    assert_int_equal(row->errors[1].result, 999);
    assert_int_equal(f.r->tables[GT_CAT_API].nrows, 1);
    assert_int_equal(gt_report_event_count(f.r), 5);
    drop(&f);
}

static void test_disabled_categories_stay_empty(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_BIT(GT_CAT_MEMSET), GT_GPU_TIMING_EVENTS);
    uint32_t api = intern(f.names, "cuLaunchKernel");
    gt_event events[] = {
        kernel_event(intern(f.names, "k"), 1, 0, 0, 10),
        copy_event(GT_DIR_HTOD, GT_HOST_PINNED, true, 10, 10),
        mem_event(GT_EV_ALLOC, 1, 0, 0x1000, 10, GT_MEM_DEVICE, 0),
        host_event(GT_EV_COMPILE, 1, 0, 1),
        host_event(GT_EV_MODULE, 1, 0, 1),
        host_event(GT_EV_SYNC, 1, 0, 1),
        nvtx_event(GT_EV_NVTX_PUSH, 1, 0, 0, intern(f.names, "r"), 0),
    };
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
        events[i].api = api;
        events[i].flags |= GT_EVF_BLOCKING;
        gt_report_add(f.r, &events[i]);
    }
    gt_report_finish(f.r, 100);
    for (unsigned c = 0; c < GT_CAT_COUNT; c++)
        assert_int_equal(f.r->tables[c].nrows, 0);
    assert_int_equal(f.r->memory.ndevices, 0);
    assert_int_equal(f.r->nvtx.counts.open_at_exit, 0);
    assert_int_equal(gt_report_event_count(f.r), 7);
    /* GPU busy time is that of the work recorded: kernels and copies are off */
    assert_int_equal(gt_gpu_busy_ns(&f.r->busy), 0);
    drop(&f);
}

static void test_failed_work_is_not_work(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_ALL, GT_GPU_TIMING_EVENTS);
    gt_event ev = kernel_event(intern(f.names, "k"), 1, 0, 0, 10);
    ev.result = 1;
    gt_report_add(f.r, &ev);
    ev = mem_event(GT_EV_ALLOC, 1, 0, 0x1000, 10, GT_MEM_DEVICE, 0);
    ev.result = 2;
    gt_report_add(f.r, &ev);
    assert_int_equal(f.r->tables[GT_CAT_KERNEL].nrows, 0);
    assert_int_equal(f.r->memory.ndevices, 0);
    drop(&f);
}

/* Report order: total time descending, ties by name. */
static void test_sorted_rows(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_ALL, GT_GPU_TIMING_EVENTS);
    const char *names[] = {"b_small", "z_big", "a_small", "m_mid"};
    const uint64_t gpu[] = {10, 1000, 10, 500};
    for (int i = 0; i < 4; i++) {
        gt_event ev = kernel_event(intern(f.names, names[i]), 1, 0, 0, gpu[i]);
        gt_report_add(f.r, &ev);
    }
    size_t n;
    gt_sorted_row *rows = gt_report_sorted_rows(f.r, GT_CAT_KERNEL, &n);
    assert_int_equal(n, 4);
    assert_string_equal(rows[0].text[0], "z_big");
    assert_string_equal(rows[1].text[0], "m_mid");
    assert_string_equal(rows[2].text[0], "a_small");
    assert_string_equal(rows[3].text[0], "b_small");
    free(rows);
    drop(&f);
}

/* Enough distinct names to grow the row index many times. */
static void test_many_rows(void **unused)
{
    (void)unused;
    fixture f = make(GT_CAT_ALL, GT_GPU_TIMING_EVENTS);
    enum { N = 10000 };
    static uint32_t ids[N];
    char name[32];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            snprintf(name, sizeof(name), "kernel_%d", i);
            ids[i] = intern(f.names, name);
            gt_event ev = kernel_event(ids[i], 1, 0, 0, (uint64_t)i + 1);
            gt_report_add(f.r, &ev);
        }
    }
    assert_int_equal(f.r->tables[GT_CAT_KERNEL].nrows, N);
    for (int i = 0; i < N; i++) {
        const gt_row *row = find_row(f.r, GT_CAT_KERNEL, ids[i], 0, 0);
        assert_non_null(row);
        assert_int_equal(row->calls, 2);
        assert_int_equal(row->time.total, 2 * ((uint64_t)i + 1));
    }
    drop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_rows),
        cmocka_unit_test(test_graph_launch_row),
        cmocka_unit_test(test_timing_off_uses_host_time),
        cmocka_unit_test(test_memcpy_keys_and_bandwidth),
        cmocka_unit_test(test_memset_rows),
        cmocka_unit_test(test_compile_and_module),
        cmocka_unit_test(test_sync_and_blocking_calls),
        cmocka_unit_test(test_api_rows_and_errors),
        cmocka_unit_test(test_disabled_categories_stay_empty),
        cmocka_unit_test(test_failed_work_is_not_work),
        cmocka_unit_test(test_sorted_rows),
        cmocka_unit_test(test_many_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
