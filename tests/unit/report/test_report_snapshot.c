/* Snapshots in the report: the JSON's last key and the text's line, and
 * what the gputrace command makes of them when the process died of a
 * signal (only a snapshot of that pid, written by these writers, is
 * changed). */
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

#define S 1000000000ull

typedef int (*writer_fn)(const gt_report *r, const gt_process_info *p, FILE *out);

static char *rendered(writer_fn write, const gt_report *r, const gt_process_info *p, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    assert_non_null(f);
    assert_int_equal(write(r, p, f), 0);
    fclose(f);
    return text;
}

static const gt_process_info proc = {
    .pid = 4242, .command = "srv", .start_ns = 10 * S, .end_ns = 12 * S};

static gt_report *snapshot_report(void)
{
    gt_report *r = gt_report_create(NULL, NULL);
    assert_non_null(r);
    gt_event k = host_event(GT_EV_KERNEL, 1, 11 * S, 11 * S + 100);
    gt_report_add(r, &k);
    gt_report_set_snapshot(r, 12 * S, false, 0);
    return r;
}

static void test_snapshot_written(void **unused)
{
    (void)unused;
    gt_report *r = snapshot_report();
    size_t len;
    char *json = rendered(gt_report_write_json, r, &proc, &len);
    const char *tail =
        "  \"snapshot\": {\"at_ns\": 12000000000, \"final\": false, \"signal\": 0}\n}";
    size_t end = len - (json[len - 1] == '\n'); /* the last key, then the end */
    assert_true(end > strlen(tail));
    assert_memory_equal(json + end - strlen(tail), tail, strlen(tail));
    free(json);
    char *text = rendered(gt_report_write_summary, r, &proc, &len);
    const char *line = strchr(text, '\n') + 1;
    const char *want = "gputrace: snapshot of pid 4242 at +2.00 s; the process was still running: "
                       "what it did after that is not in this report\n";
    assert_memory_equal(line, want, strlen(want));
    free(text);

    /* The final report: no line, final true, the signal that ended it. */
    gt_report_set_snapshot(r, 12 * S, true, 15);
    json = rendered(gt_report_write_json, r, &proc, &len);
    assert_non_null(strstr(json, "\"snapshot\": {\"at_ns\": 12000000000, \"final\": true, "
                                 "\"signal\": 15}"));
    free(json);
    text = rendered(gt_report_write_summary, r, &proc, &len);
    assert_null(strstr(text, "snapshot"));
    free(text);
    gt_report_destroy(r);
}

static void test_command_finishes_a_snapshot(void **unused)
{
    (void)unused;
    gt_report *r = snapshot_report();
    size_t len, out_len = 0;
    char *json = rendered(gt_report_write_json, r, &proc, &len);
    char *done = gt_snapshot_json_finish(json, len, 4242, 11, &out_len);
    assert_non_null(done);
    assert_int_equal(out_len, strlen(done));
    assert_non_null(strstr(done, "\"snapshot\": {\"at_ns\": 12000000000, \"final\": true, "
                                 "\"signal\": 11}"));
    assert_null(strstr(done, "\"final\": false"));
    /* Everything else as it was. */
    assert_memory_equal(done, json, (size_t)(strstr(json, "\"snapshot\": {") - json));
    /* Not twice, not another pid's. */
    assert_null(gt_snapshot_json_finish(done, out_len, 4242, 11, &out_len));
    assert_null(gt_snapshot_json_finish(json, len, 4243, 11, &out_len));
    assert_null(gt_snapshot_json_finish(json, len, 424, 11, &out_len));
    assert_null(gt_snapshot_json_finish("{}", 2, 4242, 11, &out_len));
    free(done);
    free(json);

    char *text = rendered(gt_report_write_summary, r, &proc, &len);
    done = gt_snapshot_text_finish(text, len, 4242, 9, &out_len);
    assert_non_null(done);
    const char *want = "gputrace: pid 4242 died of signal 9 (SIGKILL) after this snapshot at "
                       "+2.00 s: what it did after that is not in this report\n";
    const char *line = strchr(done, '\n') + 1;
    assert_memory_equal(line, want, strlen(want));
    assert_int_equal(out_len,
                     len - strlen(strchr(text, '\n') + 1) + strlen(strchr(done, '\n') + 1));
    assert_null(gt_snapshot_text_finish(done, out_len, 4242, 9, &out_len));
    assert_null(gt_snapshot_text_finish(text, len, 42, 9, &out_len));
    free(done);
    free(text);
    gt_report_destroy(r);
}

static void test_signal_names(void **unused)
{
    (void)unused;
    assert_string_equal(gt_signal_name(11), "SIGSEGV");
    assert_string_equal(gt_signal_name(6), "SIGABRT");
    assert_string_equal(gt_signal_name(64), "a signal");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_written),
        cmocka_unit_test(test_command_finishes_a_snapshot),
        cmocka_unit_test(test_signal_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
