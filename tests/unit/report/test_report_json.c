/* The JSON report.
 *
 * Run with no arguments: cmocka tests of string escaping, the writer's
 * structure and readable units (the summary has its own tests).
 * Run as `--emit CATEGORIES HEXNAME...`: prints a report built from
 * records of every kind, with the given names (hex-encoded bytes, so that
 * any byte can be passed) as kernel, range, mark and program names, for
 * report_json_check.py to parse back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "event.h"
#include "format.h"
#include "hex_names.h"
#include "json_writer.h"
#include "report.h"
#include "report_events.h"
#include "settings.h"
#include "strtab.h"

/* What gt_json_write_string makes of len bytes. */
static char *escaped(const char *s, size_t len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    gt_json_write_string(f, s, len);
    fclose(f);
    return buf;
}

static void expect_escaped(const char *in, size_t len, const char *want)
{
    char *got = escaped(in, len);
    assert_string_equal(got, want);
    free(got);
}

#define EXPECT(in, want) expect_escaped(in, sizeof(in) - 1, want)

static void test_escapes(void **unused)
{
    (void)unused;
    EXPECT("plain", "\"plain\"");
    EXPECT("a\"b", "\"a\\\"b\"");
    EXPECT("back\\slash", "\"back\\\\slash\"");
    EXPECT("tab\tnl\ncr\r", "\"tab\\u0009nl\\u000acr\\u000d\"");
    EXPECT("\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\"");
    EXPECT("", "\"\"");
}

static void test_valid_utf8_is_kept(void **unused)
{
    (void)unused;
    EXPECT("caf\xC3\xA9", "\"caf\xC3\xA9\"");           /* 2 bytes */
    EXPECT("\xE2\x82\xAC", "\"\xE2\x82\xAC\"");         /* euro sign */
    EXPECT("\xF0\x9F\x98\x80", "\"\xF0\x9F\x98\x80\""); /* 4 bytes */
    EXPECT("\xED\x9F\xBF", "\"\xED\x9F\xBF\"");         /* U+D7FF, below surrogates */
    EXPECT("\xF4\x8F\xBF\xBF", "\"\xF4\x8F\xBF\xBF\""); /* U+10FFFF */
}

#define FFFD "\xEF\xBF\xBD"

static void test_invalid_utf8_is_replaced(void **unused)
{
    (void)unused;
    EXPECT("\x80", "\"" FFFD "\""); /* lone continuation */
    EXPECT("a\xFF"
           "b",
           "\"a" FFFD "b\"");                                  /* never valid */
    EXPECT("\xC0\xAF", "\"" FFFD FFFD "\"");                   /* overlong '/' */
    EXPECT("\xE0\x80\xAF", "\"" FFFD FFFD FFFD "\"");          /* overlong, 3 bytes */
    EXPECT("\xF0\x80\x80\xAF", "\"" FFFD FFFD FFFD FFFD "\""); /* overlong, 4 bytes */
    EXPECT("\xED\xA0\x80", "\"" FFFD FFFD FFFD "\"");          /* surrogate U+D800 */
    EXPECT("\xF4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""); /* above U+10FFFF */
    EXPECT("\xE2\x82", "\"" FFFD "\"");                        /* truncated at the end */
    EXPECT("\xE2\x82x", "\"" FFFD "x\"");                      /* truncated in the middle */
    EXPECT("\xF0\x9F\x98", "\"" FFFD "\"");
    EXPECT("\xC3", "\"" FFFD "\"");
}

static void test_writer_structure(void **unused)
{
    (void)unused;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    gt_json w;
    gt_json_init(&w, f);
    gt_json_object_begin(&w, false);
    gt_json_kv_uint(&w, "a", 1);
    gt_json_key(&w, "list");
    gt_json_array_begin(&w, true);
    gt_json_int(&w, -2);
    gt_json_bool(&w, true);
    gt_json_fixed(&w, 1.0 / 0.0, 2);
    gt_json_array_end(&w);
    gt_json_key(&w, "empty");
    gt_json_object_begin(&w, false);
    gt_json_object_end(&w);
    gt_json_object_end(&w);
    assert_int_equal(gt_json_finish(&w), 0);
    fclose(f);
    assert_string_equal(buf, "{\n  \"a\": 1,\n  \"list\": [-2, true, 0.00],\n  \"empty\": {}\n}\n");
    free(buf);

    f = open_memstream(&buf, &size);
    gt_json_init(&w, f);
    gt_json_array_begin(&w, false);
    assert_int_equal(gt_json_finish(&w), -1); /* left open */
    fclose(f);
    free(buf);
}

static void test_units(void **unused)
{
    (void)unused;
    char b[GT_FORMAT_CAP];
    assert_string_equal(gt_format_ns(0, b, sizeof(b)), "0 ns");
    assert_string_equal(gt_format_ns(999, b, sizeof(b)), "999 ns");
    assert_string_equal(gt_format_ns(1000, b, sizeof(b)), "1.00 us");
    assert_string_equal(gt_format_ns(12345678, b, sizeof(b)), "12.3 ms");
    assert_string_equal(gt_format_ns(999499, b, sizeof(b)), "999 us");
    assert_string_equal(gt_format_ns(999500, b, sizeof(b)), "1.00 ms");
    assert_string_equal(gt_format_ns(3600000000000ull, b, sizeof(b)), "3600 s");
    assert_string_equal(gt_format_bytes(1023, b, sizeof(b)), "1023 B");
    assert_string_equal(gt_format_bytes(1536, b, sizeof(b)), "1.50 KiB");
    assert_string_equal(gt_format_bytes(3ull << 30, b, sizeof(b)), "3.00 GiB");
}

/* A kernel called `graph` and graph launches have rows of their own, told
 * apart by the "graph" key; "timed" counts the calls that have a time. */
static void test_graph_and_timed_keys(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_report *r = gt_report_create(NULL, names);
    gt_event k = kernel_event(intern(names, "graph"), 1, 0, 100, 600);
    gt_report_add(r, &k);
    k.flags = GT_EVF_CAPTURED; /* run later inside a graph: no time of its own */
    gt_report_add(r, &k);
    gt_event g = kernel_event(0, 1, 1000, 1100, 9100);
    g.kind = GT_EV_GRAPH;
    gt_report_add(r, &g);
    gt_event c = host_event(GT_EV_MEMCPY, 1, 0, 10);
    c.u.copy.dir = GT_DIR_HTOD;
    c.u.copy.host_mem = GT_HOST_PINNED;
    c.bytes = 64;
    gt_report_add(r, &c);
    gt_report_finish(r, 10000);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(gt_report_write_json(r, NULL, f), 0);
    fclose(f);
    assert_non_null(
        strstr(text, "{\"name\": \"[graph launch]\", \"calls\": 1, \"gpu_ns\": {\"total\": 8000"));
    assert_non_null(
        strstr(text, "\"timed\": 1, \"graph\": true, \"graph_calls\": 0, \"display_name\": "
                     "\"[graph launch]\"}"));
    assert_non_null(
        strstr(text, "{\"name\": \"graph\", \"calls\": 2, \"gpu_ns\": {\"total\": 500"));
    assert_non_null(strstr(
        text, "\"timed\": 1, \"graph\": false, \"graph_calls\": 0, \"display_name\": \"graph\"}"));
    assert_non_null(strstr(text, "\"calls\": 1, \"bytes\": 64, \"gpu_ns\": {\"total\": 0"));
    assert_non_null(strstr(text, "\"gbps\": 0.000, \"timed\": 0, \"timed_bytes\": 0}"));
    free(text);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
}

static unsigned parse_categories(const char *list)
{
    if (strcmp(list, "all") == 0) return GT_CAT_ALL;
    unsigned mask = 0;
    for (unsigned c = 0; c < GT_CAT_COUNT; c++) {
        const char *name = gt_category_name(c);
        const char *at = strstr(list, name);
        size_t len = strlen(name);
        if (at && (at == list || at[-1] == ',') && (at[len] == ',' || at[len] == '\0'))
            mask |= GT_CAT_BIT(c);
    }
    return mask;
}

static void add_all_kinds(gt_report *r, gt_strtab *names)
{
    gt_event ev = host_event(GT_EV_MEMCPY, 1, 0, 100);
    ev.api = intern(names, "cuMemcpyHtoDAsync_v2");
    ev.u.copy.dir = GT_DIR_HTOD;
    ev.u.copy.host_mem = GT_HOST_PINNED;
    ev.flags = GT_EVF_ASYNC;
    ev.bytes = 1 << 20;
    set_gpu(&ev, 0, 50000);
    gt_report_add(r, &ev);
    ev.kind = GT_EV_MEMSET;
    ev.api = intern(names, "cuMemsetD8_v2");
    ev.flags = GT_EVF_BLOCKING;
    set_gpu(&ev, 50000, 51000);
    gt_report_add(r, &ev);
    ev = mem_event(GT_EV_ALLOC, 1, 0, 0x7000, 4096, GT_MEM_DEVICE, 0);
    ev.api = intern(names, "cuMemAlloc_v2");
    gt_report_add(r, &ev);
    ev = host_event(GT_EV_MODULE, 1, 0, 3000);
    ev.api = intern(names, "cuModuleLoadData");
    ev.u.module.image_kind = GT_IMAGE_FATBIN;
    ev.bytes = 999;
    gt_report_add(r, &ev);
    ev = host_event(GT_EV_SYNC, 1, 0, 77);
    ev.api = intern(names, "cuCtxSynchronize");
    ev.result = 700;
    ev.error = intern(names, "CUDA_ERROR_ILLEGAL_ADDRESS");
    gt_report_add(r, &ev);
}

static int emit(int argc, char **argv)
{
    gt_strtab *names = gt_strtab_create();
    gt_report_options opt = {.categories = parse_categories(argv[2]),
                             .verbosity = GT_VERB_VERBOSE,
                             .gpu_timing = GT_GPU_TIMING_EVENTS};
    gt_report *r = gt_report_create(&opt, names);
    int n = argc - 3;
    for (int i = 0; i < n; i++) {
        uint32_t name = intern_hex(names, argv[3 + i]);
        uint64_t t = (uint64_t)i * 1000000;
        /* earlier names get more GPU time, so they come first */
        gt_event k = kernel_event(name, 1, t + 10, t + 100, t + 100 + (uint64_t)(n - i) * 1000);
        k.api = intern(names, "cuLaunchKernel");
        gt_report_add(r, &k);
        gt_event e = nvtx_event(GT_EV_NVTX_PUSH, 1, t, name, name, 0);
        gt_report_add(r, &e);
        e = nvtx_event(GT_EV_NVTX_POP, 1, t + 500000 - (uint64_t)i, name, 0, 0);
        gt_report_add(r, &e);
        /* two marks per name, so that each row has a first and a last */
        for (uint64_t m = 0; m < 2; m++) {
            e = nvtx_event(GT_EV_NVTX_MARK, 1, t + 200 + m * 1000, name, name, 0);
            gt_report_add(r, &e);
        }
        e = host_event(GT_EV_COMPILE, 1, t, t + 1000 * (uint64_t)(n - i));
        e.api = intern(names, "nvrtcCompileProgram");
        e.name = name;
        gt_report_add(r, &e);
    }
    add_all_kinds(r, names);
    gt_report_finish(r, (uint64_t)n * 1000000 + 5);
    const char *first = n > 0 ? gt_strtab_get(names, intern_hex(names, argv[3])) : "";
    gt_process_info p = {.pid = 4242,
                         .ppid = 1,
                         .hostname = first,
                         .command = first,
                         .start_ns = 0,
                         .end_ns = (uint64_t)n * 1000000 + 5};
    int rc = gt_report_write_json(r, &p, stdout);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--emit") == 0) return emit(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_valid_utf8_is_kept),
        cmocka_unit_test(test_invalid_utf8_is_replaced),
        cmocka_unit_test(test_writer_structure),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_graph_and_timed_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
