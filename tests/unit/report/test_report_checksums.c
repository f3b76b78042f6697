/* The checksum list (report/model/checksum_list.c), its JSON and reading
 * it back (report/doc/checksum_doc.c, report/read/load_checksums.c), and
 * comparing and merging two runs' lists (report/read/diff_checksums.c,
 * merge_checksums.c): counts and statuses, the list's bound and the
 * order-free thread digest, the round trip, and each verdict of a diff
 * with the copy it names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aggregate.h"
#include "callsite_json.h"
#include "callsite_table.h"
#include "checksum_list.h"
#include "checksum_mode.h"
#include "diff.h"
#include "event.h"
#include "load.h"
#include "merge.h"
#include "report.h"
#include "strtab.h"

static const gt_checksum_mode dtoh = {GT_CHECKSUM_BYTES, 0};

static gt_report *new_report(const gt_strtab *names)
{
    gt_report *r = gt_report_create(NULL, names);
    assert_non_null(r);
    gt_report_set_checksum_mode(r, dtoh);
    return r;
}

/* A copy's record as the shim makes it; cost: its hashing time. */
static void copy(gt_report *r, uint32_t thread, uint64_t index, uint64_t bytes, uint64_t hash,
                 enum gt_checksum_status status, uint64_t cost)
{
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_CHECKSUM;
    ev.bytes = bytes;
    ev.host_start = 1000;
    ev.host_end = 1000 + cost;
    ev.u.checksum.hash = hash;
    ev.u.checksum.index = index;
    ev.u.checksum.thread = thread;
    ev.u.checksum.status = (uint8_t)status;
    gt_report_add(r, &ev);
}

/* Thread 0: 3 copies; thread 1: 2, its second overwritten. */
static void standard_run(gt_report *r, uint64_t salt)
{
    copy(r, 0, 0, 4096, 0x1111 + salt, GT_CK_HASHED, 100);
    copy(r, 0, 2, 8, 0x3333, GT_CK_HASHED, 10);
    copy(r, 0, 1, 4096, 0x2222, GT_CK_HASHED, 100); /* hashed at its synchronize, later */
    copy(r, 1, 0, 16, 0x4444, GT_CK_HASHED, 10);
    copy(r, 1, 1, 16, 0, GT_CK_OVERWRITTEN, 0);
}

static void test_counts(void **unused)
{
    (void)unused;
    gt_report *r = new_report(NULL);
    standard_run(r, 0);
    const gt_checksums *c = &r->checksums;
    assert_true(c->on);
    assert_int_equal(c->hashed, 4);
    assert_int_equal(c->hashed_bytes, 4096 * 2 + 8 + 16);
    assert_int_equal(c->unhashed, 1);
    assert_int_equal(c->by_status[GT_CK_OVERWRITTEN], 1);
    assert_int_equal(c->cost_ns, 220);
    assert_int_equal(gt_report_event_count(r), 0); /* not events of the tables */
    assert_int_equal(c->nthreads, 2);
    gt_checksum_entry *s = gt_checksums_sorted(c);
    assert_int_equal(s[1].thread, 0);
    assert_int_equal(s[1].index, 1);
    assert_int_equal(s[1].hash, 0x2222);
    free(s);
    gt_report_destroy(r);
}

/* The digest is a sum: any order of the same copies gives it; one hash
 * more or less changes it. Past the bound copies are counted, not listed,
 * and still in the digest. */
static void test_digest_and_bound(void **unused)
{
    (void)unused;
    gt_report *a = new_report(NULL), *b = new_report(NULL);
    for (uint64_t i = 0; i < 50; i++)
        copy(a, 0, i, 64, i * 77, GT_CK_HASHED, 1);
    for (uint64_t i = 50; i-- > 0;)
        copy(b, 0, i, 64, i * 77, GT_CK_HASHED, 1);
    assert_int_equal(gt_checksums_find_thread(&a->checksums, 0, 0)->digest,
                     gt_checksums_find_thread(&b->checksums, 0, 0)->digest);
    copy(b, 0, 50, 64, 1, GT_CK_HASHED, 1);
    copy(a, 0, 50, 64, 2, GT_CK_HASHED, 1);
    assert_int_not_equal(gt_checksums_find_thread(&a->checksums, 0, 0)->digest,
                         gt_checksums_find_thread(&b->checksums, 0, 0)->digest);
    gt_report_destroy(a);
    gt_report_destroy(b);

    gt_report *big = new_report(NULL);
    for (uint64_t i = 0; i < GT_CHECKSUMS_LISTED_MAX + 7; i++)
        copy(big, 0, i, 4, i, GT_CK_HASHED, 0);
    assert_int_equal(big->checksums.n, GT_CHECKSUMS_LISTED_MAX);
    assert_int_equal(big->checksums.unlisted, 7);
    assert_int_equal(gt_checksums_find_thread(&big->checksums, 0, 0)->copies,
                     GT_CHECKSUMS_LISTED_MAX + 7);
    gt_report_destroy(big);
}

static char *to_json(const gt_report *r, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    gt_process_info p = {
        .pid = 7, .hostname = "h", .command = "prog", .start_ns = 1, .end_ns = 1000001};
    assert_int_equal(gt_report_write_json(r, gt_report_process(r) ? gt_report_process(r) : &p, f),
                     0);
    fclose(f);
    return buf;
}

static gt_report *load(const char *json, size_t len, gt_strtab *names)
{
    char err[GT_LOAD_ERROR_MAX];
    gt_report *r = gt_report_load_buffer(json, len, "t.json", names, err, sizeof err);
    if (!r) fail_msg("%s", err);
    return r;
}

/* Written, read back and written again: the same bytes, every field kept,
 * a call site as the object it was. */
static void test_round_trip(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_report *r = new_report(names);
    standard_run(r, 0);
    size_t len;
    char *json = to_json(r, &len);
    assert_non_null(strstr(json, "\"hash\": \"0000000000001111\""));
    assert_non_null(strstr(json, "\"hash\": null, \"status\": \"overwritten\", \"site\": null"));
    const char *site = "{\"language\":\"python\",\"file\":\"solve.py\",\"line\":12,"
                       "\"function\":\"step\",\"module\":\"solve\"}";
    char *with_site = NULL;
    const char *at = strstr(json, "\"site\": null");
    assert_int_not_equal(asprintf(&with_site, "%.*s\"site\": %s%s", (int)(at - json), json, site,
                                  at + strlen("\"site\": null")),
                         -1);
    gt_report *back = load(with_site, strlen(with_site), names);
    const gt_checksums *c = &back->checksums;
    assert_true(c->on);
    assert_int_equal(c->hashed, 4);
    assert_int_equal(c->unhashed, 1);
    assert_int_equal(c->by_status[GT_CK_OVERWRITTEN], 1);
    assert_int_equal(c->cost_ns, 220);
    assert_int_equal(c->n, 5);
    assert_string_equal(gt_strtab_get(names, c->entries[0].site), site);
    assert_int_equal(gt_checksums_find_thread(c, 0, 1)->digest,
                     gt_checksums_find_thread(&r->checksums, 0, 1)->digest);
    size_t len2;
    char *again = to_json(back, &len2);
    /* The site comes back as written; the rest byte for byte. */
    gt_report *plain = load(json, len, names);
    size_t len3;
    char *plain_again = to_json(plain, &len3);
    assert_int_equal(len3, len);
    assert_memory_equal(plain_again, json, len);
    assert_non_null(strstr(again, site));
    free(json);
    free(with_site);
    free(again);
    free(plain_again);
    gt_report_destroy(r);
    gt_report_destroy(back);
    gt_report_destroy(plain);
    gt_strtab_destroy(names);
}

/* A live run's copy with a call site: the record's site is the site's
 * JSON text (as the shim's drain makes it), written as `callsites` writes
 * a site and read back to the same bytes. */
static void test_live_site(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_site s = {.language = GT_SITE_NATIVE,
                 .line = 42,
                 .file = gt_strtab_intern(names, "/src/solve \"v2\".c", 17),
                 .function = gt_strtab_intern(names, "step", 4),
                 .module = gt_strtab_intern(names, "/bin/solve", 10)};
    char text[GT_SITE_LABEL_MAX];
    const char *want = "{\"language\":\"native\",\"file\":\"/src/solve \\\"v2\\\".c\","
                       "\"line\":42,\"function\":\"step\",\"module\":\"/bin/solve\",\"via\":\"\"}";
    assert_int_equal(gt_site_json_text(names, &s, text, sizeof text), strlen(want));
    assert_string_equal(text, want);
    assert_int_equal(gt_site_json_text(names, &s, text, strlen(want)), 0); /* no room for NUL */

    gt_report *r = new_report(names);
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_CHECKSUM;
    ev.bytes = 64;
    ev.site = gt_strtab_intern(names, want, strlen(want));
    ev.u.checksum.hash = 0x77;
    gt_report_add(r, &ev);
    size_t len;
    char *json = to_json(r, &len);
    char *line = NULL;
    assert_int_not_equal(asprintf(&line, "\"status\": \"hashed\", \"site\": %s}", want), -1);
    assert_non_null(strstr(json, line));
    gt_report *back = load(json, len, names);
    assert_int_equal(back->checksums.entries[0].site, ev.site);
    size_t len2;
    char *again = to_json(back, &len2);
    assert_int_equal(len2, len);
    assert_memory_equal(again, json, len);
    free(line);
    free(json);
    free(again);
    gt_report_destroy(r);
    gt_report_destroy(back);
    gt_strtab_destroy(names);
}

/* A good report with one thing in its checksums spoilt: one line of error
 * naming where. */
static void test_bad_input(void **unused)
{
    (void)unused;
    static const struct {
        const char *from, *to, *error;
    } bad[] = {
        {"\"mode\": \"dtoh\"", "\"mode\": \"on\"", "checksums.mode: not a checksum mode"},
        {"\"hash\": \"0000000000001111\"", "\"hash\": \"12\"",
         "checksums.copies[0].hash: expected 16 hex digits"},
        {"\"status\": \"overwritten\"", "\"status\": \"lost\"",
         "checksums.copies[4].status: not a checksum status"},
        {"\"copies\": 3", "\"copies\": -3", "checksums.threads[0].copies"},
    };
    gt_strtab *names = gt_strtab_create();
    gt_report *r = new_report(names);
    standard_run(r, 0);
    size_t len;
    char *json = to_json(r, &len);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *at = strstr(json, bad[i].from);
        assert_non_null(at);
        char *doc = NULL;
        assert_int_not_equal(
            asprintf(&doc, "%.*s%s%s", (int)(at - json), json, bad[i].to, at + strlen(bad[i].from)),
            -1);
        char err[GT_LOAD_ERROR_MAX] = "";
        gt_report *back = gt_report_load_buffer(doc, strlen(doc), "t.json", names, err, sizeof err);
        if (back) fail_msg("accepted %s", bad[i].to);
        if (!strstr(err, bad[i].error)) fail_msg("error '%s', expected '%s'", err, bad[i].error);
        free(doc);
    }
    free(json);
    gt_report_destroy(r);
    gt_strtab_destroy(names);
}

static gt_diff_checksums compare(const gt_report *a, const gt_report *b)
{
    gt_diff_checksums d;
    assert_int_equal(gt_diff_checksums_compare(a, b, &d), 0);
    return d;
}

static void test_diff_verdicts(void **unused)
{
    (void)unused;
    gt_report *a = new_report(NULL), *same = new_report(NULL), *changed = new_report(NULL),
              *more = new_report(NULL), *off = gt_report_create(NULL, NULL);
    standard_run(a, 0);
    standard_run(same, 0);
    standard_run(changed, 1);
    standard_run(more, 0);
    copy(more, 1, 2, 16, 0x5555, GT_CK_HASHED, 1);

    gt_diff_checksums d = compare(a, same);
    assert_int_equal(d.verdict, GT_DIFF_CK_SAME);
    assert_int_equal(d.compared, 4);
    assert_int_equal(d.uncompared, 1);

    d = compare(a, changed);
    assert_int_equal(d.verdict, GT_DIFF_CK_DIVERGED);
    assert_true(d.first_listed);
    assert_int_equal(d.thread, 0);
    assert_int_equal(d.index, 0);
    assert_int_equal(d.bytes, 4096);
    assert_int_equal(d.base_hash, 0x1111);
    assert_int_equal(d.next_hash, 0x1112);

    d = compare(a, more);
    assert_int_equal(d.verdict, GT_DIFF_CK_INCOMPARABLE);
    assert_string_equal(d.detail, "thread 1 made 2 device-to-host copies in BASE, 3 in NEW");

    d = compare(a, off);
    assert_int_equal(d.verdict, GT_DIFF_CK_ONE_SIDED);
    d = compare(off, off);
    assert_int_equal(d.verdict, GT_DIFF_CK_NONE);

    gt_report *f32 = gt_report_create(NULL, NULL);
    gt_report_set_checksum_mode(f32, (gt_checksum_mode){GT_CHECKSUM_F32, 12});
    standard_run(f32, 0);
    d = compare(a, f32);
    assert_int_equal(d.verdict, GT_DIFF_CK_INCOMPARABLE);
    assert_string_equal(d.detail, "the runs hashed in different modes, dtoh and dtoh:f32:12");
    gt_report *resized = new_report(NULL);
    copy(resized, 0, 0, 4096, 0x1111, GT_CK_HASHED, 1);
    copy(resized, 0, 1, 4096, 0x2222, GT_CK_HASHED, 1);
    copy(resized, 0, 2, 9, 0x3333, GT_CK_HASHED, 1);
    copy(resized, 1, 0, 16, 0x4444, GT_CK_HASHED, 1);
    copy(resized, 1, 1, 16, 0, GT_CK_OVERWRITTEN, 0);
    d = compare(a, resized);
    assert_int_equal(d.verdict, GT_DIFF_CK_INCOMPARABLE);
    assert_string_equal(d.detail, "thread 0 copy 2 is 8 bytes in BASE, 9 in NEW");
    for (gt_report **r = (gt_report *[]){a, same, changed, more, off, f32, resized, NULL}; *r; r++)
        gt_report_destroy(*r);
}

/* Threads that raced for their numbers are paired by their copies; the
 * one that differs is named with its number in each run. A copy unhashed
 * in one run is passed over. */
static void test_diff_threads(void **unused)
{
    (void)unused;
    gt_report *a = new_report(NULL), *b = new_report(NULL);
    for (uint32_t t = 0; t < 3; t++)
        for (uint64_t i = 0; i < 4; i++)
            copy(a, t, i, 32, 100 * t + i, GT_CK_HASHED, 1);
    /* B: the same threads numbered 2, 0, 1; the thread that was 1 changed
     * its copy 3 and left copy 0 unhashed. */
    uint32_t renumber[3] = {2, 0, 1};
    for (uint32_t t = 0; t < 3; t++)
        for (uint64_t i = 0; i < 4; i++) {
            uint64_t h = 100 * t + i + (t == 1 && i == 3);
            copy(b, renumber[t], i, 32, h, t == 1 && i == 0 ? GT_CK_UNSYNCED : GT_CK_HASHED, 1);
        }
    gt_diff_checksums d = compare(a, b);
    assert_int_equal(d.verdict, GT_DIFF_CK_DIVERGED);
    assert_true(d.renumbered);
    assert_int_equal(d.thread, 1);
    assert_int_equal(d.next_thread, 0);
    assert_int_equal(d.index, 3);
    assert_int_equal(d.uncompared, 1);
    gt_report_destroy(a);
    gt_report_destroy(b);
}

/* The digests differ, the listed copies do not: the difference is past
 * the list, and said so. */
static void test_diff_past_the_list(void **unused)
{
    (void)unused;
    gt_report *a = new_report(NULL), *b = new_report(NULL);
    for (uint64_t i = 0; i < GT_CHECKSUMS_LISTED_MAX + 3; i++) {
        copy(a, 0, i, 4, i, GT_CK_HASHED, 0);
        copy(b, 0, i, 4, i + (i == GT_CHECKSUMS_LISTED_MAX + 1), GT_CK_HASHED, 0);
    }
    gt_diff_checksums d = compare(a, b);
    assert_int_equal(d.verdict, GT_DIFF_CK_DIVERGED);
    assert_false(d.first_listed);
    assert_int_equal(d.index, GT_CHECKSUMS_LISTED_MAX);
    gt_report_destroy(a);
    gt_report_destroy(b);
}

/* With sites in both runs, copies are matched by site and their order
 * there: a copy made elsewhere in between does not shift them. */
static void test_diff_by_site(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    uint32_t s1 = gt_strtab_intern(names, "{\"file\":\"a.py\",\"line\":1}", 25);
    uint32_t s2 = gt_strtab_intern(names, "{\"file\":\"a.py\",\"line\":2}", 25);
    gt_report *a = gt_loaded_report_create(NULL, names), *b = gt_loaded_report_create(NULL, names);
    gt_report_set_checksum_mode(a, dtoh);
    gt_report_set_checksum_mode(b, dtoh);
    /* A: site1, site2, site1; B: site1, site1, site2 (order between sites
     * differs), the second site1 copy changed. */
    gt_checksum_entry ea[] = {
        {0, 8, 1, 0, 0, s1, 0}, {1, 8, 2, 0, 0, s2, 0}, {2, 8, 3, 0, 0, s1, 0}};
    gt_checksum_entry eb[] = {
        {0, 8, 1, 0, 0, s1, 0}, {1, 8, 4, 0, 0, s1, 0}, {2, 8, 2, 0, 0, s2, 0}};
    for (int i = 0; i < 3; i++) {
        gt_checksums_add(&a->checksums, &ea[i], 0);
        gt_checksums_add(&b->checksums, &eb[i], 0);
    }
    gt_diff_checksums d = compare(a, b);
    assert_int_equal(d.verdict, GT_DIFF_CK_DIVERGED);
    assert_int_equal(d.index, 2);
    assert_int_equal(d.site, s1);
    assert_int_equal(d.base_hash, 3);
    assert_int_equal(d.next_hash, 4);
    gt_report_destroy(a);
    gt_report_destroy(b);
    gt_strtab_destroy(names);
}

static void test_merge_ranks(void **unused)
{
    (void)unused;
    gt_strtab *names = gt_strtab_create();
    gt_report *r1 = new_report(names), *r2 = new_report(names);
    standard_run(r1, 0);
    standard_run(r2, 5);
    size_t l1, l2;
    char *j1 = to_json(r1, &l1), *j2 = to_json(r2, &l2);
    gt_report *in[2] = {load(j1, l1, names), load(j2, l2, names)};
    char err[256];
    const char *files[2] = {"1.json", "2.json"};
    gt_report *m = gt_report_merge(in, files, 2, names, err, sizeof err);
    assert_non_null(m);
    const gt_checksums *c = &m->checksums;
    assert_int_equal(c->hashed, 8);
    assert_int_equal(c->unhashed, 2);
    assert_int_equal(c->n, 10);
    assert_int_equal(c->nthreads, 4);
    assert_non_null(gt_checksums_find_thread(c, 1, 1));
    /* Merged twice over: ranks go on after the first merge's. */
    gt_report *again[2] = {m, in[1]};
    gt_report *mm = gt_report_merge(again, files, 2, names, err, sizeof err);
    assert_non_null(mm);
    assert_non_null(gt_checksums_find_thread(&mm->checksums, 2, 0));
    assert_null(gt_checksums_find_thread(&mm->checksums, 3, 0));
    gt_report_destroy(mm);
    gt_report_destroy(m);
    gt_report_destroy(in[0]);
    gt_report_destroy(in[1]);
    free(j1);
    free(j2);
    gt_report_destroy(r1);
    gt_report_destroy(r2);
    gt_strtab_destroy(names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),       cmocka_unit_test(test_digest_and_bound),
        cmocka_unit_test(test_round_trip),   cmocka_unit_test(test_live_site),
        cmocka_unit_test(test_bad_input),    cmocka_unit_test(test_diff_verdicts),
        cmocka_unit_test(test_diff_threads), cmocka_unit_test(test_diff_past_the_list),
        cmocka_unit_test(test_diff_by_site), cmocka_unit_test(test_merge_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
