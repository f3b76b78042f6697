/* From records to outputs: ticks converted, error names attached, debug
 * lines, the summary on the log and the report files. Ticks are ns here
 * (the clock_gettime source), so every figure is exact. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "collect.h"
#include "config.h"
#include "event.h"
#include "log.h"
#include "pb_read.h"
#include "pipeline.h"
#include "process.h"
#include "read_file.h"
#include "record.h"
#include "report.h"
#include "strtab.h"

static char dir[] = "/tmp/gt-collect-XXXXXX";
static char log_path[300], output[300];
static const char *env[8];
static uint32_t api_id, kernel_id, error_id;

static const char *fake_getenv(const char *name, void *ctx)
{
    (void)ctx;
    for (int i = 0; i < 8 && env[i]; i += 2)
        if (strcmp(env[i], name) == 0) return env[i + 1];
    return NULL;
}

static uint32_t name_error(const gt_event *ev)
{
    return ev->result == 1 ? error_id : 0;
}

static void finished(const gt_pipeline_totals *t, void *ctx)
{
    (void)ctx;
    gt_process_info p = {.pid = 42,
                         .ppid = 1,
                         .hostname = "host",
                         .command = "prog a b",
                         .start_ns = 0,
                         .end_ns = 10000000};
    gt_collect_finish(t, &p);
}

/* Configures from env[] (plus the log file), records four launches of
 * 1 ms each, the last failing, and finishes. */
static void run(const char *verbosity, const char *output_template, const char *formats)
{
    env[0] = "GPUTRACE_VERBOSITY", env[1] = verbosity;
    env[2] = "GPUTRACE_OUTPUT", env[3] = output_template;
    env[4] = "GPUTRACE_FORMAT", env[5] = formats;
    env[6] = "GPUTRACE_LOG", env[7] = log_path;
    unlink(log_path);
    gt_config_parse(&gt_cfg, fake_getenv, NULL);
    assert_int_equal(gt_cfg.n_warnings, 0);
    gt_log_init(gt_cfg.log_dest, gt_cfg.log_path, gt_cfg.verbosity);
    gt_clock_init(0);
    gt_collect_release();
    gt_collect_set_error_namer(name_error);
    gt_strtab *names = gt_names();
    api_id = gt_strtab_intern(names, "cuLaunchKernel", 14);
    kernel_id = gt_strtab_intern(names, "k\x1b[1m", 5);
    error_id = gt_strtab_intern(names, "CUDA_ERROR_INVALID_VALUE", 24);
    gt_pipeline_params p = {.chunk_bytes = 4096,
                            .cap_bytes = 1 << 20,
                            .consume = gt_collect_records,
                            .finished = finished};
    assert_int_equal(gt_pipeline_start(&p), 0);
    for (int i = 0; i < 4; i++) {
        gt_event *ev = gt_ev_begin();
        assert_non_null(ev);
        ev->kind = GT_EV_KERNEL;
        ev->api = api_id;
        ev->name = kernel_id;
        ev->result = i == 3;
        ev->host_start = 1000 + 2000000 * (uint64_t)i;
        ev->host_end = ev->host_start + 1000000;
        gt_ev_commit(ev);
    }
    assert_int_equal(gt_pipeline_finish(10000), 0);
}

/* The file's text, NULL when absent; with squeeze, spaces and newlines
 * removed (JSON layout is not what is checked, so "prog a b" reads
 * "progab"). */
static char *read_squeezed(const char *path, int squeeze)
{
    static char buf[65536];
    if (read_file(path, buf, sizeof buf) != 0) return NULL;
    if (squeeze) {
        char *w = buf;
        for (char *r = buf; *r; r++)
            if (*r != ' ' && *r != '\n') *w++ = *r;
        *w = '\0';
    }
    return buf;
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir)) return -1;
    snprintf(log_path, sizeof log_path, "%s/log", dir);
    snprintf(output, sizeof output, "%s/r.%%p", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_json_from_records(void **state)
{
    (void)state;
    run("default", output, "json");
    char path[400];
    snprintf(path, sizeof path, "%s/r.42.json", dir);
    char *json = read_squeezed(path, 1);
    assert_non_null(json);
    assert_non_null(
        strstr(json, "\"pid\":42,\"ppid\":1,\"hostname\":\"host\",\"command\":\"progab\""));
    assert_non_null(strstr(json, "\"events\":4,\"dropped\":0"));
    assert_non_null(
        strstr(json, "{\"name\":\"cuLaunchKernel\",\"calls\":4,\"wall_ns\":{\"total\":4000000,"));
    assert_non_null(strstr(json, "\"errors\":{\"CUDA_ERROR_INVALID_VALUE\":1}"));
    char *log = read_squeezed(log_path, 0);
    assert_non_null(log);
    assert_memory_equal(log, "gputrace: prog a b | wall 10.0 ms |", 35);
}

/* Debug: one line per record as it is consumed, the name escaped. */
static void test_debug_lines(void **state)
{
    (void)state;
    run("debug", "", "json");
    char *log = read_squeezed(log_path, 0);
    assert_non_null(log);
    char want[200];
    snprintf(want, sizeof want,
             "gputrace: debug: event tid %d seq 3 kernel cuLaunchKernel k\\x1b[1m result 1 host "
             "6001000+1000000 ns\n",
             (int)gettid());
    assert_non_null(strstr(log, want));
    assert_null(strchr(log, '\x1b'));
}

/* Verbosity none: nothing on the log, yet the text file is a summary. */
static void test_none_still_writes_files(void **state)
{
    (void)state;
    run("none", output, "text,json");
    assert_null(read_squeezed(log_path, 0));
    char path[400];
    snprintf(path, sizeof path, "%s/r.42.txt", dir);
    char *text = read_squeezed(path, 0);
    assert_non_null(text);
    assert_memory_equal(text, "gputrace: prog a b |", 20);
}

/* CSV written at the end, the traces streamed and completed: all in place
 * under their final names, nothing temporary left beside them. */
static void test_csv_and_trace_from_records(void **state)
{
    (void)state;
    run("none", output, "csv,chrome,perfetto");
    char path[400];
    snprintf(path, sizeof path, "%s/r.42.csv", dir);
    char *csv = read_squeezed(path, 0);
    assert_non_null(csv);
    /* the display name made safe as the name is; the process's pid and host */
    assert_non_null(strstr(csv, "\r\nkernel,\"k?[1m\",3,,,,,,,,,,,\"k?[1m\",,,42,\"host\"\r\n"));
    assert_non_null(strstr(csv, "\r\napi,\"cuLaunchKernel\",4,4000000,1000000,"));
    snprintf(path, sizeof path, "%s/r.42.trace.json", dir);
    char *trace = read_squeezed(path, 0);
    assert_non_null(trace);
    assert_memory_equal(trace, "{\"traceEvents\":[\n", 17);
    int slices = 0;
    for (const char *at = trace; (at = strstr(at, "\"name\":\"cuLaunchKernel\"")); at++)
        slices++;
    assert_int_equal(slices, 4);
    assert_non_null(strstr(trace, "\"error\":\"CUDA_ERROR_INVALID_VALUE\""));
    assert_non_null(strstr(trace, "\n],\"displayTimeUnit\":\"ns\"}\n"));
    /* The Perfetto trace: one packet (Trace field 1) of compressed
     * packets (field 50), the bundle of them all, the entry point's name
     * interned in them. */
    snprintf(path, sizeof path, "%s/r.42.pftrace", dir);
    static uint8_t pf[65536];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(pf, 1, sizeof pf, f);
    fclose(f);
    assert_true(n > 100 && n < sizeof pf);
    const uint8_t *at = pf;
    field packet, bundle;
    assert_true(next_field(&at, pf + n, &packet));
    assert_int_equal(packet.num, 1);
    assert_true(at == pf + n); /* the only one */
    assert_true(find_field(packet.data, packet.len, 50, &bundle));
    size_t inflated;
    uint8_t *packets = inflate_bundle(bundle.data, bundle.len, &inflated);
    assert_int_equal(packets[0], 0x0a);
    assert_non_null(memmem(packets, inflated, "cuLaunchKernel", 14));
    free(packets);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp", dir);
    assert_int_not_equal(system(cmd), 0);
}

/* Files that cannot be written (the JSON and the CSV, written at the end,
 * and the trace, streamed from the first record): one warning each, and
 * the summary still reaches the log. */
static void test_unwritable_and_unavailable(void **state)
{
    (void)state;
    char bad[400];
    snprintf(bad, sizeof bad, "%s/missing/r", dir);
    run("default", bad, "json,csv,chrome,perfetto");
    char *log = read_squeezed(log_path, 0);
    assert_non_null(log);
    char want[600];
    snprintf(want, sizeof want,
             "gputrace: warning: cannot write the report: %s/missing/r.json: ", dir);
    assert_non_null(strstr(log, want));
    snprintf(want, sizeof want,
             "gputrace: warning: cannot write the report: %s/missing/r.csv: cannot create the "
             "temporary file: No such file or directory\n",
             dir);
    assert_non_null(strstr(log, want));
    snprintf(want, sizeof want,
             "gputrace: warning: cannot write the report: %s/missing/r.trace.json: cannot create "
             "the temporary file: No such file or directory\n",
             dir);
    assert_non_null(strstr(log, want));
    snprintf(want, sizeof want,
             "gputrace: warning: cannot write the report: %s/missing/r.pftrace: cannot create "
             "the temporary file: No such file or directory\n",
             dir);
    assert_non_null(strstr(log, want));
    assert_non_null(strstr(log, "gputrace: prog a b | wall 10.0 ms |"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_from_records),
        cmocka_unit_test(test_debug_lines),
        cmocka_unit_test(test_none_still_writes_files),
        cmocka_unit_test(test_csv_and_trace_from_records),
        cmocka_unit_test(test_unwritable_and_unavailable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
