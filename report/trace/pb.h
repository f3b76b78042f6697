/* The Protocol Buffers wire format, as much of it as the Perfetto trace
 * (pftrace.c) writes: varints, tags, fixed64, length-delimited bytes and
 * nested messages, encoded by hand straight into the output buffer.
 *
 * Why by hand rather than protobuf-c with Perfetto's .proto files: the
 * trace is a handful of messages, most of its packets a few fields of a
 * TrackEvent, and the drain thread writes millions of them. protobuf-c
 * would fill a C struct per packet and pack it (a walk over its field
 * descriptors, a copy), add a library to everything libgputrace.so
 * loads into the traced program, and need Perfetto's protos vendored and
 * compiled in the build. Here a packet is a few stores; the tests decode
 * every trace with Perfetto's own definitions, which is what keeps the
 * field numbers honest.
 *
 * Every function writes at p, which must have room (callers reserve a
 * bound), and returns the end of what it wrote. */
#ifndef GT_PB_H
#define GT_PB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum gt_pb_wire { GT_PB_VARINT = 0, GT_PB_I64 = 1, GT_PB_LEN = 2 };

#define GT_PB_VARINT_MAX 10u /* bytes of the longest varint (a 64-bit value) */
/* Room for a tag and a length beyond the bytes they frame. */
#define GT_PB_FRAME_MAX (2u * GT_PB_VARINT_MAX)

static inline size_t gt_pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *gt_pb_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *gt_pb_tag(uint8_t *p, uint32_t field, enum gt_pb_wire wire)
{
    return gt_pb_varint(p, (uint64_t)field << 3 | (uint64_t)wire);
}

/* uint32, uint64, enum, bool and (non-negative) int64 fields. */
static inline uint8_t *gt_pb_uint(uint8_t *p, uint32_t field, uint64_t v)
{
    return gt_pb_varint(gt_pb_tag(p, field, GT_PB_VARINT), v);
}

/* fixed64: eight bytes, least significant first. */
static inline uint8_t *gt_pb_fixed64(uint8_t *p, uint32_t field, uint64_t v)
{
    p = gt_pb_tag(p, field, GT_PB_I64);
    for (unsigned i = 0; i < 8; i++)
        *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

/* string and bytes fields. */
static inline uint8_t *gt_pb_bytes(uint8_t *p, uint32_t field, const void *s, size_t n)
{
    p = gt_pb_varint(gt_pb_tag(p, field, GT_PB_LEN), n);
    memcpy(p, s, n);
    return p + n;
}

/* A nested message: gt_pb_open writes its tag and keeps one byte for its
 * length at *len_at; gt_pb_close(len_at, end) writes the length of what
 * was written since and returns the new end. Most messages here are
 * under 128 bytes; a longer one (a long name) is moved up by the bytes
 * its length needs beyond the first, GT_PB_VARINT_MAX - 1 at most, which
 * the caller's room must allow for each message open at once. */
static inline uint8_t *gt_pb_open(uint8_t *p, uint32_t field, uint8_t **len_at)
{
    p = gt_pb_tag(p, field, GT_PB_LEN);
    *len_at = p;
    return p + 1;
}

uint8_t *gt_pb_close_long(uint8_t *len_at, uint8_t *end);

static inline uint8_t *gt_pb_close(uint8_t *len_at, uint8_t *end)
{
    size_t n = (size_t)(end - len_at - 1);
    if (n < 0x80) {
        *len_at = (uint8_t)n;
        return end;
    }
    return gt_pb_close_long(len_at, end);
}

#endif
