/* NVTX ranges: nesting, the GPU work inside them, and every way the
 * records can be unbalanced. Driven through gt_report_add so that the
 * order of folding is the report's own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "event.h"
#include "idmap.h"
#include "nvtx_table.h"
#include "report.h"
#include "report_events.h"
#include "report_fixture.h"
#include "settings.h"
#include "strtab.h"
#include "table.h"

static void push(uint32_t tid, uint64_t t, uint32_t domain, const char *name)
{
    add(nvtx_event(GT_EV_NVTX_PUSH, tid, t, domain, intern(names, name), 0));
}

static void pop(uint32_t tid, uint64_t t, uint32_t domain)
{
    add(nvtx_event(GT_EV_NVTX_POP, tid, t, domain, 0, 0));
}

static void start(uint32_t tid, uint64_t t, const char *name, uint64_t id)
{
    add(nvtx_event(GT_EV_NVTX_START, tid, t, 0, intern(names, name), id));
}

static void end(uint32_t tid, uint64_t t, uint64_t id)
{
    add(nvtx_event(GT_EV_NVTX_END, tid, t, 0, 0, id));
}

static void kernel(uint32_t tid, uint64_t host, uint64_t gpu_start, uint64_t gpu_end)
{
    add(kernel_event(intern(names, "k"), tid, host, gpu_start, gpu_end));
}

static void copy(uint32_t tid, uint64_t host, uint64_t gpu_start, uint64_t gpu_end)
{
    gt_event ev = host_event(GT_EV_MEMCPY, tid, host, host + 10);
    set_gpu(&ev, gpu_start, gpu_end);
    add(ev);
}

static const gt_row *range(uint32_t domain, const char *name)
{
    const gt_row *row = find_row(r, GT_CAT_NVTX, domain, intern(names, name), 0);
    if (!row) fail_msg("no row for range %s", name);
    return row;
}

static void test_nesting_and_gpu_time(void **unused)
{
    (void)unused;
    push(1, 1000, 0, "step");
    kernel(1, 1100, 5000, 5300);
    push(1, 1200, 0, "solve");
    kernel(1, 1300, 6000, 6500);
    copy(1, 1400, 7000, 7100);
    pop(1, 1500, 0);
    kernel(2, 1550, 100, 900); /* another thread: not inside */
    pop(1, 2000, 0);
    kernel(1, 2100, 9000, 9999); /* after the ranges closed */

    const gt_row *step = range(0, "step");
    const gt_row *solve = range(0, "solve");
    assert_int_equal(step->calls, 1);
    assert_int_equal(step->time.total, 1000);
    assert_int_equal(step->gpu_ns_total, 300 + 500 + 100);
    assert_int_equal(step->gpu_span_total, 7100 - 5000);
    assert_int_equal(step->level, 0);
    assert_int_equal(step->parent, -1);
    assert_int_equal(solve->time.total, 300);
    assert_int_equal(solve->gpu_ns_total, 500 + 100);
    assert_int_equal(solve->gpu_span_total, 7100 - 6000);
    assert_int_equal(solve->level, 1);
    assert_ptr_equal(&r->tables[GT_CAT_NVTX].rows[solve->parent], step);
}

/* The same name pushed repeatedly: one row, one sample per range. */
static void test_repeated_ranges(void **unused)
{
    (void)unused;
    for (uint64_t i = 0; i < 10; i++) {
        push(1, i * 1000, 0, "iter");
        kernel(1, i * 1000 + 10, i * 1000 + 100, i * 1000 + 150);
        pop(1, i * 1000 + 400 + i, 0);
    }
    const gt_row *iter = range(0, "iter");
    assert_int_equal(iter->calls, 10);
    assert_int_equal(iter->time.first, 400);
    assert_int_equal(iter->time.max, 409);
    assert_int_equal(iter->gpu_ns_total, 500);
}

/* Domains have their own stacks; a range of one domain sees the work done
 * inside a range of another. */
static void test_domains_are_apart(void **unused)
{
    (void)unused;
    uint32_t lib = intern(names, "mylib");
    push(1, 0, 0, "app");
    push(1, 10, lib, "inner");
    kernel(1, 20, 100, 200);
    pop(1, 30, 0); /* closes "app", not the mylib range */
    pop(1, 40, lib);
    const gt_row *app = range(0, "app");
    const gt_row *inner = range(lib, "inner");
    assert_int_equal(app->time.total, 30);
    assert_int_equal(app->gpu_ns_total, 100);
    assert_int_equal(inner->time.total, 30);
    assert_int_equal(inner->gpu_ns_total, 100);
    assert_int_equal(inner->level, 0);
    assert_null(find_row(r, GT_CAT_NVTX, 0, intern(names, "inner"), 0));
}

static void test_unbalanced_pop(void **unused)
{
    (void)unused;
    pop(1, 10, 0);
    push(1, 20, 0, "a");
    pop(1, 30, 0);
    pop(1, 40, 0);
    pop(7, 50, 0); /* a thread that never pushed */
    assert_int_equal(r->nvtx.counts.unbalanced_pops, 3);
    assert_int_equal(range(0, "a")->calls, 1);
}

static void test_open_at_exit(void **unused)
{
    (void)unused;
    push(1, 100, 0, "main");
    push(1, 200, 0, "phase");
    kernel(1, 300, 1000, 1400);
    start(2, 500, "async", 42);
    gt_report_finish(r, 10000);
    assert_int_equal(r->nvtx.counts.open_at_exit, 3);
    assert_int_equal(range(0, "main")->time.total, 9900);
    assert_int_equal(range(0, "main")->gpu_ns_total, 400);
    assert_int_equal(range(0, "phase")->time.total, 9800);
    assert_int_equal(range(0, "async")->time.total, 9500);
    /* finishing again closes nothing twice */
    gt_report_finish(r, 20000);
    assert_int_equal(r->nvtx.counts.open_at_exit, 3);
    assert_int_equal(range(0, "main")->calls, 1);
}

/* A start/end range ended by another thread whose end record is drained
 * before the starting thread's kernel: the kernel, issued before the end,
 * still belongs to the range; one issued after does not. */
static void test_start_end_across_threads(void **unused)
{
    (void)unused;
    start(1, 1000, "load", 7);
    kernel(1, 1100, 2000, 2500);
    end(2, 3000, 7);             /* thread 2 ends it */
    kernel(1, 2900, 4000, 4100); /* drained late, issued before the end */
    kernel(1, 3100, 5000, 5800); /* after the end: settles the range first */
    const gt_row *load = range(0, "load");
    assert_int_equal(load->calls, 1);
    assert_int_equal(load->time.total, 2000);
    assert_int_equal(load->gpu_ns_total, 500 + 100);
    assert_int_equal(load->gpu_span_total, 4100 - 2000);
}

/* The end, made on another thread, reaches the report after the starting
 * thread's work issued past it: that work is not the range's. */
static void test_end_after_later_work(void **unused)
{
    (void)unused;
    start(1, 1000, "x", 7);
    kernel(1, 1100, 2000, 2500);
    kernel(1, 3100, 5000, 5800); /* issued after the end at 3000 */
    start(1, 3200, "y", 8);
    kernel(1, 3300, 6000, 6100);
    end(2, 3000, 7);
    end(2, 3400, 8);
    kernel(1, 3500, 7000, 7100); /* after both ends: settles them */
    const gt_row *x = range(0, "x");
    const gt_row *y = range(0, "y");
    assert_int_equal(x->calls, 1);
    assert_int_equal(x->gpu_ns_total, 500);
    assert_int_equal(x->gpu_span_total, 500);
    assert_int_equal(y->gpu_ns_total, 100);
    assert_int_equal(y->gpu_span_total, 100);
    assert_int_equal(r->nvtx.logged, 0);
}

/* A thread that starts a range, launches inside it, has another thread end
 * it, and launches again outside, many times; the other thread's records
 * reach the report in one batch at the end (its buffer filled late). Each
 * range has exactly the one kernel issued inside it. */
static void test_many_ends_drained_late(void **unused)
{
    (void)unused;
    enum { N = 1000 };
    for (uint64_t i = 0; i < N; i++) {
        uint64_t t = 100000 * i;
        start(1, t, "x", i + 1);
        kernel(1, t + 10, t + 1000, t + 2000);
        kernel(1, t + 50, t + 3000, t + 4000); /* after the end at t + 30 */
    }
    for (uint64_t i = 0; i < N; i++)
        end(2, 100000 * i + 30, i + 1);
    gt_report_finish(r, 100000 * N);
    const gt_row *x = range(0, "x");
    assert_int_equal(x->calls, N);
    assert_int_equal(x->gpu_ns_total, 1000 * N);
    assert_int_equal(x->gpu_span_total, 1000 * N);
    assert_int_equal(r->nvtx.counts.open_at_exit, 0);
}

/* A range open for longer than the log holds: the work that leaves the log
 * is the range's, counted once. */
static void test_long_range_past_the_log(void **unused)
{
    (void)unused;
    uint64_t n = 3 * GT_NVTX_LOG_THREAD_MAX + 5;
    start(1, 1, "long", 1);
    for (uint64_t i = 0; i < n; i++)
        kernel(1, 10 + 10 * i, 100 * i, 100 * i + 7);
    kernel(2, 5, 1, 2); /* another thread's: never inside */
    end(2, 10 + 10 * n, 1);
    kernel(1, 20 + 10 * n, 100 * n, 100 * n + 7); /* past the end */
    const gt_row *row = range(0, "long");
    assert_int_equal(row->calls, 1);
    assert_int_equal(row->gpu_ns_total, 7 * n);
    assert_int_equal(row->gpu_span_total, 100 * (n - 1) + 7);
    assert_true(r->nvtx.logged <= GT_NVTX_LOG_THREAD_MAX);
}

/* Another thread names the starting thread after the end: the name says
 * nothing of the named thread's progress, its earlier kernel still counts. */
static void test_thread_name_does_not_settle(void **unused)
{
    (void)unused;
    start(1, 1000, "load", 7);
    end(2, 3000, 7);
    gt_event name = host_event(GT_EV_THREAD_NAME, 1, 3500, 0);
    name.name = intern(names, "loader");
    add(name);
    kernel(1, 2900, 4000, 4100); /* thread 1's, issued before the end */
    kernel(1, 3100, 5000, 5800);
    assert_int_equal(range(0, "load")->gpu_ns_total, 100);
}

/* The end reaches the report before its start. */
static void test_end_before_start(void **unused)
{
    (void)unused;
    end(2, 5000, 9);
    start(1, 1000, "early", 9);
    kernel(1, 2000, 3000, 3300);
    kernel(1, 6000, 7000, 7700); /* after the end */
    const gt_row *early = range(0, "early");
    assert_int_equal(early->calls, 1);
    assert_int_equal(early->time.total, 4000);
    assert_int_equal(early->gpu_ns_total, 300);
    end(3, 100, 12345); /* never started */
    gt_report_finish(r, 10000);
    assert_int_equal(r->nvtx.counts.unmatched_ends, 1);
    assert_int_equal(r->nvtx.counts.open_at_exit, 0);
}

static void test_start_end_on_one_thread(void **unused)
{
    (void)unused;
    start(1, 100, "s", 1);
    start(1, 200, "t", 2);
    kernel(1, 300, 1000, 1100);
    end(1, 400, 1);
    kernel(1, 500, 2000, 2200);
    end(1, 600, 2);
    assert_int_equal(range(0, "s")->gpu_ns_total, 100);
    assert_int_equal(range(0, "t")->gpu_ns_total, 300);
    assert_int_equal(range(0, "t")->time.total, 400);
    assert_int_equal(r->nvtx.open_ranges, 0);
    end(1, 700, 2); /* twice: waits for a start that never comes */
    gt_report_finish(r, 1000);
    assert_int_equal(r->nvtx.counts.unmatched_ends, 1);
    assert_int_equal(range(0, "t")->calls, 1);
}

/* Nesting far past the cap: counted, paired, never a crash. */
static void test_deep_nesting(void **unused)
{
    (void)unused;
    unsigned depth = GT_NVTX_MAX_DEPTH + 50;
    for (unsigned i = 0; i < depth; i++)
        push(1, i, 0, "deep");
    kernel(1, depth, 10, 20);
    for (unsigned i = 0; i < depth; i++)
        pop(1, 1000 + i, 0);
    assert_int_equal(r->nvtx.counts.too_deep, 50);
    assert_int_equal(r->nvtx.counts.unbalanced_pops, 0);
    const gt_row *deep = range(0, "deep");
    assert_int_equal(deep->calls, GT_NVTX_MAX_DEPTH);
    /* every tracked level saw the kernel through its children */
    assert_int_equal(deep->gpu_ns_total, 10 * GT_NVTX_MAX_DEPTH);
}

static void test_marks_are_counted(void **unused)
{
    (void)unused;
    add(nvtx_event(GT_EV_NVTX_MARK, 1, 10, 0, intern(names, "here"), 0));
    assert_int_equal(r->nvtx.counts.marks, 1);
    assert_int_equal(r->tables[GT_CAT_NVTX].nrows, 0);
}

/* Many threads with ranges that close: thread states do not pile up. */
static void test_thread_states_are_released(void **unused)
{
    (void)unused;
    for (uint32_t tid = 1; tid <= 1000; tid++) {
        push(tid, tid, 0, "work");
        pop(tid, tid + 5, 0);
    }
    assert_true(r->nvtx.nthreads <= 100);
    assert_int_equal(range(0, "work")->calls, 1000);
}

/* The id map under the ranges and threads: random sets and removals
 * against a plain array. */
static void test_idmap_against_array(void **unused)
{
    (void)unused;
    enum { KEYS = 300 };
    static int64_t reference[KEYS]; /* value, -1 when absent */
    for (int i = 0; i < KEYS; i++)
        reference[i] = -1;
    gt_idmap m = {0};
    uint64_t state = 11;
    for (int op = 0; op < 200000; op++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t k = (uint32_t)(state >> 33) % KEYS;
        uint64_t key = (uint64_t)k * 0x100000001ull; /* spread over 64 bits */
        if ((state >> 20) % 3 == 0) {
            gt_idmap_remove(&m, key);
            reference[k] = -1;
        } else {
            assert_int_equal(gt_idmap_set(&m, key, (uint32_t)op), 0);
            reference[k] = op;
        }
        if (op % 1000 == 0) {
            uint32_t count = 0;
            for (int i = 0; i < KEYS; i++) {
                uint32_t v;
                bool found = gt_idmap_get(&m, (uint64_t)i * 0x100000001ull, &v);
                assert_int_equal(found, reference[i] >= 0);
                if (found) assert_int_equal(v, reference[i]);
                count += found;
            }
            assert_int_equal(count, m.count);
        }
    }
    gt_idmap_free(&m);
}

/* The time ranges were open: each thread's time inside some range, a
 * nested range (in any domain, push/pop or start/end) counted once, and
 * a range that outlives its enclosing one extending it. */
static void test_open_time(void **unused)
{
    (void)unused;
    push(1, 1000, 0, "solve"); /* 1000..9000 */
    push(1, 2000, 0, "chunk");
    push(1, 2500, 7, "library"); /* another domain, still inside solve */
    pop(1, 3000, 7);
    pop(1, 4000, 0);
    pop(1, 9000, 0);
    start(1, 10000, "pipeline", 5); /* 10000..20000 */
    push(1, 11000, 0, "chunk");     /* inside the start/end range */
    pop(1, 12000, 0);
    end(1, 20000, 5);
    push(2, 500, 0, "worker"); /* another thread: 500..1500 */
    start(2, 700, "io", 6);    /* begins inside worker, ends after it: 500..1600 */
    pop(2, 1500, 0);
    end(2, 1600, 6);
    push(2, 5000, 0, "worker"); /* open at exit: 5000..30000 */
    gt_report_finish(r, 30000);
    assert_int_equal(r->nvtx.open_ns, 8000 + 10000 + 1100 + 25000);
    assert_int_equal(range(0, "chunk")->time.total, 2000 + 1000);
    assert_int_equal(range(0, "chunk")->open_ns, 2000 + 1000);
    assert_int_equal(range(0, "worker")->open_ns, 1000 + 25000);
    assert_int_equal(range(0, "io")->open_ns, 900);
}

/* Every row's open time within the whole, which is what its Time% is a
 * share of: a range pushed inside itself, ranges of two domains that
 * overlap without nesting, start/end ranges of one name that overlap on
 * one thread, one started on a thread and ended on another. */
static void overlapping_ranges(void)
{
    uint32_t lib = intern(names, "mylib");
    push(1, 0, 0, "recurse"); /* 0..1000, and again inside: counted once */
    push(1, 100, 0, "recurse");
    push(1, 200, 0, "recurse");
    pop(1, 800, 0);
    pop(1, 900, 0);
    pop(1, 1000, 0);
    push(1, 2000, 0, "app");   /* 2000..3000 */
    push(1, 2500, lib, "lib"); /* 2500..6000: outlives app */
    pop(1, 3000, 0);
    pop(1, 6000, lib);
    start(2, 0, "request", 1); /* three overlapping: 0..4000 */
    start(2, 1000, "request", 2);
    start(2, 2000, "request", 3);
    end(2, 3000, 1);
    end(2, 4000, 3);
    end(2, 3500, 2);
    start(3, 100, "handoff", 9); /* ended by thread 4 at 700 */
    end(4, 700, 9);
    push(3, 900, 0, "after"); /* thread 3 passes 700: the handoff settles */
    pop(3, 1000, 0);
    gt_report_finish(r, 10000);
}

static void test_open_time_within_whole(void **unused)
{
    (void)unused;
    overlapping_ranges();
    uint32_t lib = intern(names, "mylib");
    const gt_row *recurse = range(0, "recurse");
    assert_int_equal(recurse->calls, 3);
    assert_int_equal(recurse->time.total, 1000 + 800 + 600);
    assert_int_equal(recurse->open_ns, 1000);
    assert_int_equal(range(0, "app")->open_ns, 1000);
    assert_int_equal(range(lib, "lib")->open_ns, 3500);
    const gt_row *request = range(0, "request");
    assert_int_equal(request->time.total, 3000 + 2500 + 2000);
    assert_int_equal(request->open_ns, 4000);
    assert_int_equal(range(0, "handoff")->open_ns, 600);
    /* thread 1: 0..1000 and 2000..6000; thread 2: 0..4000; thread 3:
     * 100..700 and 900..1000. */
    assert_int_equal(r->nvtx.open_ns, 1000 + 4000 + 4000 + 600 + 100);
    const gt_table *t = &r->tables[GT_CAT_NVTX];
    for (uint32_t i = 0; i < t->nrows; i++)
        assert_true(t->rows[i].open_ns <= r->nvtx.open_ns);
}

/* The Time% cells of the summary's NVTX table at verbosity v; returns
 * how many rows it has, after checking each is at most 100%. */
static unsigned check_shares(enum gt_verbosity v)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(gt_report_write_summary_at(r, NULL, v, f), 0);
    fclose(f);
    const char *line = strstr(text, "\nnvtx: ");
    assert_non_null(line);
    unsigned rows = 0;
    for (line = strchr(line + 1, '\n') + 1; *line && *line != '\n'; line = strchr(line, '\n') + 1) {
        double share;
        char percent;
        if (sscanf(line, " %lf%c", &share, &percent) != 2 || percent != '%') continue;
        if (share > 100.0) fail_msg("Time%% above 100%%: %.*s", (int)strcspn(line, "\n"), line);
        rows++;
    }
    free(text);
    return rows;
}

/* Recursion, ranges of two domains that overlap without nesting,
 * overlapping start/end ranges, ranges on several threads: no row's share
 * passes 100%, at either verbosity. */
static void test_shares_at_most_whole(void **unused)
{
    (void)unused;
    overlapping_ranges();
    assert_int_equal(check_shares(GT_VERB_DEFAULT), 6);
    assert_int_equal(check_shares(GT_VERB_VERBOSE), 6);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_nesting_and_gpu_time),
        T(test_repeated_ranges),
        T(test_domains_are_apart),
        T(test_unbalanced_pop),
        T(test_open_at_exit),
        T(test_start_end_across_threads),
        T(test_end_after_later_work),
        T(test_many_ends_drained_late),
        T(test_long_range_past_the_log),
        T(test_thread_name_does_not_settle),
        T(test_end_before_start),
        T(test_start_end_on_one_thread),
        T(test_deep_nesting),
        T(test_marks_are_counted),
        T(test_thread_states_are_released),
        T(test_open_time),
        T(test_open_time_within_whole),
        T(test_shares_at_most_whole),
        cmocka_unit_test(test_idmap_against_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
