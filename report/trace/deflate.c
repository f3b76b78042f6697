/* The zlib-stream compressor (see deflate.h). */
#include "deflate.h"

#include <string.h>

#define WINDOW 32768u /* deflate's farthest match */
#define MIN_MATCH 4u  /* the hash covers 4 bytes; 3-byte matches rarely pay */
#define MAX_MATCH 258u
#define ADLER_MOD 65521u
#define ADLER_NMAX 5552u /* bytes before the sums may overflow 32 bits */

/* Match lengths 3..258: their symbols' first length and extra bits. */
static const uint16_t length_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                         15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                         67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};

static uint32_t reverse(uint32_t code, unsigned bits)
{
    uint32_t r = 0;
    for (unsigned i = 0; i < bits; i++, code >>= 1)
        r = r << 1 | (code & 1);
    return r;
}

/* The fixed code of literal/length symbol s: its bits, LSB-first. */
static uint32_t fixed_code(unsigned s, unsigned *bits)
{
    if (s < 144) return *bits = 8, reverse(0x30 + s, 8);
    if (s < 256) return *bits = 9, reverse(0x190 + s - 144, 9);
    if (s < 280) return *bits = 7, reverse(s - 256, 7);
    return *bits = 8, reverse(0xc0 + s - 280, 8);
}

void gt_deflate_init(gt_deflate *z)
{
    memset(z->slots, 0, sizeof z->slots);
    z->base = 0;
    for (unsigned c = 0; c < 256; c++) {
        unsigned bits;
        z->literal[c] = (uint16_t)fixed_code(c, &bits);
        z->literal_bits[c] = (uint8_t)bits;
    }
    for (unsigned s = 0; s < 30; s++)
        z->distance[s] = (uint8_t)reverse(s, 5);
    for (unsigned s = 0; s < 29; s++) {
        unsigned bits;
        uint32_t code = fixed_code(257 + s, &bits);
        unsigned end = s < 28 ? length_base[s + 1] : MAX_MATCH + 1;
        for (unsigned len = length_base[s]; len < end; len++) {
            z->length[len] = code | (uint32_t)(len - length_base[s]) << bits;
            z->length_bits[len] = (uint8_t)(bits + length_extra[s]);
        }
    }
}

/* --- bits, least significant first ------------------------------------ */

typedef struct bits {
    uint8_t *p;
    uint64_t acc;
    unsigned n; /* bits in acc, under 32 between calls */
} bits;

static inline void put_bits(bits *b, uint64_t v, unsigned n)
{
    b->acc |= v << b->n;
    b->n += n;
    if (b->n >= 32) {
        uint32_t w = (uint32_t)b->acc;
        b->p[0] = (uint8_t)w, b->p[1] = (uint8_t)(w >> 8), b->p[2] = (uint8_t)(w >> 16),
        b->p[3] = (uint8_t)(w >> 24);
        b->p += 4;
        b->acc >>= 32;
        b->n -= 32;
    }
}

/* The last bits, padded to a byte. */
static void flush_bits(bits *b)
{
    for (; b->n > 0; b->n = b->n > 8 ? b->n - 8 : 0) {
        *b->p++ = (uint8_t)b->acc;
        b->acc >>= 8;
    }
}

/* --- matches ------------------------------------------------------------ */

static inline uint32_t load32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Bytes a and b have in common, up to max. */
static inline size_t common(const uint8_t *a, const uint8_t *b, size_t max)
{
    size_t n = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; n + 8 <= max; n += 8) {
        uint64_t x, y;
        memcpy(&x, a + n, 8);
        memcpy(&y, b + n, 8);
        if (x != y) return n + (size_t)(__builtin_ctzll(x ^ y) >> 3);
    }
#endif
    while (n < max && a[n] == b[n])
        n++;
    return n;
}

/* A match's distance symbol (1..32768 -> 0..29): two per power of two. */
static inline unsigned distance_symbol(uint32_t d)
{
    if (d <= 4) return d - 1;
    unsigned top = 31u - (unsigned)__builtin_clz(d - 1); /* >= 2 */
    return 2 * top + ((d - 1) >> (top - 1) & 1);
}

static inline void put_match(const gt_deflate *z, bits *b, size_t len, uint32_t d)
{
    unsigned s = distance_symbol(d), extra = s < 4 ? 0 : s / 2 - 1;
    uint32_t base = s < 4 ? s + 1 : (2u + (s & 1)) << extra | 1;
    uint64_t v = z->length[len] | (uint64_t)(z->distance[s] | (d - base) << 5)
                                      << z->length_bits[len];
    put_bits(b, v, z->length_bits[len] + 5 + extra);
}

/* Two at a time: 18 bits at most. */
static inline void put_literals(const gt_deflate *z, bits *b, const uint8_t *p, const uint8_t *end)
{
    for (; p + 1 < end; p += 2)
        put_bits(b, z->literal[p[0]] | (uint32_t)z->literal[p[1]] << z->literal_bits[p[0]],
                 (unsigned)z->literal_bits[p[0]] + z->literal_bits[p[1]]);
    if (p < end) put_bits(b, z->literal[*p], z->literal_bits[*p]);
}

size_t gt_deflate_zlib(gt_deflate *z, const uint8_t *in, size_t n, uint8_t *out)
{
    out[0] = 0x78; /* deflate, 32 KiB window */
    out[1] = 0x01; /* fastest; (0x78 << 8 | 0x01) % 31 == 0 */
    bits b = {.p = out + 2};
    put_bits(&b, 1 | 1 << 1, 3); /* the last block; fixed codes */
    if (n > UINT32_MAX - 1 - z->base) { /* once per 4 GiB compressed */
        memset(z->slots, 0, sizeof z->slots);
        z->base = 0;
    }
    const uint32_t base = z->base;
    /* The distances of the last two matches, the latest first. A trace's
     * packets repeat at a few distances (a thread's round of calls, the
     * same on another thread), so the next match is most often at one of
     * them: found without the hash table, and longer than the latest
     * position of the same four bytes, which the table would give. They
     * start at 1, a valid distance from the second byte on, where the
     * search starts (the first byte can only be a literal). */
    size_t recent[2] = {1, 1};
    size_t i = 1, literals = 0; /* the literals not yet written start there */
    while (i + MIN_MATCH <= n) {
        uint32_t w = load32(in + i);
        size_t d = 0;
        if (load32(in + i - recent[0]) == w) {
            d = recent[0];
        } else if (load32(in + i - recent[1]) == w) {
            d = recent[1];
        } else {
            uint32_t *slot = &z->slots[(w * 2654435761u) >> (32 - GT_DEFLATE_HASH_BITS)];
            uint32_t at = *slot, here = base + (uint32_t)i + 1;
            *slot = here;
            if (at <= base || here - at > WINDOW || load32(in + (at - base - 1)) != w) {
                i++;
                continue;
            }
            d = here - at;
        }
        if (d != recent[0]) recent[1] = recent[0], recent[0] = d;
        size_t max = n - i < MAX_MATCH ? n - i : MAX_MATCH;
        size_t len = MIN_MATCH + common(in + i - d + MIN_MATCH, in + i + MIN_MATCH, max - MIN_MATCH);
        put_literals(z, &b, in + literals, in + i);
        put_match(z, &b, len, (uint32_t)d);
        i += len;
        literals = i;
    }
    put_literals(z, &b, in + literals, in + n);
    z->base = base + (uint32_t)n;
    put_bits(&b, 0, 7); /* end of block: symbol 256, seven zero bits */
    flush_bits(&b);
    uint32_t adler = gt_adler32(1, in, n);
    b.p[0] = (uint8_t)(adler >> 24), b.p[1] = (uint8_t)(adler >> 16);
    b.p[2] = (uint8_t)(adler >> 8), b.p[3] = (uint8_t)adler;
    return (size_t)(b.p + 4 - out);
}

#if defined(__SSE2__)
#include <emmintrin.h>

static uint32_t sum_lanes(__m128i v)
{
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
    return (uint32_t)_mm_cvtsi128_si32(v);
}

/* Sixteen bytes at a time: over a block, a grows by the sum of its bytes
 * and s by 16 a (a as the block starts) plus the bytes weighted 16..1.
 * The blocks' sums, weighted sums and the sum of a at each block's start
 * are kept in vectors; n is a multiple of 16 and at most ADLER_NMAX. */
static void adler_blocks(uint32_t *a, uint32_t *s, const uint8_t *p, size_t n)
{
    const __m128i zero = _mm_setzero_si128();
    const __m128i high = _mm_setr_epi16(16, 15, 14, 13, 12, 11, 10, 9);
    const __m128i low = _mm_setr_epi16(8, 7, 6, 5, 4, 3, 2, 1);
    __m128i bytes = zero, starts = zero, weighted = zero;
    for (size_t k = 0; k < n; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + k));
        starts = _mm_add_epi32(starts, bytes);
        bytes = _mm_add_epi32(bytes, _mm_sad_epu8(v, zero));
        weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), high));
        weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), low));
    }
    uint64_t sum_s = (uint64_t)*s + (uint64_t)n * *a + 16u * (uint64_t)sum_lanes(starts) +
                     sum_lanes(weighted);
    *a = (*a + sum_lanes(bytes)) % ADLER_MOD;
    *s = (uint32_t)(sum_s % ADLER_MOD);
}
#endif

uint32_t gt_adler32(uint32_t adler, const uint8_t *p, size_t n)
{
    uint32_t a = adler & 0xffff, s = adler >> 16;
#if defined(__SSE2__)
    while (n >= 16) {
        size_t k = n < ADLER_NMAX ? n & ~(size_t)15 : ADLER_NMAX & ~15u;
        adler_blocks(&a, &s, p, k);
        p += k;
        n -= k;
    }
#endif
    while (n) {
        size_t k = n < ADLER_NMAX ? n : ADLER_NMAX;
        n -= k;
        for (; k >= 8; k -= 8, p += 8) {
            a += p[0], s += a, a += p[1], s += a, a += p[2], s += a, a += p[3], s += a;
            a += p[4], s += a, a += p[5], s += a, a += p[6], s += a, a += p[7], s += a;
        }
        for (; k; k--)
            a += *p++, s += a;
        a %= ADLER_MOD;
        s %= ADLER_MOD;
    }
    return s << 16 | a;
}
