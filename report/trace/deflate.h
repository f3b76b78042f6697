/* A fast zlib-stream compressor for the Perfetto trace's packet bundles
 * (compressed_packets: a zlib stream, RFC 1950, of Trace bytes, which is
 * the only compression the format has).
 *
 * The stream is one deflate block with Huffman codes fitted to the
 * symbols of a stream before it (RFC 1951 §3.2.7: a trace's bundles are
 * alike, and so the work stays one pass; one stream in
 * GT_DEFLATE_COUNT_EVERY is counted), or the fixed codes (§3.2.6) where
 * those counts say they are smaller; its matches found greedily: at
 * the distances of the last two matches first, then by one hash-table
 * probe, with no insertions inside a match.
 *
 * Why our own rather than zlib or libdeflate: the trace is a stream of
 * small packets that differ from one a few hundred bytes back in a
 * timestamp and an id or two, so what shrinks it is finding that packet,
 * which the last distances and one probe do; the rest of what a general
 * compressor does (hash chains, lazy matching) costs more than it gains
 * here. Codes fitted to the bundles do pay, and cost little when they
 * are fitted to a bundle before (no second pass) and counted in one of
 * GT_DEFLATE_COUNT_EVERY: the writers' benchmark's packets take 7.9 bytes
 * a record instead of the fixed codes' 9.9, and the bundles of a real
 * trace 17.5% less, for the same CPU (docs/performance.md). With fixed
 * codes, in bundles of 128 KiB: 9.9 bytes a record for 5 s of CPU per
 * 10^8 records; zlib at its fastest level 10.1 bytes for 25 s; libdeflate
 * at its fastest 9.5 bytes for 11 s, and it is not on every machine,
 * while this runs inside the traced program, where a library is one more
 * thing to load. */
#ifndef GT_DEFLATE_H
#define GT_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

#define GT_DEFLATE_HASH_BITS 15u
/* One stream in this many has its symbols counted for the codes of the
 * next ones: a trace's bundles are alike, and counting costs. */
#define GT_DEFLATE_COUNT_EVERY 8u
/* The most a fitted block's header takes: 17 bits, 19 code length code
 * lengths of 3, 316 code lengths of 14 with their extra bits. */
#define GT_DEFLATE_HEADER_MAX 600u

/* The compressor's tables: about 135 KiB, reused by every call. */
typedef struct gt_deflate {
    /* Per hash, the latest position + 1, positions counting on from call
     * to call (from base) so that the table needs no clearing: a value at
     * or below base is an earlier call's. */
    uint32_t slots[1u << GT_DEFLATE_HASH_BITS];
    uint32_t base;
    uint16_t fixed_code[288]; /* the fixed literal/length codes, bit-reversed for LSB-first */
    uint8_t fixed_bits[288];
    uint8_t length_symbol[256]; /* by match length - 3 */
    /* The symbols' counts in the last stream, whose codes the next one
     * uses; the codes of the stream being made. */
    uint32_t lit_freq[286];
    uint32_t dist_freq[30];
    uint16_t lit_code[286];
    uint8_t lit_bits[286];
    uint16_t dist_code[30];
    uint8_t dist_bits[30];
    uint32_t length_code[259]; /* a match length's code and extra bits, ready to put */
    uint8_t length_bits[259];
    struct {
        uint32_t value;
        uint8_t bits;
    } header[3 + 1 + 19 + 316]; /* the block's header for these codes, as put */
    unsigned header_n;
    uint64_t streams; /* made so far */
    int counted;      /* the last stream was counted: codes to fit anew */
} gt_deflate;

void gt_deflate_init(gt_deflate *z);

/* Room the zlib stream of n bytes may need (every byte a 12-bit literal,
 * no code being longer, the block's header, the stream's, the checksum,
 * and the bit writer's last whole word). */
static inline size_t gt_deflate_bound(size_t n)
{
    return n + n / 2 + GT_DEFLATE_HEADER_MAX + 32;
}

#define GT_DEFLATE_MAX_INPUT (1u << 30)

/* in[0, n) as a zlib stream at out, which has gt_deflate_bound(n) bytes
 * of room; returns the stream's length. n is at most GT_DEFLATE_MAX_INPUT. */
size_t gt_deflate_zlib(gt_deflate *z, const uint8_t *in, size_t n, uint8_t *out);

/* The Adler-32 checksum of p[0, n) continued from adler (1 to start). */
uint32_t gt_adler32(uint32_t adler, const uint8_t *p, size_t n);

#endif
