/* Reading a JSON report back (report/read/load.c).
 *
 * Round trips: the sample run (report_sample.h) and variants of it (some
 * categories off, GPU timing off, a graph launch, an unnamed failure,
 * deep NVTX ranges in two domains) are written as JSON, read back, and
 * written again in every format: the JSON must come out byte for byte
 * the same, and the summary at every verbosity and the CSV exactly as
 * the original report writes them. Then what the reader refuses, each
 * with its one line: not JSON, not a report, another schema, a file cut
 * short, nesting too deep, numbers out of range, wrong types, a row given
 * twice, a directory, a missing file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "event.h"
#include "load.h"
#include "report.h"
#include "report_round_trip.h"
#include "report_sample.h"
#include "settings.h"
#include "strtab.h"

static void test_sample_round_trip(void **unused)
{
    (void)unused;
    sample s;
    sample_build(&s, NULL);
    check_round_trip(s.r, &s.p);
    sample_free(&s);
}

static void test_options_round_trip(void **unused)
{
    (void)unused;
    gt_report_options opts[] = {
        {GT_CAT_BIT(GT_CAT_KERNEL) | GT_CAT_BIT(GT_CAT_MEMORY), GT_VERB_VERBOSE,
         GT_GPU_TIMING_EVENTS},
        {GT_CAT_ALL & ~GT_CAT_BIT(GT_CAT_API), GT_VERB_DEFAULT, GT_GPU_TIMING_OFF},
        {0, GT_VERB_NONE, GT_GPU_TIMING_EVENTS},
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        sample s;
        sample_build(&s, &opts[i]);
        check_round_trip(s.r, &s.p);
        sample_free(&s);
    }
}

/* Capture windows and snapshots read back: a limited capture, one with no
 * window (its reason), a snapshot, a final report made on a signal. */
static void test_capture_and_snapshot_round_trip(void **unused)
{
    (void)unused;
    static const struct {
        enum gt_capture_mode kind;
        const char *mode;
        uint64_t windows, opens, delay;
        bool final;
        int signal;
    } cases[] = {
        {GT_CAPTURE_PROFILER, "profiler-api", 3, 3, 0, true, 0},
        {GT_CAPTURE_NVTX, "nvtx:step@lib", 0, 2, 2000000000u, false, 0},
        {GT_CAPTURE_ALL, "all", 1, 1, 500000000u, true, 11},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sample s;
        sample_build(&s, NULL);
        gt_capture_info c;
        memset(&c, 0, sizeof c);
        c.kind = cases[i].kind;
        snprintf(c.mode, sizeof c.mode, "%s", cases[i].mode);
        c.windows = cases[i].windows;
        c.mode_opens = cases[i].opens;
        c.delay_ns = cases[i].delay;
        c.captured_ns = cases[i].windows * 1000u;
        gt_report_set_capture(s.r, &c);
        gt_report_set_snapshot(s.r, s.p.end_ns, cases[i].final, cases[i].signal);
        check_round_trip(s.r, &s.p);
        sample_free(&s);
    }
}

/* A graph launch, an untimed (captured) kernel, memsets, a failed
 * compilation, a failure the shim had no name for, memory released with
 * its context, dropped, late and pending events, GPU timing off for a
 * reason, and NVTX ranges nested in two domains with one still open at
 * the end. */
static void test_unusual_rows_round_trip(void **unused)
{
    (void)unused;
    sample s;
    sample_init(&s, NULL);
    sample_run(&s);
    gt_event ev = sample_call(&s, GT_EV_GRAPH, "cuGraphLaunch", 3000);
    sample_gpu(&s, &ev, 70000);
    sample_add(&s, ev);
    ev = sample_call(&s, GT_EV_KERNEL, "cuLaunchKernel", 2000);
    ev.name = intern(s.names, "captured_kernel");
    ev.flags |= GT_EVF_CAPTURED;
    sample_add(&s, ev);
    for (unsigned i = 0; i < 3; i++) {
        ev = sample_call(&s, GT_EV_MEMSET, i ? "cuMemsetD8Async" : "cuMemsetD8_v2", 1000);
        ev.bytes = 4096u << i;
        ev.flags |= i ? GT_EVF_ASYNC : GT_EVF_BLOCKING;
        sample_gpu(&s, &ev, 3000 + 1000 * i);
        sample_add(&s, ev);
    }
    ev = sample_call(&s, GT_EV_COMPILE, "nvrtcCompileProgram", 5000000);
    ev.name = intern(s.names, "broken.cu");
    ev.result = 6;
    ev.error = intern(s.names, "NVRTC_ERROR_COMPILATION");
    sample_add(&s, ev);
    ev = sample_call(&s, GT_EV_API, "cuCtxGetFlags", 100);
    ev.result = 9999;
    sample_add(&s, ev);
    /* Memory released with its context; events after the cut, GPU work
     * still pending, GPU timing that could not work. */
    ev = sample_call(&s, GT_EV_ALLOC, "cuMemAlloc_v2", 20000);
    ev.u.mem.addr = 0x720000000000ull;
    ev.u.mem.ctx = 0x5c;
    ev.bytes = 3u << 20;
    sample_add(&s, ev);
    ev = sample_call(&s, GT_EV_CTX_END, "cuCtxDestroy_v2", 30000);
    ev.u.mem.ctx = 0x5c;
    sample_add(&s, ev);
    gt_report_set_counts(
        s.r, &(gt_report_counts){.dropped = 17, .late = 40, .late_gpu_work = 6, .gpu_pending = 3});
    gt_report_set_gpu_timing_off(s.r, "the driver has no cuEventQuery");
    uint32_t dom = intern(s.names, "io"), tid = 77;
    const char *levels[] = {"outer", "mid", "inner", "innermost"};
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned d = 0; d < 4; d++)
            sample_add(&s, nvtx_event(GT_EV_NVTX_PUSH, tid, s.t += 1000, d % 2 ? dom : 0,
                                      intern(s.names, levels[d]), 0));
        for (unsigned d = 4; d-- > 0;)
            sample_add(
                &s, nvtx_event(GT_EV_NVTX_POP, tid, s.t += 1000 * (d + 1), d % 2 ? dom : 0, 0, 0));
    }
    sample_add(&s, nvtx_event(GT_EV_NVTX_PUSH, tid, s.t += 10, 0, intern(s.names, "left open"), 0));
    sample_add(&s, nvtx_event(GT_EV_NVTX_MARK, tid, s.t += 10, 0, intern(s.names, "mark"), 0));
    gt_report_finish(s.r, SAMPLE_END);
    check_round_trip(s.r, &s.p);
    sample_free(&s);
}

/* The reader's error for json, which must contain `want`. */
static void expect_refused(const char *json, const char *want)
{
    gt_strtab *names = gt_strtab_create();
    char err[GT_LOAD_ERROR_MAX] = "";
    gt_report *r = load_text(json, names, err);
    if (r) fail_msg("accepted: %.200s", json);
    if (!strstr(err, want)) fail_msg("error '%s' does not say '%s'", err, want);
    assert_int_equal(strncmp(err, "r.json: ", 8), 0);
    assert_null(strchr(err, '\n'));
    gt_strtab_destroy(names);
}

/* The sample's JSON with `from` replaced by `to` (once). */
static char *sample_json_with(const char *from, const char *to)
{
    sample s;
    sample_build(&s, NULL);
    char *json = render(gt_report_write_json, s.r, &s.p);
    sample_free(&s);
    char *at = strstr(json, from);
    assert_non_null(at);
    size_t head = (size_t)(at - json), flen = strlen(from), tlen = strlen(to);
    char *out = malloc(strlen(json) - flen + tlen + 1);
    assert_non_null(out);
    memcpy(out, json, head);
    memcpy(out + head, to, tlen);
    strcpy(out + head + tlen, at + flen);
    free(json);
    return out;
}

static void expect_edit_refused(const char *from, const char *to, const char *want)
{
    char *json = sample_json_with(from, to);
    expect_refused(json, want);
    free(json);
}

static void test_refuses_what_is_not_a_report(void **unused)
{
    (void)unused;
    expect_refused("", "empty file");
    expect_refused("[1, 2]", "not a gputrace report: the JSON is not an object");
    expect_refused("{\"tool\": \"nsys\", \"schema\": 1}", "not a gputrace report");
    expect_refused("{\"schema\": 1}", "not a gputrace report");
    expect_refused("{\"tool\": \"gputrace\", \"schema\": 2}", "schema 2 is not supported");
    expect_refused("{\"tool\": \"gputrace\"}", "no schema number");
    expect_refused("{\"tool\": \"gputrace\", \"schema\": 1,", "truncated");
    expect_refused("{\"tool\": \"gputrace\", \"schema\": 1} x",
                   "not valid JSON at line 1, column 35");
    expect_refused("{\"tool\": \"gputrace\",\n \"schema\": 1, ]",
                   "not valid JSON at line 2, column 15");
    char deep[4000];
    memset(deep, '[', 3000);
    deep[3000] = '\0';
    expect_refused(deep, "nested deeper than 1000 levels");
    expect_refused("{\"tool\": \"gputrace\", \"schema\": 1}", "process: missing");
    /* cJSON refuses a lone surrogate escape: not valid JSON text. */
    expect_refused("{\"tool\": \"gputrace\", \"schema\": 1, \"x\": \"\\ud800\"}", "not valid JSON");
}

static void test_refuses_bad_values(void **unused)
{
    (void)unused;
    char *json = sample_json_with("", "");
    char *cut = strstr(json, "\"memcpy\"");
    assert_non_null(cut);
    *cut = '\0';
    expect_refused(json, "truncated");
    free(json);
    expect_edit_refused("\"events\": 264", "\"events\": -1", "totals.events: expected an integer");
    expect_edit_refused("\"events\": 264", "\"events\": 1e400",
                        "totals.events: expected an integer");
    expect_edit_refused("\"events\": 264", "\"events\": 2.5", "totals.events: expected an integer");
    expect_edit_refused("\"events\": 264", "\"events\": 18446744073709551616",
                        "totals.events: expected an integer");
    expect_edit_refused("\"events\": 264", "\"events\": \"264\"", "totals.events: expected");
    expect_edit_refused("\"total\": 24660000", "\"total\": null", "kernels[0].gpu_ns.total");
    expect_edit_refused("\"calls\": 12, \"gpu_ns\"", "\"gpu_ns\"", "kernels[0].calls: missing");
    expect_edit_refused("\"direction\": \"HtoD\"", "\"direction\": \"sideways\"",
                        "memcpy[0].direction: not a value this gputrace knows");
    expect_edit_refused("\"kernels\": [", "\"kernels\": 7, \"x\": [", "kernels: expected an array");
    expect_edit_refused("\"name\": \"reduce_status(int const*, int*, int)\"",
                        "\"name\": \"init_states(double*, int)\"",
                        "a second row with the same key");
    expect_edit_refused("\"device\": 1,", "\"device\": 0,", "a second row for the same device");
    expect_edit_refused("\"pid\": 4242", "\"pid\": 99999999999",
                        "process.pid: expected an integer");
}

/* Names hold whatever bytes the file has; they reach the writers, which
 * make them safe, and extra keys of a newer writer are carried along. */
static void test_accepts_hostile_names_and_extra_keys(void **unused)
{
    (void)unused;
    char *json =
        sample_json_with("\"name\": \"init_states(double*, int)\"",
                         "\"name\": \"bad \\u0000 \xff\xfe \\u00e9\", \"display_name\": 3");
    char *more = strstr(json, "\"dropped\"");
    assert_non_null(more);
    char *edited = NULL;
    assert_true(asprintf(&edited, "%.*s\"captured_events\": 5, \"label\": \"x\", %s",
                         (int)(more - json), json, more) > 0);
    char *tail = strrchr(edited, '}');
    *tail = '\0';
    char *full = NULL;
    assert_true(asprintf(&full, "%s, \"upcoming\": {\"mode\": \"all\", \"w\": [1, 2.5, \"\xc3\"]}}",
                         edited) > 0);
    gt_strtab *names = gt_strtab_create();
    char err[GT_LOAD_ERROR_MAX] = "";
    gt_report *r = load_text(full, names, err);
    if (!r) fail_msg("%s", err);
    char *out = render(gt_report_write_json, r, gt_report_process(r));
    assert_non_null(strstr(out, "\"captured_events\": 5"));
    assert_null(strstr(out, "\"label\""));
    assert_non_null(strstr(out, "\"upcoming\": {\"mode\":\"all\",\"w\":[1,2.5,\"\xef\xbf\xbd\"]}"));
    assert_non_null(strstr(out, "\"name\": \"bad \""));
    render_verbosity = GT_VERB_VERBOSE;
    free(render(summary_at, r, gt_report_process(r)));
    free(out);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
    free(full);
    free(edited);
    free(json);
}

static void test_files(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    char err[GT_LOAD_ERROR_MAX];
    assert_null(gt_report_load_file("/", names, err, sizeof err));
    assert_string_equal(err, "/: is a directory, not a report file");
    assert_null(gt_report_load_file("/nonexistent/r.json", names, err, sizeof err));
    assert_string_equal(err, "/nonexistent/r.json: No such file or directory");
    char path[] = "/tmp/gt-load-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    sample s;
    sample_build(&s, NULL);
    FILE *f = fdopen(fd, "w");
    assert_int_equal(gt_report_write_json(s.r, &s.p, f), 0);
    fclose(f);
    gt_report *r = gt_report_load_file(path, names, err, sizeof err);
    if (!r) fail_msg("%s", err);
    assert_int_equal(gt_report_process(r)->pid, SAMPLE_PID);
    assert_string_equal(gt_report_process(r)->command, s.p.command);
    gt_report_destroy(r);
    sample_free(&s);
    unlink(path);
    gt_strtab_destroy(names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_round_trip),
        cmocka_unit_test(test_options_round_trip),
        cmocka_unit_test(test_unusual_rows_round_trip),
        cmocka_unit_test(test_capture_and_snapshot_round_trip),
        cmocka_unit_test(test_refuses_what_is_not_a_report),
        cmocka_unit_test(test_refuses_bad_values),
        cmocka_unit_test(test_accepts_hostile_names_and_extra_keys),
        cmocka_unit_test(test_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
