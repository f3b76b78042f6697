/* GPUTRACE_CHECKSUM's modes and the checksum of a copy's bytes in each:
 * the words accepted and refused, the names written back, the rounding of
 * the tolerant float modes, and what a change in the data does to the
 * checksum in each mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "checksum_hash.h"
#include "checksum_mode.h"
#include "xxh3.h"

static int parse(const char *s, gt_checksum_mode *m)
{
    return gt_checksum_mode_parse(s, strlen(s), m);
}

static void test_modes(void **unused)
{
    (void)unused;
    static const struct {
        const char *word;
        int kind, bits;
        const char *name;
    } good[] = {
        {"off", GT_CHECKSUM_OFF, 0, "off"},
        {"dtoh", GT_CHECKSUM_BYTES, 0, "dtoh"},
        {"DtoH", GT_CHECKSUM_BYTES, 0, "dtoh"},
        {"dtoh:f32:20", GT_CHECKSUM_F32, 20, "dtoh:f32:20"},
        {"dtoh:f32:1", GT_CHECKSUM_F32, 1, "dtoh:f32:1"},
        {"dtoh:f32:23", GT_CHECKSUM_F32, 23, "dtoh:f32:23"},
        {"dtoh:f64:52", GT_CHECKSUM_F64, 52, "dtoh:f64:52"},
        {"DTOH:F64:40", GT_CHECKSUM_F64, 40, "dtoh:f64:40"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        gt_checksum_mode m = {99, 99};
        char name[GT_CHECKSUM_MODE_MAX];
        assert_int_equal(parse(good[i].word, &m), 0);
        assert_int_equal(m.kind, good[i].kind);
        assert_int_equal(m.bits, good[i].bits);
        gt_checksum_mode_name(m, name);
        assert_string_equal(name, good[i].name);
    }
    static const char *const bad[] = {"",
                                      "on",
                                      "htod",
                                      "dtoh:",
                                      "dtoh:f32",
                                      "dtoh:f32:",
                                      "dtoh:f32:0",
                                      "dtoh:f32:24",
                                      "dtoh:f64:53",
                                      "dtoh:f16:8",
                                      "dtoh:f32:8x",
                                      "dtoh:f32:-1",
                                      "dtoh:f32:008",
                                      "dtoh f32 8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gt_checksum_mode m = {GT_CHECKSUM_BYTES, 7};
        assert_int_equal(parse(bad[i], &m), -1);
        assert_int_equal(m.kind, GT_CHECKSUM_BYTES); /* untouched */
        assert_int_equal(m.bits, 7);
    }
}

static void test_status_words(void **unused)
{
    (void)unused;
    for (int s = 0; s < GT_CK_STATUS_COUNT; s++)
        assert_int_equal(gt_checksum_status_parse(gt_checksum_status_name(s)), s);
    assert_int_equal(gt_checksum_status_parse("maybe"), -1);
    assert_string_equal(gt_checksum_status_name(GT_CK_UNSYNCED), "unsynchronized");
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_rounding(void **unused)
{
    (void)unused;
    /* 1 + 2^-20 at 10 mantissa bits: 1; 1 + 2^-11 (half of the last kept
     * bit) rounds away from zero to 1 + 2^-10; negatives mirror. */
    assert_int_equal(gt_checksum_round_f32(f32_bits(1.0f + 0x1p-20f), 10), f32_bits(1.0f));
    assert_int_equal(gt_checksum_round_f32(f32_bits(1.0f + 0x1p-11f), 10),
                     f32_bits(1.0f + 0x1p-10f));
    assert_int_equal(gt_checksum_round_f32(f32_bits(-1.0f - 0x1p-11f), 10),
                     f32_bits(-1.0f - 0x1p-10f));
    /* A carry out of the mantissa moves the exponent: just under 2 is 2. */
    assert_true(bits_f32(gt_checksum_round_f32(f32_bits(2.0f - 0x1p-22f), 10)) == 2.0f);
    /* Infinities and NaNs are left alone; all bits kept is no change. */
    assert_int_equal(gt_checksum_round_f32(0x7f800000u, 4), 0x7f800000u);
    assert_int_equal(gt_checksum_round_f32(0x7fc00123u, 4), 0x7fc00123u);
    assert_int_equal(gt_checksum_round_f32(0x3f812345u, 23), 0x3f812345u);
    double one = 1.0, near = 1.0 + 0x1p-40, half = 1.0 + 0x1p-31, up = 1.0 + 0x1p-30;
    uint64_t b1, bn, bh, bu;
    memcpy(&b1, &one, 8);
    memcpy(&bn, &near, 8);
    memcpy(&bh, &half, 8);
    memcpy(&bu, &up, 8);
    assert_int_equal(gt_checksum_round_f64(bn, 30), b1);
    assert_int_equal(gt_checksum_round_f64(bh, 30), bu);
    assert_int_equal(gt_checksum_round_f64(0x7ff8000000000001ull, 8), 0x7ff8000000000001ull);
}

/* What each mode sees of a change: bytes see every bit; f32:16 misses a
 * last-bit change but not one in the 10th bit; the plain bytes' hash is
 * XXH3's, and keeping all 23 bits gives the same. */
static void test_hash_tolerance(void **unused)
{
    (void)unused;
    float a[1000], b[1000], c[1000];
    for (int i = 0; i < 1000; i++)
        a[i] = 1.0f + (float)i / 1024.0f;
    memcpy(b, a, sizeof a);
    memcpy(c, a, sizeof a);
    uint32_t u = f32_bits(b[500]) ^ 1u;
    b[500] = bits_f32(u);
    c[500] = bits_f32(f32_bits(c[500]) ^ (1u << 13));
    gt_checksum_mode bytes = {GT_CHECKSUM_BYTES, 0}, f32 = {GT_CHECKSUM_F32, 16},
                     all = {GT_CHECKSUM_F32, 23};
    assert_int_equal(gt_checksum_hash(bytes, a, sizeof a), gt_xxh3_64(a, sizeof a));
    assert_int_equal(gt_checksum_hash(all, a, sizeof a), gt_xxh3_64(a, sizeof a));
    assert_int_not_equal(gt_checksum_hash(bytes, a, sizeof a),
                         gt_checksum_hash(bytes, b, sizeof b));
    assert_int_equal(gt_checksum_hash(f32, a, sizeof a), gt_checksum_hash(f32, b, sizeof b));
    assert_int_not_equal(gt_checksum_hash(f32, a, sizeof a), gt_checksum_hash(f32, c, sizeof c));
    /* Bytes after the last whole float count as they are. */
    unsigned char tail_a[7] = {1, 2, 3, 4, 5, 6, 7}, tail_b[7] = {1, 2, 3, 4, 5, 6, 8};
    assert_int_not_equal(gt_checksum_hash(f32, tail_a, 7), gt_checksum_hash(f32, tail_b, 7));
    /* f64 reads 8-byte values: a last-bit change in one is missed at 40. */
    double d[300], e[300];
    for (int i = 0; i < 300; i++)
        d[i] = 3.0 + i * 0.001;
    memcpy(e, d, sizeof d);
    uint64_t w;
    memcpy(&w, &e[7], 8);
    w ^= 1u;
    memcpy(&e[7], &w, 8);
    gt_checksum_mode f64 = {GT_CHECKSUM_F64, 40};
    assert_int_equal(gt_checksum_hash(f64, d, sizeof d), gt_checksum_hash(f64, e, sizeof e));
    assert_int_not_equal(gt_checksum_hash(bytes, d, sizeof d),
                         gt_checksum_hash(bytes, e, sizeof e));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_status_words),
        cmocka_unit_test(test_rounding),
        cmocka_unit_test(test_hash_tolerance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
