/* The Chrome trace: the streamed timeline and its file.
 *
 * Run with no arguments: cmocka tests of number formatting, each kind of
 * event, the file's commit and failures, and the caps.
 * Run as `--emit PATH HEXNAME...`: writes at PATH the trace of the sample
 * run, then of kernels named by the given names (hex-encoded bytes; each
 * launched twice, the second time captured into a graph), then
 * of BULK_LAUNCHES launches on 2 devices x 3 streams with GPU durations
 * of 1000 + i % 1000 ns (several MiB: many times the writer's buffer),
 * plus NVTX ranges and thread names, for report_chrome_check.py. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "chrome.h"
#include "event.h"
#include "nvtx_table.h"
#include "outbuf.h"
#include "report.h"
#include "stream_file.h"
#include "timeline.h"
#include "trace_emit.h"
#include "trace_format.h"

/* ----------------------------------------------------------- helpers */

typedef struct trace {
    char path[64];
    int fd;
    sample s;
    gt_timeline *tl;
} trace;

static void add_to_timeline(void *ctx, const gt_report *r, const gt_event *ev)
{
    (void)r; /* the sample's callback: the timeline needs only the record */
    gt_timeline_add(ctx, ev);
}

/* A sample report (not run yet) with a timeline writing to a new file. */
static void trace_open(trace *t, unsigned categories)
{
    strcpy(t->path, "/tmp/gt-chrome-XXXXXX");
    t->fd = mkstemp(t->path);
    assert_true(t->fd >= 0);
    gt_report_options opt = {.categories = categories};
    sample_init(&t->s, &opt);
    t->tl = gt_timeline_create(t->fd, t->s.names, SAMPLE_PID, SAMPLE_START, categories);
    assert_non_null(t->tl);
    gt_timeline_follow_memory(t->tl, &t->s.r->memory);
    t->s.also = add_to_timeline;
    t->s.ctx = t->tl;
}

static void add(trace *t, gt_event ev)
{
    sample_add(&t->s, ev);
}

/* Finishes the trace and returns its text. */
static char *trace_close(trace *t)
{
    assert_int_equal(gt_timeline_finish(t->tl, &t->s.p), 0);
    gt_timeline_destroy(t->tl);
    off_t size = lseek(t->fd, 0, SEEK_END);
    char *text = malloc((size_t)size + 1);
    assert_int_equal(pread(t->fd, text, (size_t)size, 0), size);
    text[size] = '\0';
    close(t->fd);
    unlink(t->path);
    sample_free(&t->s);
    return text;
}

static int occurrences(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* ------------------------------------------------------------- tests */

static void test_numbers(void **unused)
{
    (void)unused;
    char buf[64];
    *gt_put_us(buf, 1234567) = '\0';
    assert_string_equal(buf, "1234.567");
    *gt_put_us(buf, 5) = '\0';
    assert_string_equal(buf, "0.005");
    *gt_put_us(buf, 1500) = '\0';
    assert_string_equal(buf, "1.5");
    *gt_put_us(buf, 1250) = '\0';
    assert_string_equal(buf, "1.25");
    *gt_put_us(buf, 7000) = '\0';
    assert_string_equal(buf, "7");
    *gt_put_us(buf, 0) = '\0';
    assert_string_equal(buf, "0");
    *gt_put_us(buf, -20) = '\0';
    assert_string_equal(buf, "-0.02");
    *gt_put_us(buf, INT64_MIN) = '\0';
    assert_string_equal(buf, "-9223372036854775.808");
    *gt_put_u64(buf, UINT64_MAX) = '\0';
    assert_string_equal(buf, "18446744073709551615");
    *gt_put_u64(buf, 7) = '\0';
    assert_string_equal(buf, "7");
    /* every digit count, at its edges, against printf */
    for (uint64_t p10 = 1;; p10 *= 10) {
        for (uint64_t v = p10 - 1; v <= p10 + 1; v++) {
            char want[32];
            snprintf(want, sizeof want, "%llu", (unsigned long long)v);
            *gt_put_u64(buf, v) = '\0';
            assert_string_equal(buf, want);
        }
        if (p10 > UINT64_MAX / 10) break;
    }
}

/* The sample run: one host slice per call, one GPU slice per timed piece
 * of work, on tracks named per (device, stream), memory counters. */
static void test_sample_events(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t, GT_CAT_ALL);
    sample_run(&t.s);
    char *text = trace_close(&t);
    assert_memory_equal(text, "{\"traceEvents\":[\n", 17);
    assert_non_null(strstr(text, "\n],\"displayTimeUnit\":\"ns\"}\n"));
    /* 25 launches: 25 host slices with the kernel's name, 25 on the GPU */
    assert_int_equal(occurrences(text, "\"name\":\"cuLaunchKernel\""), 25);
    assert_int_equal(occurrences(text, "\"args\":{\"grid\":[256,1,1],\"block\":[128,1,1]"), 25);
    /* the first chunk's rk4 kernel: 2 ms from its start */
    assert_non_null(strstr(text, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" SAMPLE_RK4_NAME
                                 "\",\"pid\":4242,\"tid\":4194305,\"ts\":125041.5,"
                                 "\"dur\":2000,"));
    assert_non_null(strstr(text, "\"args\":{\"name\":\"GPU 0 default stream\"}"));
    assert_non_null(strstr(text, "\"args\":{\"name\":\"GPU 0 stream 0x7f0000001000\"}"));
    assert_non_null(strstr(text, "\"args\":{\"name\":\"batch_ode\"}"));
    assert_int_equal(occurrences(text, "\"name\":\"HtoD pinned async\""), 12);
    /* memory in use after each allocation and free */
    assert_non_null(strstr(text, "\"name\":\"GPU 0 memory\",\"pid\":4242,\"tid\":4242,"));
    assert_int_equal(occurrences(text, "\"ph\":\"C\""), 6);
    assert_non_null(strstr(text, "\"args\":{\"bytes\":83886080}"));
    assert_non_null(strstr(text, "\"args\":{\"bytes\":67108864}"));
    /* NVTX: 12 chunks and the solve range */
    assert_int_equal(occurrences(text, "\"cat\":\"nvtx\",\"name\":\"chunk\""), 12);
    assert_int_equal(occurrences(text, "\"cat\":\"nvtx\",\"name\":\"solve\""), 1);
    /* the failed allocation */
    assert_non_null(strstr(text, "\"args\":{\"bytes\":0,\"error\":\"CUDA_ERROR_OUT_OF_MEMORY\"}"));
    free(text);
}

/* A Numba kernel is named as the verbose summary names it: escapes
 * undone, ABI tags out, the signature kept. */
static void test_numba_names(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t, GT_CAT_ALL);
    uint32_t name =
        intern(t.s.names, "cudapy::m::f::_3clocals_3e::k[abi:v1][abi:cw51cXTLSUw](int)");
    add(&t, kernel_event(name, 10, SAMPLE_START, SAMPLE_START + 100, SAMPLE_START + 900));
    char *text = trace_close(&t);
    assert_non_null(strstr(text, "\"name\":\"cudapy::m::f::<locals>::k(int)\""));
    assert_null(strstr(text, "_3clocals_3e"));
    assert_null(strstr(text, "[abi:"));
    free(text);
}

/* Disabled categories: no GPU slices, counters or ranges; host calls stay. */
static void test_categories(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t, GT_CAT_BIT(GT_CAT_API));
    sample_run(&t.s);
    char *text = trace_close(&t);
    assert_int_equal(occurrences(text, "\"name\":\"cuLaunchKernel\""), 25);
    assert_null(strstr(text, "\"tid\":4194304"));
    assert_null(strstr(text, "\"ph\":\"C\""));
    assert_null(strstr(text, "\"cat\":\"nvtx\""));
    free(text);
}

static gt_event nvtx(trace *t, uint8_t kind, uint32_t tid, uint64_t at, const char *name,
                     uint64_t id)
{
    return nvtx_event(kind, tid, SAMPLE_START + at, 0, name ? intern(t->s.names, name) : 0, id);
}

static void test_nvtx(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t, GT_CAT_ALL);
    add(&t, nvtx(&t, GT_EV_NVTX_PUSH, 7, 1000, "outer", 0));
    add(&t, nvtx(&t, GT_EV_NVTX_PUSH, 7, 2000, "inner", 0));
    add(&t, nvtx(&t, GT_EV_NVTX_POP, 7, 2500, NULL, 0));
    add(&t, nvtx(&t, GT_EV_NVTX_POP, 8, 2600, NULL, 0)); /* no push on thread 8 */
    add(&t, nvtx(&t, GT_EV_NVTX_MARK, 7, 2700, "here", 0));
    add(&t, nvtx(&t, GT_EV_NVTX_START, 7, 3000, "io", 0x51));
    add(&t, nvtx(&t, GT_EV_NVTX_END, 9, 4000, NULL, 0x51));
    add(&t, nvtx(&t, GT_EV_NVTX_END, 9, 6000, NULL, 0x52)); /* its start comes later */
    add(&t, nvtx(&t, GT_EV_NVTX_START, 7, 5000, "late", 0x52));
    add(&t, nvtx(&t, GT_EV_NVTX_START, 7, 7000, "open", 0x53));
    gt_event ev = host_event(GT_EV_THREAD_NAME, 7, 0, 0);
    ev.name = intern(t.s.names, "worker \"7\"");
    add(&t, ev);
    char *text = trace_close(&t); /* "outer" and "open" close at the end: 200 ms */
    const char *want[] = {
        "{\"ph\":\"X\",\"cat\":\"nvtx\",\"name\":\"inner\",\"pid\":4242,\"tid\":7,\"ts\":2,"
        "\"dur\":0.5}",
        "{\"ph\":\"i\",\"cat\":\"nvtx\",\"name\":\"here\",\"pid\":4242,\"tid\":7,\"ts\":2.7,"
        "\"s\":\"t\"}",
        "{\"ph\":\"b\",\"cat\":\"nvtx\",\"name\":\"io\",\"pid\":4242,\"tid\":7,\"ts\":3,"
        "\"id\":\"0x51\"}",
        "{\"ph\":\"e\",\"cat\":\"nvtx\",\"name\":\"io\",\"pid\":4242,\"tid\":7,\"ts\":4,"
        "\"id\":\"0x51\"}",
        "{\"ph\":\"b\",\"cat\":\"nvtx\",\"name\":\"late\",\"pid\":4242,\"tid\":7,\"ts\":5,"
        "\"id\":\"0x52\"}",
        "{\"ph\":\"e\",\"cat\":\"nvtx\",\"name\":\"late\",\"pid\":4242,\"tid\":7,\"ts\":6,"
        "\"id\":\"0x52\"}",
        "{\"ph\":\"X\",\"cat\":\"nvtx\",\"name\":\"outer\",\"pid\":4242,\"tid\":7,\"ts\":1,"
        "\"dur\":199999}",
        "{\"ph\":\"e\",\"cat\":\"nvtx\",\"name\":\"open\",\"pid\":4242,\"tid\":7,\"ts\":200000,"
        "\"id\":\"0x53\"}",
        "{\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"thread_name\",\"pid\":4242,\"tid\":7,"
        "\"ts\":0,\"args\":{\"name\":\"worker \\\"7\\\"\"}}",
    };
    const char *at = text;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *found = strstr(at, want[i]);
        if (!found) fail_msg("missing, or out of order: %s", want[i]);
        at = found;
    }
    assert_int_equal(occurrences(text, "\"cat\":\"nvtx\""), 9);
    free(text);
}

/* Two threads' allocations arrive a thread at a time; the counter says
 * what was in use at each moment, in time order: thread 2's 20 MiB were
 * live beside thread 1's 10 MiB. */
static void test_memory_counter_in_time_order(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t, GT_CAT_ALL);
    const uint64_t mib = 1u << 20, at = SAMPLE_START;
    add(&t, mem_event(GT_EV_ALLOC, 1, at + 1000, 0x1000, 10 * mib, GT_MEM_DEVICE, 0));
    add(&t, mem_event(GT_EV_FREE, 1, at + 5000, 0x1000, 0, GT_MEM_DEVICE, 0));
    add(&t, mem_event(GT_EV_ALLOC, 2, at + 2000, 0x2000, 20 * mib, GT_MEM_DEVICE, 0));
    add(&t, mem_event(GT_EV_FREE, 2, at + 6000, 0x2000, 0, GT_MEM_DEVICE, 0));
    gt_report_finish(t.s.r, SAMPLE_END);
    char *text = trace_close(&t);
    const char *want[] = {
        "\"ts\":1,\"args\":{\"bytes\":10485760}}",
        "\"ts\":2,\"args\":{\"bytes\":31457280}}",
        "\"ts\":5,\"args\":{\"bytes\":20971520}}",
        "\"ts\":6,\"args\":{\"bytes\":0}}",
    };
    const char *from = text;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *found = strstr(from, want[i]);
        if (!found) fail_msg("counter sample missing or out of order: %s", want[i]);
        from = found;
    }
    assert_int_equal(occurrences(text, "\"ph\":\"C\""), 4);
    free(text);
}

/* Ranges say their domain, category and colour: same-named ranges of two
 * domains stay apart. */
static void test_nvtx_attributes(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t, GT_CAT_ALL);
    uint32_t lib = intern(t.s.names, "solver lib");
    gt_event ev = nvtx(&t, GT_EV_NVTX_PUSH, 7, 1000, "step", 0);
    ev.u.nvtx.domain = lib;
    ev.u.nvtx.category = intern(t.s.names, "io");
    ev.u.nvtx.color = 0xff336699u;
    add(&t, ev);
    ev = nvtx(&t, GT_EV_NVTX_POP, 7, 2000, NULL, 0);
    ev.u.nvtx.domain = lib;
    add(&t, ev);
    add(&t, nvtx(&t, GT_EV_NVTX_PUSH, 7, 3000, "step", 0));
    add(&t, nvtx(&t, GT_EV_NVTX_POP, 7, 4000, NULL, 0));
    ev = nvtx(&t, GT_EV_NVTX_START, 7, 5000, "load", 0x61);
    ev.u.nvtx.domain = lib;
    ev.u.nvtx.color = 0xff00ff00u;
    add(&t, ev);
    add(&t, nvtx(&t, GT_EV_NVTX_END, 7, 6000, NULL, 0x61));
    char *text = trace_close(&t);
    assert_non_null(strstr(text, "\"name\":\"step\",\"pid\":4242,\"tid\":7,\"ts\":1,\"dur\":1,"
                                 "\"args\":{\"domain\":\"solver lib\",\"category\":\"io\","
                                 "\"color\":\"#336699\"}}"));
    assert_non_null(strstr(text, "\"name\":\"step\",\"pid\":4242,\"tid\":7,\"ts\":3,\"dur\":1}"));
    assert_int_equal(
        occurrences(text, "\"args\":{\"domain\":\"solver lib\",\"color\":\"#00ff00\"}}"),
        2); /* b and e */
    free(text);
}

/* Pushes past the depth cap are left out, counted as too deep, and their
 * pops do not close the ranges below them. */
static void test_too_deep(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t, GT_CAT_ALL);
    const unsigned depth = GT_NVTX_MAX_DEPTH + 3;
    for (unsigned i = 0; i < depth; i++)
        add(&t, nvtx(&t, GT_EV_NVTX_PUSH, 7, 1000 + i, i ? "inner" : "outer", 0));
    for (unsigned i = 0; i < depth; i++)
        add(&t, nvtx(&t, GT_EV_NVTX_POP, 7, 5000 + i, NULL, 0));
    gt_timeline_losses l;
    l = *gt_trace_losses(t.tl);
    assert_int_equal(l.too_deep, 3);
    assert_int_equal(gt_timeline_losses_total(gt_trace_losses(t.tl)), 3);
    char *text = trace_close(&t);
    assert_int_equal(occurrences(text, "\"name\":\"inner\""), GT_NVTX_MAX_DEPTH - 1);
    /* the outermost range closes with the last pop */
    assert_non_null(strstr(text, "\"name\":\"outer\",\"pid\":4242,\"tid\":7,\"ts\":1,"
                                 "\"dur\":4.13}"));
    free(text);
}

/* Past the track cap, GPU work is left out and counted. */
static void test_track_cap(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t, GT_CAT_ALL);
    uint32_t k = intern(t.s.names, "k");
    for (uint64_t i = 0; i < GT_TIMELINE_MAX_TRACKS + 10; i++) {
        gt_event ev = kernel_event(k, 1, SAMPLE_START, SAMPLE_START, SAMPLE_START + 10);
        ev.stream = 0x1000 + i;
        add(&t, ev);
    }
    assert_int_equal(gt_timeline_losses_total(gt_trace_losses(t.tl)), 10);
    gt_timeline_losses l;
    l = *gt_trace_losses(t.tl);
    assert_int_equal(l.tracks, 10);
    char *text = trace_close(&t);
    assert_int_equal(occurrences(text, "\"name\":\"thread_name\""), GT_TIMELINE_MAX_TRACKS);
    free(text);
}

/* Each thread's per-thread default stream is a track of its own: two
 * threads' overlapping work on it shares none. */
static void test_per_thread_default_streams(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t, GT_CAT_ALL);
    uint32_t k = intern(t.s.names, "k");
    for (uint32_t thread = 10; thread < 12; thread++) {
        gt_event ev = kernel_event(k, thread, SAMPLE_START, SAMPLE_START + 10, SAMPLE_START + 900);
        ev.stream = 2; /* CU_STREAM_PER_THREAD */
        add(&t, ev);
    }
    char *text = trace_close(&t);
    assert_int_equal(occurrences(text, "\"name\":\"GPU 0 per-thread default stream, thread 10\""),
                     1);
    assert_int_equal(occurrences(text, "\"name\":\"GPU 0 per-thread default stream, thread 11\""),
                     1);
    assert_int_equal(occurrences(text, "\"name\":\"GPU 0 per-thread default stream\""), 0);
    assert_int_equal(occurrences(text, "\"cat\":\"kernel\",\"name\":\"k\""), 2);
    free(text);
}

/* Past the start of write-behind, windows go to writeback as the file
 * grows, and what is read back is what was written. */
static void test_write_behind(void **unused)
{
    (void)unused;
    char path[] = "/tmp/gt-behind-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    gt_outbuf b;
    assert_int_equal(gt_outbuf_init(&b, fd, 1u << 20), 0);
    const uint64_t total = GT_OUTBUF_BEHIND_START + 3 * GT_OUTBUF_BEHIND_WINDOW + 12345;
    char piece[4099];
    for (uint64_t at = 0; at < total;) {
        size_t n = total - at < sizeof piece ? (size_t)(total - at) : sizeof piece;
        for (size_t i = 0; i < n; i++)
            piece[i] = (char)((at + i) * 31 / 7);
        gt_outbuf_write(&b, piece, n);
        at += n;
    }
    assert_int_equal(gt_outbuf_flush(&b), 0);
    assert_int_equal(b.written, total);
    assert_true(b.behind >= GT_OUTBUF_BEHIND_START + 2 * GT_OUTBUF_BEHIND_WINDOW);
    gt_outbuf_free(&b);
    char *back = malloc(1u << 20);
    for (uint64_t at = 0; at < total;) {
        ssize_t n = pread(fd, back, 1u << 20, (off_t)at);
        assert_true(n > 0);
        for (ssize_t i = 0; i < n; i++)
            if (back[i] != (char)((at + (uint64_t)i) * 31 / 7))
                fail_msg("byte %llu differs", (unsigned long long)(at + (uint64_t)i));
        at += (uint64_t)n;
    }
    free(back);
    close(fd);
}

/* Not a regular file: no write-behind. */
static void test_no_write_behind_on_devices(void **unused)
{
    (void)unused;
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    gt_outbuf b;
    assert_int_equal(gt_outbuf_init(&b, fd, 4096), 0);
    assert_int_equal(b.behind, UINT64_MAX);
    gt_outbuf_free(&b);
    close(fd);
}

/* A full disk: finish reports the error. */
static void test_write_error(void **unused)
{
    (void)unused;
    int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (fd < 0) skip();
    sample s;
    sample_build(&s, NULL);
    gt_timeline *tl = gt_timeline_create(fd, s.names, 1, 0, GT_CAT_ALL);
    gt_event ev = kernel_event(intern(s.names, "k"), 1, 0, 0, 10);
    gt_timeline_add(tl, &ev);
    errno = 0;
    assert_int_equal(gt_timeline_finish(tl, &s.p), -1);
    assert_int_equal(errno, ENOSPC);
    gt_timeline_destroy(tl);
    close(fd);
    sample_free(&s);
}

static char dir[] = "/tmp/gt-stream-XXXXXX";

static int count_entries(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "exit $(ls -A '%s' | wc -l)", dir);
    return WEXITSTATUS(system(cmd));
}

/* The file appears under its name complete, replacing the old one; a
 * discarded one leaves nothing. */
static void test_stream_file(void **unused)
{
    (void)unused;
    assert_non_null(mkdtemp(dir));
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/r.trace.json", dir);
    FILE *old = fopen(path, "w");
    fputs("old", old);
    fclose(old);

    gt_stream_file f;
    assert_int_equal(gt_stream_file_open(&f, path, err, sizeof err), 0);
    assert_int_equal(write(f.fd, "new", 3), 3);
    char text[16] = "";
    FILE *seen = fopen(path, "r");
    assert_non_null(fgets(text, sizeof text, seen)); /* still the old file meanwhile */
    fclose(seen);
    assert_string_equal(text, "old");
    assert_int_equal(gt_stream_file_commit(&f, path, err, sizeof err), 0);
    seen = fopen(path, "r");
    assert_non_null(fgets(text, sizeof text, seen));
    fclose(seen);
    assert_string_equal(text, "new");
    assert_int_equal(count_entries(), 1);

    assert_int_equal(gt_stream_file_open(&f, path, err, sizeof err), 0);
    gt_stream_file_discard(&f);
    assert_int_equal(count_entries(), 1);

    char missing[160];
    snprintf(missing, sizeof missing, "%s/no/r.trace.json", dir);
    assert_int_equal(gt_stream_file_open(&f, missing, err, sizeof err), -1);
    assert_non_null(strstr(err, "/no/r.trace.json: cannot create the temporary file: "));
    unlink(path);
    rmdir(dir);
}

/* ------------------------------------------------------------- --emit */

static int emit(int argc, char **argv)
{
    gt_stream_file f;
    char err[512];
    if (gt_stream_file_open(&f, argv[2], err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    sample s;
    sample_init(&s, NULL);
    gt_timeline *tl = gt_timeline_create(f.fd, s.names, SAMPLE_PID, SAMPLE_START, GT_CAT_ALL);
    gt_timeline_follow_memory(tl, &s.r->memory);
    s.also = add_to_timeline;
    s.ctx = tl;
    sample_run(&s);
    uint64_t t = SAMPLE_END;
    t = emit_hostile(&s, t, argv + 3, argc - 3);
    t = emit_bulk(&s, t);
    int rc = gt_timeline_finish(tl, &s.p);
    gt_timeline_destroy(tl);
    if (rc != 0 || gt_stream_file_commit(&f, argv[2], err, sizeof err) != 0) {
        fprintf(stderr, "cannot write %s: %s\n", argv[2], err);
        return 1;
    }
    sample_free(&s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--emit") == 0) return emit(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_sample_events),
        cmocka_unit_test(test_categories),
        cmocka_unit_test(test_numba_names),
        cmocka_unit_test(test_nvtx),
        cmocka_unit_test(test_memory_counter_in_time_order),
        cmocka_unit_test(test_nvtx_attributes),
        cmocka_unit_test(test_too_deep),
        cmocka_unit_test(test_track_cap),
        cmocka_unit_test(test_per_thread_default_streams),
        cmocka_unit_test(test_write_error),
        cmocka_unit_test(test_stream_file),
        cmocka_unit_test(test_write_behind),
        cmocka_unit_test(test_no_write_behind_on_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
