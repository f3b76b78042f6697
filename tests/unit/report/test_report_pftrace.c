/* The Perfetto trace: the wire-format encoder and the streamed writer.
 *
 * Run with no arguments: cmocka tests of varints, tags, fixed64 and
 * length prefixes byte for byte, then of the writer through a small
 * wire-format reader here (every packet well-formed, sequences started
 * before use, slices closed, lanes, caps, a write error). Perfetto's own
 * definitions decode the traces in report_pftrace_check.py.
 * Run as `--emit PATH HEXNAME...`: writes at PATH the trace of the sample
 * run, then of kernels named by the given names (hex-encoded bytes; each
 * launched twice, the second time captured into a graph), marks and
 * thread names of those names, NVTX start/end ranges (one ended on
 * another thread before its start arrives), a range in a domain, GPU
 * work of two threads on one stream arriving out of order, a host call
 * recorded after one that ran inside it, and BULK_LAUNCHES launches on 2
 * devices x 3 streams with GPU durations of 1000 + i % 1000 ns, for
 * report_pftrace_check.py. */
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
#include <unistd.h>

#include <cmocka.h>

#include "event.h"
#include "nvtx_table.h"
#include "pb.h"
#include "pb_read.h"
#include "pftrace.h"
#include "report.h"
#include "stream_file.h"
#include "timeline.h"
#include "trace_emit.h"
#include "trace_format.h"


/* ------------------------------------------------------- the encoder */

static void expect_bytes(const uint8_t *got, const uint8_t *end, const char *hex)
{
    char text[128] = "";
    for (const uint8_t *p = got; p < end && strlen(text) < sizeof text - 3; p++)
        sprintf(text + strlen(text), "%02x", *p);
    assert_string_equal(text, hex);
}

static void test_varints(void **unused)
{
    (void)unused;
    static const struct {
        uint64_t v;
        const char *hex;
    } cases[] = {
        {0, "00"},
        {1, "01"},
        {127, "7f"},
        {128, "8001"},
        {300, "ac02"},
        {16383, "ff7f"},
        {16384, "808001"},
        {1ull << 32, "8080808010"},
        {UINT64_MAX, "ffffffffffffffffff01"},
    };
    uint8_t buf[16];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *end = gt_pb_varint(buf, cases[i].v);
        expect_bytes(buf, end, cases[i].hex);
        assert_int_equal((size_t)(end - buf), gt_pb_varint_size(cases[i].v));
    }
    /* every bit length, at its edges, reads back */
    for (unsigned bits = 0; bits < 64; bits++)
        for (int d = -1; d <= 1; d++) {
            uint64_t v = (1ull << bits) + (uint64_t)(int64_t)d, back;
            const uint8_t *p = buf;
            uint8_t *end = gt_pb_varint(buf, v);
            assert_true(read_varint(&p, end, &back));
            assert_true(p == end);
            assert_true(back == v);
            assert_int_equal((size_t)(end - buf), gt_pb_varint_size(v));
        }
}

static void test_fields(void **unused)
{
    (void)unused;
    uint8_t buf[32];
    expect_bytes(buf, gt_pb_uint(buf, 8, 5), "4005");    /* TracePacket.timestamp */
    expect_bytes(buf, gt_pb_uint(buf, 58, 3), "d00303"); /* timestamp_clock_id: a 2-byte tag */
    expect_bytes(buf, gt_pb_fixed64(buf, 47, 0x0102030405060708ull), "f9020807060504030201");
    expect_bytes(buf, gt_pb_bytes(buf, 2, "abc", 3), "1203616263");
    expect_bytes(buf, gt_pb_bytes(buf, 2, "", 0), "1200");
}

/* A nested message of n bytes: its length is right whatever n, the
 * contents follow unchanged, and messages nest. */
static void test_lengths(void **unused)
{
    (void)unused;
    static const size_t sizes[] = {0, 1, 127, 128, 300, 16383, 16384, 100000};
    uint8_t *buf = malloc(300000);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        uint8_t *outer, *inner, *p = gt_pb_open(buf, 1, &outer);
        p = gt_pb_open(p, 2, &inner);
        for (size_t j = 0; j < n; j++)
            *p++ = (uint8_t)(j * 7);
        p = gt_pb_close(inner, p);
        p = gt_pb_uint(p, 3, n);
        uint8_t *end = gt_pb_close(outer, p);
        size_t inner_len = 1 + gt_pb_varint_size(n) + n;
        size_t outer_len = inner_len + 1 + gt_pb_varint_size(n);
        assert_int_equal((size_t)(end - buf), 1 + gt_pb_varint_size(outer_len) + outer_len);
        const uint8_t *at = buf;
        field f, g, h;
        assert_true(next_field(&at, end, &f));
        assert_true(at == end);
        assert_int_equal(f.num, 1);
        assert_int_equal(f.len, outer_len);
        const uint8_t *q = f.data;
        assert_true(next_field(&q, f.data + f.len, &g));
        assert_int_equal(g.num, 2);
        assert_int_equal(g.len, n);
        for (size_t j = 0; j < n; j++)
            if (g.data[j] != (uint8_t)(j * 7)) fail_msg("byte %zu of %zu moved wrong", j, n);
        assert_true(next_field(&q, f.data + f.len, &h));
        assert_int_equal(h.num, 3);
        assert_int_equal(h.v, n);
        assert_false(next_field(&q, f.data + f.len, &h));
    }
    free(buf);
}

/* --------------------------------------------------------- the writer */

typedef struct trace {
    char path[64];
    int fd;
    sample s;
    gt_pftrace *pf;
} trace;

static void add_to_trace(void *ctx, const gt_report *r, const gt_event *ev)
{
    (void)r;
    gt_pftrace_add(ctx, ev);
}

static void trace_open(trace *t)
{
    strcpy(t->path, "/tmp/gt-pftrace-XXXXXX");
    t->fd = mkstemp(t->path);
    assert_true(t->fd >= 0);
    sample_init(&t->s, NULL);
    t->pf = gt_pftrace_create(t->fd, t->s.names, SAMPLE_PID, GT_CAT_ALL);
    assert_non_null(t->pf);
    gt_pftrace_follow_memory(t->pf, &t->s.r->memory);
    t->s.also = add_to_trace;
    t->s.ctx = t->pf;
}

static void add(trace *t, gt_event ev)
{
    sample_add(&t->s, ev);
}

/* What the packets of a trace hold, counted. */
typedef struct tally {
    unsigned bundles; /* compressed_packets */
    uint64_t raw_bytes;  /* the packets' bytes, inflated */
    uint64_t file_bytes; /* the file's */
    unsigned packets, descriptors, begins, ends, instants, counters, flows_out, flows_in;
    unsigned lanes; /* descriptors named lane_name */
    const char *lane_name;
    bool started[4096]; /* sequence ids whose first packet was seen */
} tally;

/* A slice's END, half of every slice's packets, carries
 * nothing but its sequence, its time (and that time's clock, when it
 * goes back) and its type: the track is the sequence's default. */
static bool bare_end(const uint8_t *data, size_t len, const field *ev)
{
    const uint8_t *p = data;
    field f;
    while (next_field(&p, data + len, &f))
        if (f.num != 10 && f.num != 8 && f.num != 58 && f.num != 11) return false;
    p = ev->data;
    while (next_field(&p, ev->data + ev->len, &f))
        if (f.num != 9) return false;
    return true;
}

static void tally_packet(tally *y, const uint8_t *data, size_t len)
{
    y->packets++;
    field f, seq, ev;
    bool has_seq = find_field(data, len, 10, &seq);
    if (find_field(data, len, 60, &f)) {
        y->descriptors++;
        assert_false(has_seq); /* descriptors belong to no sequence */
        field name;
        if (y->lane_name && find_field(f.data, f.len, 2, &name) &&
            name.len == strlen(y->lane_name) && memcmp(name.data, y->lane_name, name.len) == 0)
            y->lanes++;
        return;
    }
    assert_true(has_seq);
    assert_true(seq.v > 0 && seq.v < 4096);
    field flags;
    if (!y->started[seq.v]) {
        /* a sequence's first packet clears its state and starts its clock */
        assert_true(find_field(data, len, 13, &flags));
        assert_int_equal(flags.v, 1);
        assert_true(find_field(data, len, 6, &f));
        y->started[seq.v] = true;
        return;
    }
    assert_true(find_field(data, len, 11, &ev));
    assert_true(find_field(data, len, 8, &f)); /* a timestamp */
    field type;
    assert_true(find_field(ev.data, ev.len, 9, &type));
    y->begins += type.v == 1;
    y->ends += type.v == 2;
    if (type.v == 2) assert_true(bare_end(data, len, &ev));
    y->instants += type.v == 3;
    y->counters += type.v == 4;
    y->flows_out += find_field(ev.data, ev.len, 47, &f);
    y->flows_in += find_field(ev.data, ev.len, 48, &f);
}

/* The packets of Trace bytes, those in bundles (a packet that holds only
 * compressed_packets: Trace bytes again) read in their place. */
static void tally_packets(tally *y, const uint8_t *data, size_t size, bool in_bundle)
{
    const uint8_t *p = data;
    field f, z, other;
    while (next_field(&p, data + size, &f)) {
        assert_int_equal(f.num, 1); /* Trace.packet */
        assert_int_equal(f.wire, GT_PB_LEN);
        const uint8_t *q = f.data;
        if (find_field(f.data, f.len, 50, &z)) {
            assert_false(in_bundle); /* bundles do not nest */
            assert_true(next_field(&q, f.data + f.len, &other));
            assert_false(next_field(&q, f.data + f.len, &other)); /* nothing beside it */
            size_t n;
            uint8_t *inner = inflate_bundle(z.data, z.len, &n);
            y->bundles++;
            tally_packets(y, inner, n, true);
            free(inner);
            continue;
        }
        y->raw_bytes += 1 + gt_pb_varint_size(f.len) + f.len;
        tally_packet(y, f.data, f.len);
    }
}

/* Finishes the trace and counts what its packets hold. */
static void trace_close(trace *t, tally *y)
{
    assert_int_equal(gt_pftrace_finish(t->pf, &t->s.p), 0);
    uint64_t bytes = gt_trace_bytes(t->pf);
    gt_pftrace_destroy(t->pf);
    off_t size = lseek(t->fd, 0, SEEK_END);
    assert_int_equal((uint64_t)size, bytes);
    uint8_t *data = malloc((size_t)size);
    assert_int_equal(pread(t->fd, data, (size_t)size, 0), size);
    y->file_bytes = (uint64_t)size;
    tally_packets(y, data, (size_t)size, false);
    free(data);
    close(t->fd);
    unlink(t->path);
    sample_free(&t->s);
}

/* The sample run: every packet well-formed, every sequence started
 * before its events, every slice closed, a flow per piece of GPU work. */
static void test_sample_packets(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t);
    sample_run(&t.s);
    gt_timeline_losses l;
    l = *gt_trace_losses(t.pf);
    assert_int_equal(gt_timeline_losses_total(&l), 0);
    tally y = {.lane_name = NULL};
    trace_close(&t, &y);
    assert_true(y.begins > 0);
    assert_int_equal(y.begins, y.ends);
    /* the GPU work: 151 + 1 + 12 x 2 copies, 1 + 12 x 2 kernels */
    assert_int_equal(y.flows_out, 151 + 1 + 24 + 1 + 24);
    assert_int_equal(y.flows_in, y.flows_out);
    /* a counter value per allocation and free that succeeded */
    assert_int_equal(y.counters, 4 + 2);
    /* the process, threads, 2 devices, streams, counters */
    assert_true(y.descriptors >= 7);
}

/* Appends the packets' bytes, bundles inflated, to *all. */
static void gather_packets(const uint8_t *data, size_t size, uint8_t **all, size_t *len)
{
    const uint8_t *p = data;
    field f, z;
    while (next_field(&p, data + size, &f)) {
        if (find_field(f.data, f.len, 50, &z)) {
            size_t n;
            uint8_t *inner = inflate_bundle(z.data, z.len, &n);
            gather_packets(inner, n, all, len);
            free(inner);
            continue;
        }
        *all = realloc(*all, *len + f.len);
        assert_non_null(*all);
        memcpy(*all + *len, f.data, f.len);
        *len += f.len;
    }
}

/* A Numba kernel's name is interned as the verbose summary shows it:
 * escapes undone, ABI tags out, the signature kept. */
static void test_numba_names(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t);
    gt_event ev = kernel_event(intern(t.s.names, "cudapy::m::f::_3clocals_3e::k[abi:v1]"
                                                 "[abi:cw51cXTLSUwv1sDUaKthqqNgQ0](int)"),
                               10, SAMPLE_START, SAMPLE_START + 100, SAMPLE_START + 900);
    add(&t, ev);
    assert_int_equal(gt_pftrace_finish(t.pf, &t.s.p), 0);
    gt_pftrace_destroy(t.pf);
    off_t size = lseek(t.fd, 0, SEEK_END);
    uint8_t *data = malloc((size_t)size), *all = NULL;
    size_t len = 0;
    assert_int_equal(pread(t.fd, data, (size_t)size, 0), size);
    gather_packets(data, (size_t)size, &all, &len);
    const char *want = "cudapy::m::f::<locals>::k(int)";
    assert_non_null(memmem(all, len, want, strlen(want)));
    assert_null(memmem(all, len, "_3clocals_3e", 12));
    assert_null(memmem(all, len, "[abi:", 5));
    free(all);
    free(data);
    close(t.fd);
    unlink(t.path);
    sample_free(&t.s);
}

/* GPU work of two threads on one stream arriving a chunk at a time: the
 * later chunk's slices go to a second lane of the same name, so that
 * each lane is written in time order. Past GT_PFTRACE_MAX_LANES pieces
 * of work overlapping each other, the rest is left out and counted. */
static void test_lanes(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t);
    uint32_t k = intern(t.s.names, "k");
    for (uint32_t thread = 0; thread < 2; thread++)
        for (uint64_t i = 0; i < 10; i++) {
            uint64_t at = SAMPLE_START + i * 2000 + thread * 1000;
            gt_event ev = kernel_event(k, 10 + thread, at, at + 100, at + 1000);
            ev.stream = 0x5000;
            add(&t, ev);
        }
    for (uint64_t i = 0; i < GT_PFTRACE_MAX_LANES + 1; i++) {
        gt_event ev = kernel_event(k, 10, SAMPLE_START, SAMPLE_START + 10, SAMPLE_START + 900);
        ev.stream = 0x6000;
        add(&t, ev);
    }
    gt_timeline_losses l;
    l = *gt_trace_losses(t.pf);
    assert_int_equal(l.lanes, 1);
    assert_int_equal(l.tracks, 0);
    tally y = {.lane_name = "GPU 0 stream 0x5000"};
    trace_close(&t, &y);
    assert_int_equal(y.lanes, 2);
    assert_int_equal(y.begins, y.ends);
    assert_int_equal(y.flows_in, 20 + GT_PFTRACE_MAX_LANES);
}

/* Each thread's per-thread default stream is a track of its own: two
 * threads' overlapping work there needs no second lane. */
static void test_per_thread_default_streams(void **unused)
{
    (void)unused;
    const char *names[] = {"GPU 0 per-thread default stream, thread 10",
                           "GPU 0 per-thread default stream, thread 11",
                           "GPU 0 per-thread default stream"};
    const unsigned want[] = {1, 1, 0};
    for (int n = 0; n < 3; n++) {
        trace t;
        trace_open(&t);
        uint32_t k = intern(t.s.names, "k");
        for (uint32_t thread = 10; thread < 12; thread++) {
            gt_event ev =
                kernel_event(k, thread, SAMPLE_START, SAMPLE_START + 10, SAMPLE_START + 900);
            ev.stream = 2; /* CU_STREAM_PER_THREAD */
            add(&t, ev);
        }
        tally y = {.lane_name = names[n]};
        trace_close(&t, &y);
        assert_int_equal(y.lanes, want[n]);
        assert_int_equal(y.flows_in, 2);
    }
}

/* The file holds the packets in deflated bundles (compressed_packets),
 * each a whole zlib stream of whole packets read in its place, a few
 * times smaller than the packets; a trace too small to gain from it
 * holds its packets as they are. */
static void test_bundles(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t);
    tally y = {.lane_name = NULL};
    trace_close(&t, &y);
    assert_int_equal(y.bundles, 0);
    assert_int_equal(y.descriptors, 2); /* the process, then its name */

    trace_open(&t);
    uint32_t k[3] = {intern(t.s.names, "k0"), intern(t.s.names, "k1"), intern(t.s.names, "k2")};
    uint32_t launch = intern(t.s.names, "cuLaunchKernel");
    const unsigned launches = 30000;
    for (uint64_t i = 0; i < launches; i++) {
        uint64_t at = SAMPLE_START + i * 5000 + (i * 7919) % 1000;
        gt_event ev = kernel_event(k[i % 3], 10 + (uint32_t)(i & 1), at, at + 2000, at + 4000);
        ev.api = launch; /* a host slice and a GPU slice each */
        add(&t, ev);
    }
    memset(&y, 0, sizeof y);
    trace_close(&t, &y);
    assert_true(y.bundles >= 2);
    assert_true(y.raw_bytes > 4 * y.file_bytes);
    assert_int_equal(y.flows_in, launches);
    assert_int_equal(y.begins, y.ends);
    assert_int_equal(y.begins, 2 * launches);
}

/* Pushes past the depth cap are left out and counted, their pops end
 * nothing; ranges left open end at the end. */
static void test_too_deep(void **unused)
{
    (void)unused;
    trace t;
    trace_open(&t);
    uint32_t name = intern(t.s.names, "r");
    const unsigned depth = GT_NVTX_MAX_DEPTH + 3;
    for (unsigned i = 0; i < depth; i++)
        add(&t, nvtx_event(GT_EV_NVTX_PUSH, 7, SAMPLE_START + i, 0, name, 0));
    for (unsigned i = 0; i < depth - 1; i++)
        add(&t, nvtx_event(GT_EV_NVTX_POP, 7, SAMPLE_START + 1000 + i, 0, 0, 0));
    gt_timeline_losses l;
    l = *gt_trace_losses(t.pf);
    assert_int_equal(l.too_deep, 3);
    tally y = {.lane_name = NULL};
    trace_close(&t, &y);
    assert_int_equal(y.begins, GT_NVTX_MAX_DEPTH);
    assert_int_equal(y.ends, GT_NVTX_MAX_DEPTH);
}

/* A full disk: finish reports the error. */
static void test_write_error(void **unused)
{
    (void)unused;
    int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (fd < 0) skip();
    sample s;
    sample_build(&s, NULL);
    gt_pftrace *pf = gt_pftrace_create(fd, s.names, 1, GT_CAT_ALL);
    gt_event ev = kernel_event(intern(s.names, "k"), 1, 0, 0, 10);
    gt_pftrace_add(pf, &ev);
    errno = 0;
    assert_int_equal(gt_pftrace_finish(pf, &s.p), -1);
    assert_int_equal(errno, ENOSPC);
    gt_pftrace_destroy(pf);
    close(fd);
    sample_free(&s);
}

/* ------------------------------------------------------------- --emit */

static void emit_extras(sample *s, uint64_t t)
{
    /* start/end ranges: one ended on another thread before its start
     * arrives, one left open at the end; a range in a domain */
    uint32_t ranges = intern(s->names, "ranges"), lib = intern(s->names, "mylib");
    sample_add(s, nvtx_event(GT_EV_NVTX_END, 301, t + 5000, 0, 0, 77));
    sample_add(s, nvtx_event(GT_EV_NVTX_START, 300, t, 0, intern(s->names, "crossing"), 77));
    sample_add(s, nvtx_event(GT_EV_NVTX_START, 300, t + 100, 0, intern(s->names, "open"), 78));
    sample_add(s, nvtx_event(GT_EV_NVTX_START, 300, t + 200, 0, ranges, 79));
    sample_add(s, nvtx_event(GT_EV_NVTX_END, 300, t + 300, 0, 0, 79));
    sample_add(s, nvtx_event(GT_EV_NVTX_PUSH, 300, t + 400, lib, intern(s->names, "in lib"), 0));
    sample_add(s, nvtx_event(GT_EV_NVTX_POP, 300, t + 900, lib, 0, 0));
    /* two threads' GPU work on one stream, the second's arriving first */
    uint32_t k = intern(s->names, "shared_stream_kernel"),
             launch = intern(s->names, "cudaLaunchKernel");
    for (uint32_t thread = 2; thread-- > 0;)
        for (uint64_t i = 0; i < 5; i++) {
            uint64_t at = t + 10000 + i * 2000 + thread * 1000;
            gt_event ev = kernel_event(k, 310 + thread, at, at + 100, at + 1000);
            ev.api = launch;
            ev.stream = 0x7f000000b000ull;
            sample_add(s, ev);
        }
    /* a call recorded after one that ran inside it */
    gt_event inner = host_event(GT_EV_API, 320, t + 30000, t + 30500);
    inner.api = intern(s->names, "inner_call");
    gt_event outer = host_event(GT_EV_API, 320, t + 29000, t + 31000);
    outer.api = intern(s->names, "outer_call");
    sample_add(s, inner);
    sample_add(s, outer);
}

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
    gt_pftrace *pf = gt_pftrace_create(f.fd, s.names, SAMPLE_PID, GT_CAT_ALL);
    gt_pftrace_follow_memory(pf, &s.r->memory);
    s.also = add_to_trace;
    s.ctx = pf;
    sample_run(&s);
    uint64_t t = SAMPLE_END;
    t = emit_hostile(&s, t, argv + 3, argc - 3);
    emit_extras(&s, t);
    t += 100000;
    t = emit_bulk(&s, t);
    s.p.end_ns = t;
    int rc = gt_pftrace_finish(pf, &s.p);
    gt_pftrace_destroy(pf);
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
        cmocka_unit_test(test_varints),     cmocka_unit_test(test_fields),
        cmocka_unit_test(test_lengths),     cmocka_unit_test(test_sample_packets),
        cmocka_unit_test(test_lanes),       cmocka_unit_test(test_per_thread_default_streams),
        cmocka_unit_test(test_bundles),     cmocka_unit_test(test_too_deep),
        cmocka_unit_test(test_write_error), cmocka_unit_test(test_numba_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
