/* The CSV report.
 *
 * Run with no arguments: cmocka tests of the header, the rows of each
 * category, quoting and the fields left empty.
 * Run as `--emit HEXNAME...`: prints the CSV of the sample run plus
 * kernels and NVTX ranges named by the given names (hex-encoded bytes,
 * any byte allowed), longest first, for report_csv_check.py to parse back
 * with python3's csv module. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csv.h"
#include "event.h"
#include "hex_names.h"
#include "report.h"
#include "report_sample.h"
#include "strtab.h"

#define HEADER                                                                                     \
    "category,name,calls,total_ns,avg_ns,med_ns,min_ns,max_ns,stddev_ns,first_ns,rest_avg_ns,"     \
    "bytes,gbps,display_name,clock,time_pct,pid,host\r\n"

static char *csv_of(const gt_report *r)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(gt_report_write_csv(r, NULL, f), 0);
    fclose(f);
    return buf;
}

static int count_records(const char *csv)
{
    int n = 0;
    for (const char *p = csv; (p = strstr(p, "\r\n")); p += 2)
        n++;
    return n;
}

/* The times of the first and the last mark in a domain. */
static void note_marks(void *ctx, const gt_report *r, const gt_event *ev)
{
    (void)r;
    uint64_t *t = ctx;
    if (ev->kind != GT_EV_NVTX_MARK || !ev->u.nvtx.domain) return;
    if (!t[0]) t[0] = ev->host_start;
    t[1] = ev->host_start;
}

static void test_sample_rows(void **unused)
{
    (void)unused;
    sample s;
    uint64_t mark_times[2] = {0, 0};
    sample_init(&s, NULL);
    s.also = note_marks;
    s.ctx = mark_times;
    sample_run(&s);
    char *csv = csv_of(s.r);
    assert_memory_equal(csv, HEADER, strlen(HEADER));
    /* 3 kernels, 4 copies, 3 memory rows x 2, 1 compile, 1 module, 3 sync, 2 nvtx, 2 marks,
     * 12 api */
    assert_int_equal(count_records(csv), 1 + 3 + 4 + 6 + 1 + 1 + 3 + 2 + 2 + 12);
    assert_non_null(strstr(csv,
                           "\r\nkernel,\"" SAMPLE_RK4_NAME "\",12,24660000,2055000,2055000,"
                           "2000000,2110000,36056,2000000,2060000,,,\"ode::rk4_integrate<double, "
                           "ode::lorenz_rhs<double>, 4>\",gpu,98.838,,\"\"\r\n"));
    assert_non_null(strstr(csv, "\r\nmemcpy,\"HtoD pinned async\",12,480000,40000,40000,40000,"
                                "40000,0,40000,40000,6291456,13.107,\"HtoD pinned async\",gpu,"
                                "16.961,,\"\"\r\n"));
    assert_non_null(strstr(csv, "\r\nmemory,\"GPU 0\",2,,,,,,,,,83886080,,\"GPU 0\",,,,\"\"\r\n"));
    assert_non_null(strstr(
        csv, "\r\nmemory,\"GPU 0 leaked\",1,,,,,,,,,67108864,,\"GPU 0 leaked\",,,,\"\"\r\n"));
    assert_non_null(
        strstr(csv, "\r\nmemory,\"host pinned\",1,,,,,,,,,33554432,,\"host pinned\",,,,\"\"\r\n"));
    assert_non_null(strstr(csv, "\r\ncompile,\"nvrtcCompileProgram lorenz_rhs.cu\",1,80000000,"));
    assert_non_null(strstr(csv, "\r\nmodule,\"cuModuleLoadData ptx\",1,35000000,"));
    assert_non_null(strstr(csv, "\r\nsync,\"cuStreamSynchronize\",12,30000000,2500000,"));
    assert_non_null(strstr(csv, "\r\nnvtx,\"chunk\",12,"));
    /* marks: the count, then the first and last time (no process given: from 0) */
    char mark[128];
    snprintf(mark, sizeof mark,
             "\r\nnvtx_mark,\"ode:step size halved\",3,,,,%llu,%llu,,,,,,\"ode:step size "
             "halved\",,,,\"\"\r\n",
             (unsigned long long)mark_times[0], (unsigned long long)mark_times[1]);
    assert_non_null(strstr(csv, mark));
    assert_true(strstr(csv, "\r\nnvtx,") < strstr(csv, "\r\nnvtx_mark,"));
    assert_true(strstr(csv, "\r\nnvtx_mark,") < strstr(csv, "\r\napi,"));
    assert_non_null(strstr(csv, "\r\napi,\"cuMemAlloc_v2\",4,75000,18750,20000,15000,20000,2500,"
                                "20000,18333,,,\"cuMemAlloc_v2\",host,0.051,,\"\"\r\n"));
    /* categories in report order */
    assert_true(strstr(csv, "\r\nkernel,") < strstr(csv, "\r\nmemcpy,"));
    assert_true(strstr(csv, "\r\nnvtx,") < strstr(csv, "\r\napi,"));
    free(csv);
    sample_free(&s);
}

static void test_quoting_and_empty_fields(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_report_options opt = {.categories = GT_CAT_BIT(GT_CAT_KERNEL) | GT_CAT_BIT(GT_CAT_MEMCPY)};
    gt_report *r = gt_report_create(&opt, names);
    gt_event ev = kernel_event(intern(names, "f<\"a\", b>\r\nx\xff"), 1, 0, 0, 1500);
    gt_report_add(r, &ev);
    ev = kernel_event(intern(names, "untimed"), 1, 0, 0, 0);
    ev.flags = GT_EVF_CAPTURED; /* no GPU time: the time fields are empty */
    gt_report_add(r, &ev);
    ev = host_event(GT_EV_MEMCPY, 1, 0, 10);
    ev.u.copy.dir = GT_DIR_HTOD;
    ev.u.copy.host_mem = GT_HOST_PINNED;
    ev.flags = GT_EVF_ASYNC | GT_EVF_CAPTURED; /* no time: no bandwidth either */
    ev.bytes = 1024;
    gt_report_add(r, &ev);
    char *csv = csv_of(r);
    const char *want =
        HEADER "kernel,\"f<\"\"a\"\", b>??x\xEF\xBF\xBD\",1,1500,1500,1500,1500,"
               "1500,0,1500,0,,,\"f<\"\"a\"\", b>??x\xEF\xBF\xBD\",gpu,100.000,,\"\"\r\n"
               "kernel,\"untimed\",1,,,,,,,,,,,\"untimed\",,,,\"\"\r\n"
               "memcpy,\"HtoD pinned async\",1,,,,,,,,,1024,,\"HtoD pinned async\",,,,"
               "\"\"\r\n";
    assert_string_equal(csv, want);
    free(csv);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
}

/* A name a spreadsheet would run as a formula is text in the CSV: a
 * leading = + - @ gets a ' in front (a tab or CR first, the other two
 * such starts, are control characters: '?'), and no control character
 * (ESC, CR, C1) reaches the file; one inside a name is no formula. */
static void test_formulas_and_controls(void **unused)
{
    (void)unused;
    static const char *const names[][2] = {
        {"=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""},
        {"+cmd|' /C calc'!A0", "\"'+cmd|' /C calc'!A0\""},
        {"-2+3", "\"'-2+3\""},
        {"@SUM(A1)", "\"'@SUM(A1)\""},
        {"\t=1", "\"?=1\""},
        {"\r=1", "\"?=1\""},
        {"esc\x1b]52;c;aGk=\x07", "\"esc?]52;c;aGk=?\""},
        {"c1\xc2\x9b"
         "31m",
         "\"c1?31m\""},
        {"a=b", "\"a=b\""},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        assert_non_null(f);
        gt_csv_write_name(f, names[i][0]);
        fclose(f);
        assert_string_equal(buf, names[i][1]);
        free(buf);
    }
}

static void test_disabled_categories_have_no_rows(void **unused)
{
    (void)unused;
    sample s;
    gt_report_options opt = {.categories = GT_CAT_BIT(GT_CAT_SYNC)};
    sample_build(&s, &opt);
    char *csv = csv_of(s.r);
    assert_int_equal(count_records(csv), 1 + 3);
    assert_null(strstr(csv, "\r\nkernel,"));
    assert_null(strstr(csv, "\r\nmemory,"));
    free(csv);
    sample_free(&s);
}

static int emit(int argc, char **argv)
{
    sample s;
    sample_build(&s, NULL);
    int n = argc - 2;
    for (int i = 0; i < n; i++) {
        uint32_t name = intern_hex(s.names, argv[2 + i]);
        /* longer than any kernel or range of the sample, earlier names longer */
        uint64_t t = SAMPLE_END + (uint64_t)i * 1000000000, len = 500000000 - (uint64_t)i * 1000;
        gt_event ev = kernel_event(name, 1, t, t, t + len);
        gt_report_add(s.r, &ev);
        ev = nvtx_event(GT_EV_NVTX_PUSH, 1, t, 0, name, 0);
        gt_report_add(s.r, &ev);
        ev = nvtx_event(GT_EV_NVTX_POP, 1, t + len, 0, 0, 0);
        gt_report_add(s.r, &ev);
    }
    int rc = gt_report_write_csv(s.r, &s.p, stdout);
    sample_free(&s);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--emit") == 0) return emit(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_rows),
        cmocka_unit_test(test_quoting_and_empty_fields),
        cmocka_unit_test(test_formulas_and_controls),
        cmocka_unit_test(test_disabled_categories_have_no_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
