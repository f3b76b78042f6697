/* Hashing a copy's bytes (checksum_hash.h). The tolerant modes round the
 * floats into a block on the stack and feed the blocks to one XXH3 state,
 * so no memory is taken however large the copy. */
#include "checksum_hash.h"

#include <string.h>

#include "checksum_mode.h"
#include "xxh3.h"

#define F32_EXPONENT 0x7f800000u
#define F64_EXPONENT 0x7ff0000000000000ull
#define BLOCK_BYTES 4096u

/* Rounding to `bits` of the mantissa: half of the last kept bit added to
 * the magnitude (a carry out of the mantissa goes into the exponent, as
 * rounding a float does), the bits below it cleared; infinities and NaNs
 * kept. `half` and `mask` are taken once per copy; the rounding itself is
 * a select, so that the loops below vectorise. bits at or past the
 * mantissa's width leave the value as it is (half 0, mask all ones). */
static inline uint32_t half_f32(unsigned bits)
{
    return bits < GT_CHECKSUM_F32_BITS ? 1u << (GT_CHECKSUM_F32_BITS - bits - 1) : 0;
}

static inline uint64_t half_f64(unsigned bits)
{
    return bits < GT_CHECKSUM_F64_BITS ? 1ull << (GT_CHECKSUM_F64_BITS - bits - 1) : 0;
}

/* The bits kept: all of them when nothing is rounded (half 0). */
static inline uint32_t mask_f32(uint32_t half)
{
    return half ? ~((half << 1) - 1) : ~0u;
}

static inline uint64_t mask_f64(uint64_t half)
{
    return half ? ~((half << 1) - 1) : ~0ull;
}

static inline uint32_t round_f32(uint32_t v, uint32_t half, uint32_t mask)
{
    return (v & F32_EXPONENT) == F32_EXPONENT ? v : (v + half) & mask;
}

static inline uint64_t round_f64(uint64_t v, uint64_t half, uint64_t mask)
{
    return (v & F64_EXPONENT) == F64_EXPONENT ? v : (v + half) & mask;
}

uint32_t gt_checksum_round_f32(uint32_t value, unsigned bits)
{
    uint32_t half = half_f32(bits);
    return round_f32(value, half, mask_f32(half));
}

uint64_t gt_checksum_round_f64(uint64_t value, unsigned bits)
{
    uint64_t half = half_f64(bits);
    return round_f64(value, half, mask_f64(half));
}

/* The floats of p[0, n) rounded, block by block, into the state. The
 * values are little-endian: swapped around the rounding elsewhere. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LE32(v) __builtin_bswap32(v)
#define LE64(v) __builtin_bswap64(v)
#else
#define LE32(v) (v)
#define LE64(v) (v)
#endif

static void feed_f32(gt_xxh3 *s, const unsigned char *p, size_t n, unsigned bits)
{
    uint32_t block[BLOCK_BYTES / 4];
    uint32_t half = half_f32(bits), mask = mask_f32(half);
    while (n) {
        size_t k = n < BLOCK_BYTES / 4 ? n : BLOCK_BYTES / 4;
        memcpy(block, p, k * 4);
        for (size_t i = 0; i < k; i++) {
            uint32_t v = LE32(block[i]);
            block[i] = LE32(round_f32(v, half, mask));
        }
        gt_xxh3_update(s, block, k * 4);
        p += k * 4;
        n -= k;
    }
}

static void feed_f64(gt_xxh3 *s, const unsigned char *p, size_t n, unsigned bits)
{
    uint64_t block[BLOCK_BYTES / 8];
    uint64_t half = half_f64(bits), mask = mask_f64(half);
    while (n) {
        size_t k = n < BLOCK_BYTES / 8 ? n : BLOCK_BYTES / 8;
        memcpy(block, p, k * 8);
        for (size_t i = 0; i < k; i++) {
            uint64_t v = LE64(block[i]);
            block[i] = LE64(round_f64(v, half, mask));
        }
        gt_xxh3_update(s, block, k * 8);
        p += k * 8;
        n -= k;
    }
}

uint64_t gt_checksum_hash(gt_checksum_mode m, const void *data, size_t len)
{
    size_t width = m.kind == GT_CHECKSUM_F32 ? 4 : m.kind == GT_CHECKSUM_F64 ? 8 : 0;
    if (!width) return gt_xxh3_64(data, len);
    const unsigned char *p = data;
    size_t whole = len / width;
    gt_xxh3 s;
    gt_xxh3_init(&s);
    if (width == 4)
        feed_f32(&s, p, whole, m.bits);
    else
        feed_f64(&s, p, whole, m.bits);
    gt_xxh3_update(&s, p + whole * width, len - whole * width);
    return gt_xxh3_digest(&s);
}
