/* XXH3-64 (xxh3.h), from the specification: inputs of up to 16 bytes,
 * 17 to 240 bytes, and longer ones, which are cut into 64-byte stripes
 * accumulated into eight lanes, 16 stripes to a block, the lanes
 * scrambled after each block; the last stripe is always the input's last
 * 64 bytes. The stripe step is the hot loop: on x86-64 it runs on SSE2
 * (in every x86-64 CPU), elsewhere as plain C; both compute the same
 * values (GT_XXH3_SCALAR forces the plain one, for its test). */
#include "xxh3.h"

#include <string.h>

#if defined(__SSE2__) && !defined(GT_XXH3_SCALAR)
#include <emmintrin.h>
#define XXH3_SSE2 1
#endif

#define PRIME32_1 0x9E3779B1u
#define PRIME32_2 0x85EBCA77u
#define PRIME32_3 0xC2B2AE3Du
#define PRIME64_1 0x9E3779B185EBCA87ull
#define PRIME64_2 0xC2B2AE3D27D4EB4Full
#define PRIME64_3 0x165667B19E3779F9ull
#define PRIME64_4 0x85EBCA77C2B2AE63ull
#define PRIME64_5 0x27D4EB2F165667C5ull
#define PRIME_MX1 0x165667919E3779F9ull
#define PRIME_MX2 0x9FB21C651E98DF25ull

#define STRIPE 64u
#define STRIPES_PER_BLOCK 16u /* (secret size - 64) / 8 */
#define SECRET_SIZE 192u

/* The specification's default secret. */
static const unsigned char secret[SECRET_SIZE] = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

/* Values are read little-endian, whatever the machine. */
static inline uint64_t read64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint32_t read32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

static inline uint64_t rotl64(uint64_t x, unsigned r)
{
    return (x << r) | (x >> (64 - r));
}

/* The 128-bit product's halves, xored. */
static inline uint64_t mul128_fold(uint64_t a, uint64_t b)
{
    unsigned __int128 p = (unsigned __int128)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
}

static inline uint64_t avalanche(uint64_t h)
{
    h ^= h >> 37;
    h *= PRIME_MX1;
    return h ^ (h >> 32);
}

static inline uint64_t avalanche_xxh64(uint64_t h)
{
    h ^= h >> 33;
    h *= PRIME64_2;
    h ^= h >> 29;
    h *= PRIME64_3;
    return h ^ (h >> 32);
}

/* ------------------------------------------------------ up to 240 bytes */

static uint64_t hash_0to16(const unsigned char *p, size_t len)
{
    if (len > 8) {
        uint64_t lo = (read64(secret + 24) ^ read64(secret + 32)) ^ read64(p);
        uint64_t hi = (read64(secret + 40) ^ read64(secret + 48)) ^ read64(p + len - 8);
        uint64_t acc = len + __builtin_bswap64(lo) + hi + mul128_fold(lo, hi);
        return avalanche(acc);
    }
    if (len >= 4) {
        uint64_t combined = (uint64_t)read32(p + len - 4) | (uint64_t)read32(p) << 32;
        uint64_t v = (read64(secret + 8) ^ read64(secret + 16)) ^ combined;
        v ^= rotl64(v, 49) ^ rotl64(v, 24);
        v *= PRIME_MX2;
        v ^= (v >> 35) + len;
        v *= PRIME_MX2;
        return v ^ (v >> 28);
    }
    if (len > 0) {
        uint32_t combined = (uint32_t)p[len - 1] | (uint32_t)len << 8 | (uint32_t)p[0] << 16 |
                            (uint32_t)p[len >> 1] << 24;
        uint64_t v = (uint64_t)(read32(secret) ^ read32(secret + 4)) ^ combined;
        return avalanche_xxh64(v);
    }
    return avalanche_xxh64(read64(secret + 56) ^ read64(secret + 64));
}

static inline uint64_t mix16(const unsigned char *p, const unsigned char *s)
{
    return mul128_fold(read64(p) ^ read64(s), read64(p + 8) ^ read64(s + 8));
}

static uint64_t hash_17to128(const unsigned char *p, size_t len)
{
    uint64_t acc = len * PRIME64_1;
    size_t rounds = ((len - 1) >> 5) + 1;
    for (size_t i = rounds; i-- > 0;) {
        acc += mix16(p + 16 * i, secret + 32 * i);
        acc += mix16(p + len - 16 * i - 16, secret + 32 * i + 16);
    }
    return avalanche(acc);
}

static uint64_t hash_129to240(const unsigned char *p, size_t len)
{
    uint64_t acc = len * PRIME64_1;
    size_t chunks = len >> 4;
    for (size_t i = 0; i < 8; i++)
        acc += mix16(p + 16 * i, secret + 16 * i);
    acc = avalanche(acc);
    for (size_t i = 8; i < chunks; i++)
        acc += mix16(p + 16 * i, secret + 16 * (i - 8) + 3);
    acc += mix16(p + len - 16, secret + 119);
    return avalanche(acc);
}

static uint64_t hash_short(const unsigned char *p, size_t len)
{
    if (len <= 16) return hash_0to16(p, len);
    if (len <= 128) return hash_17to128(p, len);
    return hash_129to240(p, len);
}

/* ------------------------------------------------------- longer inputs */

static void acc_init(uint64_t acc[8])
{
    static const uint64_t init[8] = {PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3,
                                     PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1};
    memcpy(acc, init, sizeof init);
}

/* Stripes into the lanes: each lane adds the product of its keyed word's
 * two halves, and its neighbour adds the word itself. The secret moves on
 * by 8 bytes a stripe. */
static void accumulate_stripes(uint64_t acc[8], const unsigned char *p, const unsigned char *s,
                               size_t n)
{
#ifdef XXH3_SSE2
    /* The four pairs of lanes in registers, written out: compilers keep
     * an array of them in memory at -O2, at half the speed. */
    __m128i *xacc = (__m128i *)(void *)acc;
    __m128i a0 = xacc[0], a1 = xacc[1], a2 = xacc[2], a3 = xacc[3];
#define XXH3_LANES(a, i)                                                                           \
    do {                                                                                           \
        __m128i data = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * (i)));             \
        __m128i keyed =                                                                            \
            _mm_xor_si128(data, _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * (i))));   \
        __m128i product = _mm_mul_epu32(keyed, _mm_shuffle_epi32(keyed, _MM_SHUFFLE(0, 3, 0, 1))); \
        a = _mm_add_epi64(                                                                         \
            a, _mm_add_epi64(product, _mm_shuffle_epi32(data, _MM_SHUFFLE(1, 0, 3, 2))));          \
    } while (0)
    for (size_t k = 0; k < n; k++, p += STRIPE, s += 8) {
        XXH3_LANES(a0, 0);
        XXH3_LANES(a1, 1);
        XXH3_LANES(a2, 2);
        XXH3_LANES(a3, 3);
    }
#undef XXH3_LANES
    xacc[0] = a0;
    xacc[1] = a1;
    xacc[2] = a2;
    xacc[3] = a3;
#else
    for (size_t k = 0; k < n; k++, p += STRIPE, s += 8) {
        for (int i = 0; i < 8; i++) {
            uint64_t data = read64(p + 8 * i);
            uint64_t keyed = data ^ read64(s + 8 * i);
            acc[i ^ 1] += data;
            acc[i] += (keyed & 0xffffffffu) * (keyed >> 32);
        }
    }
#endif
}

static void scramble(uint64_t acc[8])
{
    const unsigned char *s = secret + SECRET_SIZE - STRIPE;
    for (int i = 0; i < 8; i++) {
        uint64_t a = acc[i];
        a ^= a >> 47;
        a ^= read64(s + 8 * i);
        acc[i] = a * PRIME32_1;
    }
}

/* n stripes at p, the first being stripe *stripes of its block: the
 * block's lanes are scrambled each time one fills. */
static void accumulate(uint64_t acc[8], uint32_t *stripes, const unsigned char *p, size_t n)
{
    while (n) {
        size_t room = STRIPES_PER_BLOCK - *stripes;
        size_t k = n < room ? n : room;
        accumulate_stripes(acc, p, secret + 8u * *stripes, k);
        p += STRIPE * k;
        n -= k;
        *stripes += (uint32_t)k;
        if (*stripes == STRIPES_PER_BLOCK) {
            scramble(acc);
            *stripes = 0;
        }
    }
}

/* The last stripe, then the lanes merged into one value. */
static uint64_t finish_long(uint64_t acc[8], const unsigned char *last_stripe, uint64_t len)
{
    accumulate_stripes(acc, last_stripe, secret + SECRET_SIZE - STRIPE - 7, 1);
    uint64_t h = len * PRIME64_1;
    for (int i = 0; i < 4; i++)
        h += mul128_fold(acc[2 * i] ^ read64(secret + 11 + 16 * i),
                         acc[2 * i + 1] ^ read64(secret + 11 + 16 * i + 8));
    return avalanche(h);
}

uint64_t gt_xxh3_64(const void *data, size_t len)
{
    const unsigned char *p = data;
    if (len <= 240) return hash_short(p, len);
    _Alignas(16) uint64_t acc[8];
    acc_init(acc);
    uint32_t stripes = 0;
    /* Every stripe a byte follows; the last 64 bytes come last. */
    accumulate(acc, &stripes, p, (len - 1) / STRIPE);
    return finish_long(acc, p + len - STRIPE, len);
}

/* ------------------------------------------------------------ streaming */

void gt_xxh3_init(gt_xxh3 *s)
{
    acc_init(s->acc);
    s->total = 0;
    s->buffered = 0;
    s->stripes = 0;
}

void gt_xxh3_update(gt_xxh3 *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    s->total += len;
    if (s->buffered + len <= sizeof s->buf) {
        memcpy(s->buf + s->buffered, p, len);
        s->buffered += (uint32_t)len;
        return;
    }
    /* More follows the buffer: its stripes can be taken. */
    if (s->buffered) {
        size_t take = sizeof s->buf - s->buffered;
        memcpy(s->buf + s->buffered, p, take);
        p += take;
        len -= take;
        accumulate(s->acc, &s->stripes, s->buf, sizeof s->buf / STRIPE);
        memcpy(s->last, s->buf + sizeof s->buf - STRIPE, STRIPE);
        s->buffered = 0;
    }
    /* Straight from the input, up to the stripe that ends it. */
    size_t n = (len - 1) / STRIPE;
    if (n) {
        accumulate(s->acc, &s->stripes, p, n);
        memcpy(s->last, p + STRIPE * n - STRIPE, STRIPE);
        p += STRIPE * n;
        len -= STRIPE * n;
    }
    memcpy(s->buf, p, len);
    s->buffered = (uint32_t)len;
}

uint64_t gt_xxh3_digest(const gt_xxh3 *s)
{
    if (s->total <= 240) return hash_short(s->buf, (size_t)s->total);
    _Alignas(16) uint64_t acc[8];
    memcpy(acc, s->acc, sizeof acc);
    uint32_t stripes = s->stripes;
    if (s->buffered >= STRIPE) {
        accumulate(acc, &stripes, s->buf, (s->buffered - 1) / STRIPE);
        return finish_long(acc, s->buf + s->buffered - STRIPE, s->total);
    }
    /* The last 64 bytes begin in what was accumulated already. */
    unsigned char last[STRIPE];
    size_t before = STRIPE - s->buffered;
    memcpy(last, s->last + STRIPE - before, before);
    memcpy(last + before, s->buf, s->buffered);
    return finish_long(acc, last, s->total);
}
