/* The terminal summary.
 *
 * Golden files: the sample run (report_sample.h) at each verbosity is
 * compared byte for byte with tests/golden/summary_<verbosity>.txt. Every
 * time in the sample is fixed, so nothing needs normalising. After a
 * deliberate change of layout, `unit_report_text --write-golden DIR`
 * rewrites them; review the difference before committing it.
 * Then the properties the goldens alone would not pin down: lines fit 120
 * columns at default, names are cut in the middle there and whole at
 * verbose, hostile names cannot reach the terminal, disabled categories
 * have no section, dropped events give a warning line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "event.h"
#include "report.h"
#include "utf8.h"
#include "report_sample.h"
#include "settings.h"
#include "strtab.h"
#include "text_table.h"
#include "utf8.h"

#ifndef GOLDEN_DIR
#error "GOLDEN_DIR must name tests/golden"
#endif

static const char *const verbosity_files[] = {"none", "default", "verbose", "debug"};

static char *summary_of(const gt_report *r, const gt_process_info *p, enum gt_verbosity v)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(gt_report_write_summary_at(r, p, v, f), 0);
    fclose(f);
    return buf;
}

static char *sample_summary(enum gt_verbosity v)
{
    sample s;
    sample_build(&s, NULL);
    char *text = summary_of(s.r, &s.p, v);
    sample_free(&s);
    return text;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, m);
    fclose(f);
    fclose(m);
    return buf;
}

static void golden_path(enum gt_verbosity v, const char *dir, char *path, size_t cap)
{
    snprintf(path, cap, "%s/summary_%s.txt", dir, verbosity_files[v]);
}

/* The first differing line, for a readable failure. */
static void report_difference(const char *want, const char *got)
{
    int line = 1;
    for (; *want && *want == *got; want++, got++)
        line += *want == '\n';
    const char *we = strchr(want, '\n'), *ge = strchr(got, '\n');
    print_error("line %d differs:\n want: %.*s\n  got: %.*s\n", line,
                (int)(we ? we - want : (long)strlen(want)), want,
                (int)(ge ? ge - got : (long)strlen(got)), got);
}

static void check_golden(enum gt_verbosity v)
{
    char path[1024];
    golden_path(v, GOLDEN_DIR, path, sizeof path);
    char *want = read_all(path);
    if (!want) fail_msg("cannot read %s", path);
    char *got = sample_summary(v);
    if (strcmp(want, got) != 0) {
        report_difference(want, got);
        fail_msg("%s does not match the summary", path);
    }
    free(want);
    free(got);
}

static void test_golden_default(void **unused)
{
    (void)unused;
    check_golden(GT_VERB_DEFAULT);
}

static void test_golden_verbose(void **unused)
{
    (void)unused;
    check_golden(GT_VERB_VERBOSE);
}

static void test_golden_debug(void **unused)
{
    (void)unused;
    check_golden(GT_VERB_DEBUG);
}

static void test_none_is_silent(void **unused)
{
    (void)unused;
    char *text = sample_summary(GT_VERB_NONE);
    assert_string_equal(text, "");
    free(text);
}

/* Display columns of each line; the widest. */
static size_t widest_line(const char *text)
{
    size_t widest = 0, w = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '\n') {
            if (w > widest) widest = w;
            w = 0;
        } else {
            w += (*p & 0xC0) != 0x80;
        }
    }
    return widest;
}

static void test_default_fits_and_verbose_is_whole(void **unused)
{
    (void)unused;
    char *text = sample_summary(GT_VERB_DEFAULT);
    assert_true(widest_line(text) <= GT_TEXT_WIDTH);
    /* kernels by their readable names; StdDev left out so that they fit */
    assert_null(strstr(text, SAMPLE_RK4_NAME));
    assert_non_null(strstr(text, "  ode::rk4_integrate<double, ode::lorenz_rhs<double>, 4>\n"));
    assert_non_null(strstr(text, "  reduce_status\n"));
    assert_null(strstr(text, "RestAvg")); /* the full statistics are verbose */
    free(text);
    text = sample_summary(GT_VERB_VERBOSE);
    assert_true(widest_line(text) > GT_TEXT_WIDTH);
    assert_non_null(strstr(text, SAMPLE_RK4_NAME "\n"));
    assert_non_null(strstr(text, "  First  RestAvg"));
    free(text);
}

/* A Numba kernel at verbose: its whole name, signature included, without
 * Numba's escapes and ABI tags; at default its readable name. */
static void test_numba_names(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_report *r = gt_report_create(NULL, names);
    gt_event ev = kernel_event(intern(names, "cudapy::m::f::_3clocals_3e::k[abi:v1]"
                                             "[abi:cw51cXTLSUwv1sDUaKthqqNgQ0](int)"),
                               1, 0, 0, 1000);
    gt_report_add(r, &ev);
    char *text = summary_of(r, NULL, GT_VERB_VERBOSE);
    assert_non_null(strstr(text, "  cudapy::m::f::<locals>::k(int)\n"));
    assert_null(strstr(text, "abi:"));
    free(text);
    text = summary_of(r, NULL, GT_VERB_DEFAULT);
    assert_non_null(strstr(text, "  cudapy::m::f::<locals>::k\n"));
    free(text);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
}

static char *summary_fit(const gt_report *r, const gt_process_info *p, unsigned width)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(gt_report_write_summary_fit(r, p, GT_VERB_DEFAULT, width, f), 0);
    fclose(f);
    return buf;
}

/* The summary fits the width it is given: StdDev, then Min and Max, are
 * left out before names are cut; the header starts with the program's
 * base name and cuts the command line at its end. */
static void test_width(void **unused)
{
    (void)unused;
    sample s;
    sample_build(&s, NULL);
    char *wide = summary_fit(s.r, &s.p, 200);
    assert_non_null(strstr(wide, "  StdDev  Name"));
    assert_non_null(strstr(wide, "ode::rk4_integrate<double, ode::lorenz_rhs<double>, 4>\n"));
    assert_non_null(strstr(wide, "gputrace: batch_ode --systems 65536 --chunks 12 | wall"));
    char *narrow = summary_fit(s.r, &s.p, 80);
    /* every table row fits but the one whose Errors column follows the name */
    for (const char *l = narrow; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        size_t len = strcspn(l, "\n");
        if (strncmp(l, "  ", 2) == 0 && memchr(l, '%', len) && !memmem(l, len, "CUDA_ERROR", 10))
            assert_true(len <= 80);
    }
    assert_null(strstr(narrow, "StdDev"));
    assert_non_null(strstr(narrow, "  Time%    Total  Calls      Avg      Med  Name\n"));
    /* the name kept what fits: its function, template arguments gone */
    assert_non_null(strstr(narrow, "  ode::rk4_integrate\n"));
    assert_non_null(strstr(narrow, "gputrace: batch_ode --"));
    /* narrower than 40 counts as 40 */
    char *tiny = summary_fit(s.r, &s.p, 10);
    assert_non_null(
        strstr(tiny, "\n  [sync-api] 13 synchronize calls\n      blocked the host for 30.1 ms\n"));
    free(tiny);
    free(narrow);
    free(wide);
    sample_free(&s);
}

/* Default shows the top rows and says how many more there are. */
static void test_top_rows(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_report *r = gt_report_create(NULL, names);
    for (int i = 0; i < 25; i++) {
        char name[32];
        snprintf(name, sizeof name, "k%02d", i);
        gt_event ev = kernel_event(intern(names, name), 1, 0, 0, 1000 * (uint64_t)(25 - i));
        gt_report_add(r, &ev);
    }
    char *text = summary_of(r, NULL, GT_VERB_DEFAULT);
    assert_non_null(strstr(text, "k09\n"));
    assert_null(strstr(text, "k10\n"));
    /* rows 10..24 hold 15+14+...+1 = 120 of 325 us */
    assert_non_null(strstr(text, "  ... 15 more, 36.9% of the time (verbose shows every row)\n"));
    free(text);
    text = summary_of(r, NULL, GT_VERB_VERBOSE);
    assert_non_null(strstr(text, "k24\n"));
    assert_null(strstr(text, "more,"));
    free(text);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
}

/* A failed call is never among the rows "... N more" stands for: an
 * entry point or a compile that failed is shown however little time it
 * took, after the top rows. */
static void test_failures_always_shown(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_report_options api = {.categories = GT_CAT_BIT(GT_CAT_API)};
    gt_report *r = gt_report_create(&api, names);
    for (int i = 0; i < 25; i++) {
        char name[32];
        snprintf(name, sizeof name, "cuCall%02d", i);
        gt_event ev = host_event(GT_EV_API, 1, 0, 1000 * (uint64_t)(25 - i));
        ev.api = intern(names, name);
        if (i == 24) {
            ev.result = 1;
            ev.error = intern(names, "CUDA_ERROR_INVALID_VALUE");
        }
        gt_report_add(r, &ev);
    }
    char *text = summary_of(r, NULL, GT_VERB_DEFAULT);
    assert_non_null(strstr(text, "  cuCall09\n"));
    assert_null(strstr(text, "cuCall10"));
    assert_non_null(strstr(text, "  cuCall24  CUDA_ERROR_INVALID_VALUE x1\n"));
    /* rows 10..23 hold 15+...+2 = 119 of 325 us */
    assert_non_null(strstr(text, "  ... 14 more, 36.6% of the time (verbose shows every row)\n"));
    free(text);
    gt_report_destroy(r);

    gt_report_options compile = {.categories = GT_CAT_BIT(GT_CAT_COMPILE)};
    r = gt_report_create(&compile, names);
    for (int i = 0; i < 12; i++) {
        char name[32];
        snprintf(name, sizeof name, "prog%02d.cu", i);
        gt_event ev = host_event(GT_EV_COMPILE, 1, 0, 1000 * (uint64_t)(12 - i));
        ev.api = intern(names, "nvrtcCompileProgram");
        ev.name = intern(names, name);
        ev.result = i == 11;
        gt_report_add(r, &ev);
    }
    text = summary_of(r, NULL, GT_VERB_DEFAULT);
    assert_non_null(strstr(text, "  nvrtcCompileProgram prog11.cu (failed)\n"));
    assert_null(strstr(text, "prog10.cu"));
    /* prog10's 2 us of 78 us */
    assert_non_null(strstr(text, "  ... 1 more, 2.6% of the time (verbose shows every row)\n"));
    free(text);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
}

static bool valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t len = strlen(s), i = 0; i < len;) {
        bool ok;
        i += gt_utf8_sequence(p + i, len - i, &ok);
        if (!ok) return false;
    }
    return true;
}

static void test_hostile_names(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_report *r = gt_report_create(NULL, names);
    const char *hostile[] = {"esc\x1b[2Jclear", "bell\a\r\nnewline", "bad\xff\xc0utf8",
                             "c1\xc2\x9b"
                             "31m",
                             "caf\xc3\xa9"};
    for (int i = 0; i < 5; i++) {
        gt_event ev = kernel_event(intern(names, hostile[i]), 1, 0, 0, 1000 * (uint64_t)(5 - i));
        gt_report_add(r, &ev);
    }
    gt_process_info p = {.command = "./x \x1b]0;title\a", .start_ns = 0, .end_ns = 1000};
    char *text = summary_of(r, &p, GT_VERB_VERBOSE);
    for (const char *c = text; *c; c++)
        assert_true(*c == '\n' || (unsigned char)*c >= 0x20);
    assert_null(strchr(text, 0x7f));
    assert_null(strstr(text, "\xc2\x9b"));
    assert_true(valid_utf8(text));
    assert_non_null(strstr(text, "esc?[2Jclear\n"));
    assert_non_null(strstr(text, "bell???newline\n"));
    assert_non_null(strstr(text, "bad" GT_UTF8_REPLACEMENT GT_UTF8_REPLACEMENT "utf8\n"));
    assert_non_null(strstr(text, "caf\xc3\xa9\n"));
    free(text);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
}

/* A category that recorded nothing has no section of its own at default:
 * one line names them all; verbose keeps each section. */
static void test_empty_sections(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_report *r = gt_report_create(NULL, names);
    gt_event ev = kernel_event(intern(names, "k"), 1, 0, 0, 1000);
    gt_report_add(r, &ev);
    char *text = summary_of(r, NULL, GT_VERB_DEFAULT);
    assert_non_null(strstr(text, "\nkernel: 1 kernel, 1 launch, GPU time 1.00 us\n"));
    assert_null(strstr(text, "memcpy:"));
    assert_null(strstr(text, "none recorded\n"));
    assert_non_null(strstr(text, "\nnone recorded: memcpy, memset, memory, compile, module, sync, "
                                 "nvtx, api\n"));
    free(text);
    text = summary_of(r, NULL, GT_VERB_VERBOSE);
    assert_non_null(strstr(text, "\nmemcpy: none recorded\n"));
    assert_null(strstr(text, "none recorded:"));
    free(text);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
}

static void test_sections_follow_categories(void **unused)
{
    (void)unused;
    sample s;
    gt_report_options opt = {.categories = GT_CAT_BIT(GT_CAT_KERNEL) | GT_CAT_BIT(GT_CAT_MEMORY),
                             .verbosity = GT_VERB_DEFAULT};
    sample_build(&s, &opt);
    char *text = summary_of(s.r, &s.p, GT_VERB_DEFAULT);
    assert_non_null(strstr(text, "\nkernel: 3 kernels, 25 launches, GPU time 24.9 ms\n"));
    assert_non_null(strstr(text, "\nmemory: 2 GPUs, 4 allocations, 2 frees\n"));
    /* GPU busy is of the kernels alone, and the header says so */
    assert_non_null(strstr(text, " | GPU busy 24.9 ms (12.5%, kernel only) | "));
    assert_null(strstr(text, "\nmemcpy"));
    assert_null(strstr(text, "\napi"));
    /* rules of disabled categories stay silent: only gpu-idle and leak remain */
    assert_non_null(strstr(text, "[gpu-idle]"));
    assert_non_null(strstr(text, "[leak]"));
    assert_null(strstr(text, "[sync-api]"));
    assert_null(strstr(text, "memcpy]"));
    free(text);
    sample_free(&s);
}

static void test_dropped_warning(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_report *r = gt_report_create(NULL, names);
    char *text = summary_of(r, NULL, GT_VERB_DEFAULT);
    assert_null(strstr(text, "warning"));
    free(text);
    gt_report_set_counts(r, &(gt_report_counts){.dropped = 1234});
    text = summary_of(r, NULL, GT_VERB_DEFAULT);
    const char *want = "gputrace: (unknown) | wall 0 ns | GPU busy 0 ns | 0 events | 1234 dropped\n"
                       "gputrace: warning: 1234 events were dropped: every table undercounts\n";
    assert_memory_equal(text, want, strlen(want));
    free(text);
    /* The cause the run found, as it gave it. */
    gt_report_set_counts(r, &(gt_report_counts){.dropped = 12, .dropped_why = "because of X"});
    text = summary_of(r, NULL, GT_VERB_DEFAULT);
    want = "gputrace: (unknown) | wall 0 ns | GPU busy 0 ns | 0 events | 12 dropped\n"
           "gputrace: warning: 12 events were dropped because of X: every table undercounts\n";
    assert_memory_equal(text, want, strlen(want));
    free(text);
    /* Late events beside the dropped ones; GPU work left pending, noted. */
    gt_report_set_counts(
        r,
        &(gt_report_counts){.dropped = 7, .late = 3811, .late_gpu_work = 3800, .gpu_pending = 2});
    text = summary_of(r, NULL, GT_VERB_DEFAULT);
    want = "gputrace: (unknown) | wall 0 ns | GPU busy 0 ns | 0 events | 7 dropped | 3811 late\n"
           "gputrace: warning: 7 events were dropped: every table undercounts\n"
           "gputrace: note: 3800 kernel launches, copies and memsets came after the report was "
           "cut (threads still at work as the process ended): they count as late, not in the "
           "tables\n"
           "gputrace: note: 2 GPU operations were still pending when the report was cut "
           "(running, or their times not read in the time an exit allows): they are counted "
           "without GPU time\n";
    assert_memory_equal(text, want, strlen(want));
    free(text);
    /* Late events but no GPU work among them (the runtime's teardown): the
     * summary leaves them to the JSON's totals. */
    gt_report_set_counts(r, &(gt_report_counts){.late = 3});
    text = summary_of(r, NULL, GT_VERB_DEFAULT);
    want = "gputrace: (unknown) | wall 0 ns | GPU busy 0 ns | 0 events | 0 dropped\n\n";
    assert_memory_equal(text, want, strlen(want));
    free(text);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
}

/* GPU timing on but impossible: the header and the GPU tables say so. */
static void test_gpu_timing_off(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_report *r = gt_report_create(NULL, names);
    gt_event ev = host_event(GT_EV_KERNEL, 1, 100, 200);
    ev.name = intern(names, "k");
    gt_report_add(r, &ev);
    gt_report_set_gpu_timing_off(r, "the driver has no cuEventQuery");
    char *text = summary_of(r, NULL, GT_VERB_DEFAULT);
    const char *want = "gputrace: (unknown) | wall 0 ns | GPU timing off | 1 events | 0 dropped\n"
                       "gputrace: GPU timing off: the driver has no cuEventQuery\n";
    assert_memory_equal(text, want, strlen(want));
    assert_non_null(strstr(text, "\nkernel: 1 kernel, 1 launch, not timed (GPU timing off)\n"));
    assert_non_null(strstr(text, "\n      -      -      1    -"));
    free(text);
    gt_report_set_gpu_timing_off(r, NULL);
    text = summary_of(r, NULL, GT_VERB_DEFAULT);
    assert_null(strstr(text, "GPU timing off"));
    free(text);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
}

static void test_shortening(void **unused)
{
    (void)unused;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_int_equal(gt_text_put_shortened(f, "abcdefghij", 10), 10);
    fputc('|', f);
    assert_int_equal(gt_text_put_shortened(f, "abcdefghij", 9), 9);
    fputc('|', f);
    /* code points, not bytes: the cut never splits a character */
    assert_int_equal(gt_text_put_shortened(f, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4), 4);
    fputc('|', f);
    assert_int_equal(gt_text_put_shortened(f, "abcdef", 2), 2);
    fclose(f);
    assert_string_equal(buf, "abcdefghij|abc...hij|\xc3\xa9...|ab");
    free(buf);
}

/* `--write-golden DIR`: rewrites the golden files from the sample. */
static int write_golden(const char *dir)
{
    for (int v = GT_VERB_DEFAULT; v <= GT_VERB_DEBUG; v++) {
        char path[1024];
        golden_path(v, dir, path, sizeof path);
        char *text = sample_summary(v);
        FILE *f = fopen(path, "wb");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
            fprintf(stderr, "cannot write %s\n", path);
            return 1;
        }
        free(text);
        printf("wrote %s\n", path);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-golden") == 0) return write_golden(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_default),
        cmocka_unit_test(test_golden_verbose),
        cmocka_unit_test(test_golden_debug),
        cmocka_unit_test(test_none_is_silent),
        cmocka_unit_test(test_default_fits_and_verbose_is_whole),
        cmocka_unit_test(test_top_rows),
        cmocka_unit_test(test_numba_names),
        cmocka_unit_test(test_empty_sections),
        cmocka_unit_test(test_width),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_sections_follow_categories),
        cmocka_unit_test(test_dropped_warning),
        cmocka_unit_test(test_failures_always_shown),
        cmocka_unit_test(test_gpu_timing_off),
        cmocka_unit_test(test_shortening),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
