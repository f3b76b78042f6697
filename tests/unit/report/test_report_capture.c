/* What a report says about its capture windows: the summary's line for
 * each mode and each reason nothing was recorded, the JSON's `capture`,
 * and records made outside a window counting only towards memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "event.h"
#include "report.h"
#include "report_events.h"
#include "settings.h"

#define MS 1000000ull
#define S 1000000000ull

static gt_capture_info info(enum gt_capture_mode kind, const char *mode)
{
    gt_capture_info c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    snprintf(c.mode, sizeof c.mode, "%s", mode);
    return c;
}

static void expect_text(const gt_capture_info *c, uint64_t wall, const char *want)
{
    char text[GT_CAPTURE_TEXT_MAX];
    gt_capture_describe(c, wall, text, sizeof text);
    assert_string_equal(text, want);
}

static void test_describe(void **unused)
{
    (void)unused;
    gt_capture_info c = info(GT_CAPTURE_PROFILER, "profiler-api");
    c.windows = 3;
    c.mode_opens = 3;
    c.captured_ns = 1240 * MS;
    assert_true(gt_capture_limited(&c));
    expect_text(&c, 9870 * MS, "profiler-api, 3 windows, 1.24 s of 9.87 s");
    c.windows = 1;
    expect_text(&c, 9870 * MS, "profiler-api, 1 window, 1.24 s of 9.87 s");

    gt_capture_info t = info(GT_CAPTURE_ALL, "all");
    assert_false(gt_capture_limited(&t));
    t.delay_ns = 2 * S;
    t.duration_ns = 500 * MS;
    t.windows = 1;
    t.captured_ns = 500 * MS;
    assert_true(gt_capture_limited(&t));
    expect_text(&t, 5 * S, "all, after 2.00 s, for 500 ms, 1 window, 500 ms of 5.00 s");
}

/* With no window: why, in the order a user would look. */
static void test_why_nothing(void **unused)
{
    (void)unused;
    gt_capture_info c = info(GT_CAPTURE_PROFILER, "profiler-api");
    expect_text(&c, S,
                "profiler-api, nothing recorded: the program never called cuProfilerStart "
                "or cudaProfilerStart");
    c.delay_ns = 3 * S;
    c.mode_opens = 2;
    expect_text(&c, 2 * S,
                "profiler-api, after 3.00 s, nothing recorded: the process ended "
                "before the delay of 3.00 s was over");
    expect_text(&c, 4 * S,
                "profiler-api, after 3.00 s, nothing recorded: the profiler was "
                "started only outside the delay and duration");

    gt_capture_info n = info(GT_CAPTURE_NVTX, "nvtx:train step");
    expect_text(&n, S,
                "nvtx:train step, nothing recorded: no NVTX range 'train step' was "
                "opened in the default domain");
    n = info(GT_CAPTURE_NVTX, "nvtx:a@b@lib");
    expect_text(&n, S,
                "nvtx:a@b@lib, nothing recorded: no NVTX range 'a@b' was opened in "
                "domain 'lib'");
    n = info(GT_CAPTURE_NVTX, "nvtx:step@*");
    expect_text(&n, S,
                "nvtx:step@*, nothing recorded: no NVTX range 'step' was opened in any "
                "domain");
}

typedef int (*writer_fn)(const gt_report *r, const gt_process_info *p, FILE *out);

static char *rendered(writer_fn write, const gt_report *r, const gt_process_info *p)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(write(r, p, f), 0);
    fclose(f);
    return text;
}

#define json_of(r, p) rendered(gt_report_write_json, r, p)
#define summary_of(r, p) rendered(gt_report_write_summary, r, p)

static void test_json_and_summary(void **unused)
{
    (void)unused;
    gt_process_info p = {.pid = 1, .command = "prog", .start_ns = 1 * S, .end_ns = 11 * S};
    gt_report *r = gt_report_create(NULL, NULL);
    assert_non_null(r);
    /* Never told: everything, one window as long as the process. */
    char *json = json_of(r, &p);
    assert_non_null(strstr(json,
                           "\"capture\": {\"mode\": \"all\", \"windows\": 1, \"captured_ns\": "
                           "10000000000, \"delay_ns\": 0, \"duration_ns\": 0, \"mode_opens\": 1}"));
    free(json);
    char *text = summary_of(r, &p);
    assert_null(strstr(text, "capture:"));
    free(text);

    gt_capture_info c = info(GT_CAPTURE_NVTX, "nvtx:\x1b[31mred@dom");
    c.windows = 2;
    c.captured_ns = 2500 * MS;
    c.delay_ns = 1 * S;
    gt_report_set_capture(r, &c);
    json = json_of(r, &p);
    assert_non_null(strstr(json,
                           "\"capture\": {\"mode\": \"nvtx:\\u001b[31mred@dom\", \"windows\": "
                           "2, \"captured_ns\": 2500000000, \"delay_ns\": 1000000000, "
                           "\"duration_ns\": 0, \"mode_opens\": 0}"));
    free(json);
    text = summary_of(r, &p);
    /* The second line, the mode made safe for a terminal. */
    const char *line = strchr(text, '\n');
    assert_non_null(line);
    const char *want = "gputrace: capture: nvtx:?[31mred@dom, after 1.00 s, 2 windows, 2.50 s of "
                       "10.0 s\n";
    assert_memory_equal(line + 1, want, strlen(want));
    free(text);
    gt_report_destroy(r);
}

/* A record made outside a window is no event; an allocation or free made
 * there moves only the memory in use. */
static void test_uncaptured_records(void **unused)
{
    (void)unused;
    gt_report *r = gt_report_create(NULL, NULL);
    assert_non_null(r);
    gt_event k = host_event(GT_EV_KERNEL, 1, 10, 20);
    k.api = 3;
    k.flags |= GT_EVF_UNCAPTURED;
    gt_report_add(r, &k);
    gt_event a = mem_event(GT_EV_ALLOC, 1, 30, 0x1000, 4096, GT_MEM_DEVICE, 0);
    a.api = 4;
    a.flags |= GT_EVF_UNCAPTURED;
    gt_report_add(r, &a);
    assert_int_equal(gt_report_event_count(r), 0);
    assert_int_equal(r->tables[GT_CAT_KERNEL].nrows, 0);
    assert_int_equal(r->tables[GT_CAT_API].nrows, 0);
    assert_int_equal(r->memory.ndevices, 1);
    assert_int_equal(r->memory.devices[0].current_bytes, 4096);
    assert_int_equal(r->memory.devices[0].allocs, 0);
    /* Inside: counted as ever. */
    k.flags = 0;
    gt_report_add(r, &k);
    assert_int_equal(gt_report_event_count(r), 1);
    assert_int_equal(r->tables[GT_CAT_KERNEL].nrows, 1);
    gt_report_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_why_nothing),
        cmocka_unit_test(test_json_and_summary),
        cmocka_unit_test(test_uncaptured_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
