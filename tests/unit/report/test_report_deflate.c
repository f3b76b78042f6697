/* The Perfetto trace's compressor (report/trace/deflate.c): every stream it
 * makes is inflated by zlib, the reference decoder (which also checks the
 * stream's Adler-32), back to the input byte for byte, within the room
 * gt_deflate_bound promises; inputs that stress each part of the format
 * (no match possible, the longest matches, matches at distance 1 and at
 * the window's edge, inputs past 64 KiB, the last two distances, calls
 * in a row sharing the table); the
 * checksum against zlib's at every length and alignment; and packets like
 * the trace's shrunk by the factor the trace depends on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "deflate.h"

static gt_deflate z;

/* Compresses in[0, n), inflates it back and compares; the stream's length. */
static size_t round_trip(const uint8_t *in, size_t n)
{
    size_t bound = gt_deflate_bound(n);
    uint8_t *out = malloc(bound + 64);
    assert_non_null(out);
    memset(out + bound, 0xA5, 64); /* nothing may be written past the bound */
    size_t len = gt_deflate_zlib(&z, in, n, out);
    assert_true(len <= bound);
    for (size_t i = 0; i < 64; i++)
        assert_int_equal(out[bound + i], 0xA5);
    uLongf back_len = (uLongf)n + 1;
    uint8_t *back = malloc(n + 1);
    assert_non_null(back);
    assert_int_equal(uncompress(back, &back_len, out, (uLong)len), Z_OK);
    assert_int_equal(back_len, n);
    assert_memory_equal(back, in, n);
    free(back);
    free(out);
    return len;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint8_t random_byte(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint8_t)(rng >> 32);
}

static void test_short_inputs(void **unused)
{
    (void)unused;
    const uint8_t bytes[] = {0x00, 0xff, 0x8f, 0x90, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a};
    for (size_t n = 0; n <= sizeof bytes; n++)
        round_trip(bytes, n);
}

/* Random bytes: no match, every literal (half of them 9-bit codes). */
static void test_incompressible(void **unused)
{
    (void)unused;
    size_t n = 200000;
    uint8_t *in = malloc(n);
    for (size_t i = 0; i < n; i++)
        in[i] = random_byte();
    size_t len = round_trip(in, n);
    assert_true(len > n); /* fixed codes: 8.5 bits a byte on average */
    free(in);
}

/* One byte repeated: matches at distance 1, each the longest (258). */
static void test_runs(void **unused)
{
    (void)unused;
    size_t n = 300000;
    uint8_t *in = calloc(1, n);
    size_t len = round_trip(in, n);
    assert_true(len < n / 100);
    free(in);
}

/* A block repeated exactly at 32768 (deflate's farthest distance) and at
 * 32769 (too far: only literals may repeat it), then every length and
 * distance symbol through a mix of short repeats at random distances. */
static void test_distances_and_lengths(void **unused)
{
    (void)unused;
    size_t n = 140000;
    uint8_t *in = malloc(n);
    for (size_t i = 0; i < n; i++)
        in[i] = random_byte();
    memcpy(in + 32768, in, 300);         /* at the window's edge */
    memcpy(in + 65536 + 32769, in + 65536, 300); /* just past it */
    round_trip(in, n);
    for (size_t i = 70000; i + 300 < n;) {
        size_t len = 3 + random_byte() % 256, d = 1 + (((size_t)random_byte() << 8 | random_byte()) % 32768);
        if (d > i) d = i;
        for (size_t k = 0; k < len; k++)
            in[i + k] = in[i + k - d];
        i += len + random_byte() % 8;
    }
    round_trip(in, n);
    free(in);
}

/* Packets like the trace's: a few shapes, on two sequences taking turns
 * (the two remembered distances), a timestamp and an id that change
 * every time, the timestamps noisier than a real trace's (whose bundles
 * shrink four- to sixfold): at least halved, and by a tenth more with
 * codes fitted to the bundle before. */
static void test_packets(void **unused)
{
    (void)unused;
    size_t cap = 1 << 20, n = 0;
    uint8_t *in = malloc(cap);
    uint64_t ts = 1000, id = 1;
    while (n + 64 < cap) {
        for (uint8_t seq = 2; seq <= 3; seq++) {
            uint8_t p[] = {0x0a, 0x18, 0x50, seq, 0x40, (uint8_t)(0x80 | ts), (uint8_t)(ts >> 7 & 0x7f),
                           0x5a, 0x0e, 0x48, 0x01, 0x18, 0x03, 0x50, 0x09, 0xb9, 0x02,
                           (uint8_t)id, (uint8_t)(id >> 8), (uint8_t)(id >> 16), 0, 0x42, 0x10, 0, 0};
            memcpy(in + n, p, sizeof p);
            n += sizeof p;
            ts += 997 + random_byte() % 64;
            id++;
        }
        uint8_t end[] = {0x0a, 0x0a, 0x50, 0x02, 0x40, (uint8_t)(0x80 | random_byte()), 0x05,
                         0x5a, 0x02, 0x48, 0x02};
        memcpy(in + n, end, sizeof end);
        n += sizeof end;
    }
    gt_deflate_init(&z);
    size_t fixed = round_trip(in, n), fitted = round_trip(in, n);
    assert_true(fixed * 2 < n);
    /* codes fitted to the packets before: a tenth smaller at least (these
     * packets' noisy timestamps leave less to gain than a real trace's) */
    assert_true(fitted * 10 < fixed * 9);
    free(in);
}

/* The table is not cleared between calls: positions count on, and an
 * earlier call's are told apart by the base. Calls that follow each
 * other with the same bytes (which would match an earlier call's
 * positions) and a base about to wrap (the table is cleared then). The
 * first stream has the fixed codes (no stream before it), the next ones
 * codes fitted to the stream before: smaller. */
static void test_calls_in_a_row(void **unused)
{
    (void)unused;
    size_t n = 50000;
    uint8_t *in = malloc(n);
    for (size_t i = 0; i < n; i++)
        in[i] = (uint8_t)(i % 251 == 0 ? random_byte() : i * 7);
    gt_deflate_init(&z);
    size_t first = round_trip(in, n);
    assert_int_equal(z.base, n);
    size_t second = round_trip(in, n);
    assert_true(second < first);
    assert_int_equal(round_trip(in, n), second); /* the same stream: no match carried over */
    z.base = UINT32_MAX - 1000;
    assert_int_equal(round_trip(in, n), second);
    assert_int_equal(z.base, n);
    free(in);
}

/* Codes fitted to a stream unlike the next: every byte still has a code,
 * none longer than 12 bits (within the bound), and after runs of one byte,
 * random bytes; after random bytes, runs. */
static void test_fitted_codes(void **unused)
{
    (void)unused;
    size_t n = 200000;
    uint8_t *zeros = calloc(1, n), *noise = malloc(n);
    for (size_t i = 0; i < n; i++)
        noise[i] = random_byte();
    gt_deflate_init(&z);
    round_trip(zeros, n);
    round_trip(noise, n);
    round_trip(noise, n);
    round_trip(zeros, n);
    round_trip(zeros, 0);
    round_trip(noise, 3);
    free(zeros);
    free(noise);
}

static void test_adler32(void **unused)
{
    (void)unused;
    size_t n = 3 << 20;
    uint8_t *in = malloc(n);
    for (size_t i = 0; i < n; i++)
        in[i] = random_byte();
    memset(in, 0xff, 20000); /* the sums' worst case: every byte 255 */
    for (size_t len = 0; len < 20000; len += len < 300 ? 1 : 97)
        for (size_t off = 0; off < 3; off++)
            assert_int_equal(gt_adler32(1, in + off, len), (uint32_t)adler32(1, in + off, (uInt)len));
    assert_int_equal(gt_adler32(1, in, n), (uint32_t)adler32(1, in, (uInt)n));
    /* continued from a running value, as a stream in pieces would be */
    uint32_t a = gt_adler32(1, in, 12345);
    assert_int_equal(gt_adler32(a, in + 12345, n - 12345), (uint32_t)adler32(1, in, (uInt)n));
    free(in);
}

int main(void)
{
    gt_deflate_init(&z);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_inputs), cmocka_unit_test(test_incompressible),
        cmocka_unit_test(test_runs),         cmocka_unit_test(test_distances_and_lengths),
        cmocka_unit_test(test_packets),      cmocka_unit_test(test_calls_in_a_row),
        cmocka_unit_test(test_fitted_codes), cmocka_unit_test(test_adler32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
