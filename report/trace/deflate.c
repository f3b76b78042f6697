/* The zlib-stream compressor (see deflate.h). */
#include "deflate.h"

#include <stdlib.h>
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
/* The order the code length code's lengths are sent in (§3.2.7). */
static const uint8_t clen_order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                       11, 4,  12, 3, 13, 2, 14, 1, 15};

#define LITLEN_SYMBOLS 286u
#define DIST_SYMBOLS 30u
#define CLEN_SYMBOLS 19u
#define MAX_BITS 15u
#define LITLEN_MAX_BITS 12u
#define DIST_MAX_BITS 8u
#define CLEN_MAX_BITS 7u
#define END_OF_BLOCK 256u

static uint32_t reverse(uint32_t code, unsigned bits)
{
    uint32_t r = 0;
    for (unsigned i = 0; i < bits; i++, code >>= 1)
        r = r << 1 | (code & 1);
    return r;
}

/* A match's distance symbol (1..32768 -> 0..29): two per power of two. */
static inline unsigned distance_symbol(uint32_t d)
{
    if (d <= 4) return d - 1;
    unsigned top = 31u - (unsigned)__builtin_clz(d - 1); /* >= 2 */
    return 2 * top + ((d - 1) >> (top - 1) & 1);
}

static inline unsigned distance_extra(unsigned s)
{
    return s < 4 ? 0 : s / 2 - 1;
}

static inline uint32_t distance_base(unsigned s)
{
    return s < 4 ? s + 1 : (2u + (s & 1)) << distance_extra(s) | 1;
}

/* Canonical codes from lengths (§3.2.2), bit-reversed for LSB-first. */
static void canonical_codes(const uint8_t *lens, unsigned n, uint16_t *code)
{
    unsigned count[MAX_BITS + 1] = {0}, next[MAX_BITS + 1];
    for (unsigned s = 0; s < n; s++)
        count[lens[s]]++;
    count[0] = 0;
    next[0] = 0;
    for (unsigned b = 1, c = 0; b <= MAX_BITS; b++)
        next[b] = c = (c + count[b - 1]) << 1;
    for (unsigned s = 0; s < n; s++)
        code[s] = lens[s] ? (uint16_t)reverse(next[lens[s]]++, lens[s]) : 0;
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

/* --- Huffman codes fitted to a block ------------------------------------ */

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Code lengths of at most max_bits for the n symbols' frequencies (0: not
 * used, no code), from a Huffman tree built over the symbols sorted by
 * frequency (two queues: the leaves, and the nodes as made, which come in
 * order), then the deepest levels folded up to max_bits as zlib and miniz
 * do, the rarest symbols keeping the longest codes. */
static void fit_lengths(const uint32_t *freq, unsigned n, unsigned max_bits, uint8_t *lens)
{
    uint64_t keys[LITLEN_SYMBOLS];
    uint16_t sym[LITLEN_SYMBOLS];
    uint32_t weight[2 * LITLEN_SYMBOLS];
    uint16_t parent[2 * LITLEN_SYMBOLS];
    uint16_t depth[2 * LITLEN_SYMBOLS];
    unsigned m = 0;
    memset(lens, 0, n);
    for (unsigned s = 0; s < n; s++)
        if (freq[s]) keys[m++] = (uint64_t)freq[s] << 16 | s;
    qsort(keys, m, sizeof keys[0], by_key);
    for (unsigned i = 0; i < m; i++)
        sym[i] = (uint16_t)keys[i];
    if (m < 2) {
        if (m) lens[sym[0]] = 1;
        return;
    }
    for (unsigned i = 0; i < m; i++)
        weight[i] = freq[sym[i]];
    unsigned leaf = 0, node = m, next = m;
    for (; next < 2 * m - 1; next++) {
        unsigned pick[2];
        for (int k = 0; k < 2; k++)
            pick[k] = leaf < m && (node >= next || weight[leaf] <= weight[node]) ? leaf++ : node++;
        weight[next] = weight[pick[0]] + weight[pick[1]];
        parent[pick[0]] = parent[pick[1]] = (uint16_t)next;
    }
    unsigned count[LITLEN_SYMBOLS + 1] = {0};
    depth[2 * m - 2] = 0;
    for (unsigned i = 2 * m - 2; i-- > 0;) {
        depth[i] = (uint16_t)(depth[parent[i]] + 1);
        if (i < m) count[depth[i] < max_bits ? depth[i] : max_bits]++;
    }
    /* Folded leaves overfill the code: take one from the deepest level and
     * split a shallower leaf in two, until the lengths fit (Kraft). */
    uint32_t total = 0;
    for (unsigned d = 1; d <= max_bits; d++)
        total += count[d] << (max_bits - d);
    for (; total > 1u << max_bits; total--) {
        count[max_bits]--;
        for (unsigned d = max_bits - 1; d > 0; d--)
            if (count[d]) {
                count[d]--;
                count[d + 1] += 2;
                break;
            }
    }
    for (unsigned d = max_bits, k = 0; d > 0; d--)
        for (unsigned c = count[d]; c > 0; c--)
            lens[sym[k++]] = (uint8_t)d;
}

/* The code length sequence run-length coded (§3.2.7): symbols 0-15 a
 * length, 16 the last one 3-6 times, 17 and 18 zeros 3-10 and 11-138
 * times; each entry the symbol and its extra bits' value << 5. */
static unsigned code_length_runs(const uint8_t *lengths, unsigned n, uint16_t *runs)
{
    unsigned k = 0;
    for (unsigned i = 0; i < n;) {
        unsigned v = lengths[i], run = 1;
        while (i + run < n && lengths[i + run] == v)
            run++;
        i += run;
        if (v == 0) {
            for (; run >= 11; run -= run < 138 ? run : 138)
                runs[k++] = (uint16_t)(18 | ((run < 138 ? run : 138) - 11) << 5);
            if (run >= 3) runs[k++] = (uint16_t)(17 | (run - 3) << 5), run = 0;
        } else {
            runs[k++] = (uint16_t)v, run--;
            for (; run >= 3; run -= run < 6 ? run : 6)
                runs[k++] = (uint16_t)(16 | ((run < 6 ? run : 6) - 3) << 5);
        }
        for (; run > 0; run--)
            runs[k++] = (uint16_t)v;
    }
    return k;
}

static const uint8_t clen_extra[CLEN_SYMBOLS] = {[16] = 2, [17] = 3, [18] = 7};

/* Two symbols used at least, the first ones given a use where needed: a
 * code of one symbol is incomplete, which inflaters refuse. */
static void two_codes_at_least(uint32_t *freq, unsigned n)
{
    unsigned used = 0;
    for (unsigned s = 0; used < 2 && s < n; s++)
        used += freq[s] != 0;
    for (unsigned s = 0; used < 2; s++)
        if (!freq[s]) freq[s] = 1, used++;
}

static void header_add(gt_deflate *z, uint32_t value, unsigned n)
{
    z->header[z->header_n].value = value;
    z->header[z->header_n++].bits = (uint8_t)n;
}

/* The codes for the streams to come (one block each), from the symbols'
 * counts in the last stream counted (z->lit_freq, z->dist_freq: a trace's
 * bundles are alike),
 * each symbol given a code whatever its count, so that any input can be
 * coded; lengths of at most LITLEN_MAX_BITS and DIST_MAX_BITS, so that no
 * byte costs more than 12 bits (gt_deflate_bound: a literal at most 12, a
 * match of 4 bytes or more at most 12 + 5 + 8 + 13). The fixed codes when
 * the counts say that they would be smaller, or there are none. The
 * block's header is kept, to be written before each stream. */
static void fit_codes(gt_deflate *z)
{
    uint32_t lit_freq[LITLEN_SYMBOLS], dist_freq[DIST_SYMBOLS];
    uint64_t seen = 0;
    for (unsigned s = 0; s < LITLEN_SYMBOLS; s++)
        seen += z->lit_freq[s], lit_freq[s] = 2 * z->lit_freq[s] + 1;
    for (unsigned s = 0; s < DIST_SYMBOLS; s++)
        dist_freq[s] = 2 * z->dist_freq[s] + 1;
    uint8_t lens[LITLEN_SYMBOLS + DIST_SYMBOLS];
    fit_lengths(lit_freq, LITLEN_SYMBOLS, LITLEN_MAX_BITS, lens);
    fit_lengths(dist_freq, DIST_SYMBOLS, DIST_MAX_BITS, lens + LITLEN_SYMBOLS);
    uint16_t runs[LITLEN_SYMBOLS + DIST_SYMBOLS];
    unsigned nruns = code_length_runs(lens, LITLEN_SYMBOLS + DIST_SYMBOLS, runs);
    uint32_t clen_freq[CLEN_SYMBOLS] = {0};
    for (unsigned i = 0; i < nruns; i++)
        clen_freq[runs[i] & 31]++;
    two_codes_at_least(clen_freq, CLEN_SYMBOLS);
    uint8_t clen_bits[CLEN_SYMBOLS];
    uint16_t clen_code[CLEN_SYMBOLS];
    fit_lengths(clen_freq, CLEN_SYMBOLS, CLEN_MAX_BITS, clen_bits);
    canonical_codes(clen_bits, CLEN_SYMBOLS, clen_code);
    unsigned nclen = CLEN_SYMBOLS;
    while (nclen > 4 && !clen_bits[clen_order[nclen - 1]])
        nclen--;
    /* The two sizes the last stream's counts foretell, in bits. */
    uint64_t fitted = 14 + 3 * nclen, fixed = 0;
    for (unsigned i = 0; i < nruns; i++)
        fitted += clen_bits[runs[i] & 31] + clen_extra[runs[i] & 31];
    for (unsigned s = 0; s < LITLEN_SYMBOLS; s++) {
        fitted += (uint64_t)z->lit_freq[s] * lens[s];
        fixed += (uint64_t)z->lit_freq[s] * z->fixed_bits[s];
    }
    for (unsigned s = 0; s < DIST_SYMBOLS; s++) {
        fitted += (uint64_t)z->dist_freq[s] * lens[LITLEN_SYMBOLS + s];
        fixed += (uint64_t)z->dist_freq[s] * 5;
    }
    z->header_n = 0;
    if (seen && fitted < fixed) {
        header_add(z, 1 | 2u << 1, 3); /* the last block; fitted codes */
        header_add(z, (LITLEN_SYMBOLS - 257) | (DIST_SYMBOLS - 1) << 5 | (nclen - 4) << 10, 14);
        for (unsigned i = 0; i < nclen; i++)
            header_add(z, clen_bits[clen_order[i]], 3);
        for (unsigned i = 0; i < nruns; i++) {
            unsigned sym = runs[i] & 31;
            header_add(z, clen_code[sym] | (uint32_t)(runs[i] >> 5) << clen_bits[sym],
                       clen_bits[sym] + clen_extra[sym]);
        }
        memcpy(z->lit_bits, lens, LITLEN_SYMBOLS);
        canonical_codes(z->lit_bits, LITLEN_SYMBOLS, z->lit_code);
        memcpy(z->dist_bits, lens + LITLEN_SYMBOLS, DIST_SYMBOLS);
        canonical_codes(z->dist_bits, DIST_SYMBOLS, z->dist_code);
    } else {
        header_add(z, 1 | 1u << 1, 3); /* the last block; fixed codes */
        memcpy(z->lit_bits, z->fixed_bits, LITLEN_SYMBOLS);
        memcpy(z->lit_code, z->fixed_code, sizeof z->lit_code);
        for (unsigned s = 0; s < DIST_SYMBOLS; s++)
            z->dist_code[s] = (uint16_t)reverse(s, 5), z->dist_bits[s] = 5;
    }
    /* Each length's code and extra bits, ready to put. */
    for (unsigned s = 0; s < 29; s++) {
        unsigned end = s < 28 ? length_base[s + 1] : MAX_MATCH + 1;
        for (unsigned len = length_base[s]; len < end; len++) {
            z->length_code[len] = z->lit_code[257 + s] | (uint32_t)(len - length_base[s])
                                                             << z->lit_bits[257 + s];
            z->length_bits[len] = (uint8_t)(z->lit_bits[257 + s] + length_extra[s]);
        }
    }
    memset(z->lit_freq, 0, sizeof z->lit_freq);
    memset(z->dist_freq, 0, sizeof z->dist_freq);
}

void gt_deflate_init(gt_deflate *z)
{
    memset(z->slots, 0, sizeof z->slots);
    z->base = 0;
    for (unsigned s = 0; s < 288; s++)
        z->fixed_bits[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
    canonical_codes(z->fixed_bits, 288, z->fixed_code);
    for (unsigned s = 0; s < 29; s++)
        for (unsigned len = length_base[s];
             len <= MAX_MATCH && (s == 28 || len < length_base[s + 1]); len++)
            z->length_symbol[len - 3] = (uint8_t)s;
    memset(z->lit_freq, 0, sizeof z->lit_freq);
    memset(z->dist_freq, 0, sizeof z->dist_freq);
    z->streams = 0;
    z->counted = 0;
    fit_codes(z); /* no counts: the fixed codes */
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

/* 12 + 5 and 8 + 13 bits at most: one put, or two where they make more
 * than 32. Counted when `counting`. */
static inline __attribute__((always_inline)) void put_match(gt_deflate *z, bits *b, size_t len,
                                                            uint32_t d, const int counting)
{
    unsigned s = distance_symbol(d), extra = distance_extra(s);
    uint32_t dv = z->dist_code[s] | (d - distance_base(s)) << z->dist_bits[s];
    unsigned lb = z->length_bits[len], db = z->dist_bits[s] + extra;
    if (lb + db <= 32) { /* most: one put */
        put_bits(b, z->length_code[len] | (uint64_t)dv << lb, lb + db);
    } else {
        put_bits(b, z->length_code[len], lb);
        put_bits(b, dv, db);
    }
    if (counting) {
        z->lit_freq[257 + z->length_symbol[len - 3]]++;
        z->dist_freq[s]++;
    }
}

/* Two at a time: 24 bits at most. */
static inline __attribute__((always_inline)) void
put_literals(gt_deflate *z, bits *b, const uint8_t *p, const uint8_t *end, const int counting)
{
    for (; p + 1 < end; p += 2) {
        put_bits(b, z->lit_code[p[0]] | (uint32_t)z->lit_code[p[1]] << z->lit_bits[p[0]],
                 (unsigned)z->lit_bits[p[0]] + z->lit_bits[p[1]]);
        if (counting) z->lit_freq[p[0]]++, z->lit_freq[p[1]]++;
    }
    if (p < end) {
        put_bits(b, z->lit_code[*p], z->lit_bits[*p]);
        if (counting) z->lit_freq[*p]++;
    }
}

/* The stream's matches and literals, written and (`counting`) counted:
 * a copy of the loop for each, so that the one that does not count pays
 * nothing for it. */
static inline __attribute__((always_inline)) void
compress(gt_deflate *z, bits *b, const uint8_t *in, size_t n, const int counting)
{
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
        put_literals(z, b, in + literals, in + i, counting);
        put_match(z, b, len, (uint32_t)d, counting);
        i += len;
        literals = i;
    }
    put_literals(z, b, in + literals, in + n, counting);
}

size_t gt_deflate_zlib(gt_deflate *z, const uint8_t *in, size_t n, uint8_t *out)
{
    out[0] = 0x78; /* deflate, 32 KiB window */
    out[1] = 0x01; /* fastest; (0x78 << 8 | 0x01) % 31 == 0 */
    bits b = {.p = out + 2};
    /* Codes fitted anew after each stream counted: one in
     * GT_DEFLATE_COUNT_EVERY, the others spared the counting. */
    if (z->counted) fit_codes(z), z->counted = 0;
    for (unsigned k = 0; k < z->header_n; k++)
        put_bits(&b, z->header[k].value, z->header[k].bits);
    if (n > UINT32_MAX - 1 - z->base) { /* once per 4 GiB compressed */
        memset(z->slots, 0, sizeof z->slots);
        z->base = 0;
    }
    if (z->streams++ % GT_DEFLATE_COUNT_EVERY == 0) {
        compress(z, &b, in, n, 1);
        z->counted = 1;
    } else {
        compress(z, &b, in, n, 0);
    }
    z->base += (uint32_t)n;
    put_bits(&b, z->lit_code[END_OF_BLOCK], z->lit_bits[END_OF_BLOCK]);
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
