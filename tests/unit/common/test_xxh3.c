/* XXH3-64 against values computed by xxHash's own tool (`xxhsum -H3`) on
 * the same bytes, through every length class of the specification; the
 * same values fed in pieces of every size; built twice, with the SSE2
 * stripe loop and with the plain C one (GT_XXH3_SCALAR). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "xxh3.h"

/* Byte i of the input: ((i * 131 + 7) >> 1) & 0xff. */
static const struct {
    size_t len;
    uint64_t hash;
} vectors[] = {
    {0, 0x2d06800538d394c2ull},      {1, 0x13e608bc156defedull},    {3, 0x7a241cd186d86429ull},
    {4, 0xee63e61db2240dfdull},      {8, 0xc79bde02ac2c4070ull},    {9, 0xf0fe029643147ba0ull},
    {16, 0x3fb07c03792d802cull},     {17, 0xb7166a1157e2e64bull},   {32, 0x210659a1903c8702ull},
    {100, 0x9fdb26b12affb116ull},    {128, 0x07777867b1a4f190ull},  {129, 0x767a4eb58d3d27e9ull},
    {200, 0xd3fb79dd30c2ae12ull},    {240, 0xe544ded3a6e1802aull},  {241, 0x5a0e42cf41af9a05ull},
    {256, 0xdc5016c9daed1978ull},    {257, 0x000c475138f48c1aull},  {1024, 0x357fdbb193091875ull},
    {1025, 0xfea4ddce58736c8eull},   {1088, 0x641ca8741631f871ull}, {4096, 0x4bd1b5f9e32a46afull},
    {100003, 0xb57dc1b34cccca57ull},
};
#define NVECTORS (sizeof vectors / sizeof vectors[0])
#define MAX_LEN 100003u

static unsigned char *input(void)
{
    unsigned char *p = malloc(MAX_LEN);
    assert_non_null(p);
    for (size_t i = 0; i < MAX_LEN; i++)
        p[i] = (unsigned char)(((i * 131 + 7) >> 1) & 0xff);
    return p;
}

static void test_reference_values(void **unused)
{
    (void)unused;
    unsigned char *p = input();
    for (size_t i = 0; i < NVECTORS; i++)
        assert_int_equal(gt_xxh3_64(p, vectors[i].len), vectors[i].hash);
    free(p);
}

/* Pieces of 1 byte up to more than the state's buffer, and a split at
 * every offset of the first 600 bytes for the inputs around the 240-byte
 * and block boundaries. */
static void test_streaming_any_split(void **unused)
{
    (void)unused;
    unsigned char *p = input();
    static const size_t pieces[] = {1, 3, 63, 64, 65, 255, 256, 257, 1000, 4096};
    for (size_t i = 0; i < NVECTORS; i++) {
        size_t len = vectors[i].len;
        for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
            gt_xxh3 s;
            gt_xxh3_init(&s);
            for (size_t off = 0; off < len; off += pieces[k])
                gt_xxh3_update(&s, p + off, len - off < pieces[k] ? len - off : pieces[k]);
            assert_int_equal(gt_xxh3_digest(&s), vectors[i].hash);
        }
        if (len > 2048) continue;
        for (size_t cut = 0; cut <= len && cut < 600; cut++) {
            gt_xxh3 s;
            gt_xxh3_init(&s);
            gt_xxh3_update(&s, p, cut);
            gt_xxh3_update(&s, p + cut, len - cut);
            assert_int_equal(gt_xxh3_digest(&s), vectors[i].hash);
        }
    }
    free(p);
}

/* The digest leaves the state as it was: feeding on gives the longer
 * input's hash. */
static void test_digest_then_more(void **unused)
{
    (void)unused;
    unsigned char *p = input();
    gt_xxh3 s;
    gt_xxh3_init(&s);
    gt_xxh3_update(&s, p, 1024);
    assert_int_equal(gt_xxh3_digest(&s), 0x357fdbb193091875ull);
    gt_xxh3_update(&s, p + 1024, 64);
    assert_int_equal(gt_xxh3_digest(&s), 0x641ca8741631f871ull);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_values),
        cmocka_unit_test(test_streaming_any_split),
        cmocka_unit_test(test_digest_then_more),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
