/* A fast zlib-stream compressor for the Perfetto trace's packet bundles
 * (compressed_packets: a zlib stream, RFC 1950, of Trace bytes, which is
 * the only compression the format has).
 *
 * The stream is one deflate block with the fixed Huffman codes (RFC 1951
 * §3.2.6), its matches found greedily: at the distances of the last two
 * matches first, then by one hash-table probe, with no insertions inside
 * a match.
 *
 * Why our own rather than zlib or libdeflate: the trace is a stream of
 * small packets that differ from one a few hundred bytes back in a
 * timestamp and an id or two, so what shrinks it is finding that packet,
 * which the last distances and one probe do; the rest of what a general
 * compressor does (hash chains, lazy matching, Huffman codes fitted to
 * each block) costs more than it gains here. The writers' benchmark's
 * packets, in bundles of 128 KiB: this, 9.9 bytes a record for 5 s of
 * CPU per 10^8 records; zlib at its fastest level 10.1 bytes for 25 s;
 * libdeflate at its fastest 9.5 bytes for 11 s, and it is not on every
 * machine, while this runs inside the traced program, where a library is
 * one more thing to load. */
#ifndef GT_DEFLATE_H
#define GT_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

#define GT_DEFLATE_HASH_BITS 15u

/* The compressor's tables: about 130 KiB, reused by every call. */
typedef struct gt_deflate {
    /* Per hash, the latest position + 1, positions counting on from call
     * to call (from base) so that the table needs no clearing: a value at
     * or below base is an earlier call's. */
    uint32_t slots[1u << GT_DEFLATE_HASH_BITS];
    uint32_t base;
    uint16_t literal[256];                      /* fixed codes, bit-reversed for LSB-first */
    uint8_t literal_bits[256];
    uint32_t length[259]; /* a match length's code and extra bits, ready to put */
    uint8_t length_bits[259];
    uint8_t distance[30]; /* distance codes (five bits), bit-reversed */
} gt_deflate;

void gt_deflate_init(gt_deflate *z);

/* Room the zlib stream of n bytes may need (every byte a 9-bit literal,
 * the header, the checksum, and the bit writer's last whole word). */
static inline size_t gt_deflate_bound(size_t n)
{
    return n + n / 8 + 32;
}

#define GT_DEFLATE_MAX_INPUT (1u << 30)

/* in[0, n) as a zlib stream at out, which has gt_deflate_bound(n) bytes
 * of room; returns the stream's length. n is at most GT_DEFLATE_MAX_INPUT. */
size_t gt_deflate_zlib(gt_deflate *z, const uint8_t *in, size_t n, uint8_t *out);

/* The Adler-32 checksum of p[0, n) continued from adler (1 to start). */
uint32_t gt_adler32(uint32_t adler, const uint8_t *p, size_t n);

#endif
