/* A reader of the Protocol Buffers wire format for the tests of the
 * Perfetto trace (test_report_pftrace.c, test_shim_collect.c): fields of
 * a message one at a time, and a bundle's zlib stream (compressed_packets)
 * inflated. A malformed message or stream fails the test. Include after
 * cmocka.h. */
#ifndef GT_TEST_PB_READ_H
#define GT_TEST_PB_READ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "pb.h"

typedef struct field {
    uint32_t num;
    unsigned wire;
    uint64_t v;          /* varint and fixed64 values */
    const uint8_t *data; /* length-delimited contents */
    size_t len;
} field;

static inline bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

/* The next field of a message; false at its end. A malformed message
 * fails the test. */
static inline bool next_field(const uint8_t **p, const uint8_t *end, field *f)
{
    *f = (field){0};
    if (*p == end) return false;
    uint64_t tag;
    assert_true(read_varint(p, end, &tag));
    f->num = (uint32_t)(tag >> 3);
    f->wire = (unsigned)(tag & 7);
    assert_true(f->num > 0);
    if (f->wire == GT_PB_VARINT) {
        assert_true(read_varint(p, end, &f->v));
    } else if (f->wire == GT_PB_I64) {
        assert_true(end - *p >= 8);
        f->v = 0;
        for (unsigned i = 0; i < 8; i++)
            f->v |= (uint64_t)(*p)[i] << (8 * i);
        *p += 8;
    } else {
        assert_int_equal(f->wire, GT_PB_LEN);
        uint64_t n;
        assert_true(read_varint(p, end, &n));
        assert_true(n <= (uint64_t)(end - *p));
        f->data = *p;
        f->len = (size_t)n;
        *p += n;
    }
    return true;
}

/* The first field num of a message; false (*out zeroed) when absent. */
static inline bool find_field(const uint8_t *data, size_t len, uint32_t num, field *out)
{
    *out = (field){0};
    const uint8_t *p = data;
    field f;
    while (next_field(&p, data + len, &f))
        if (f.num == num) {
            *out = f;
            return true;
        }
    return false;
}

/* A bundle's zlib stream inflated; its length at *n. */
static inline uint8_t *inflate_bundle(const uint8_t *data, size_t len, size_t *n)
{
    size_t cap = 16 * len + 4096;
    uint8_t *out = malloc(cap);
    assert_non_null(out);
    z_stream s;
    memset(&s, 0, sizeof s);
    assert_int_equal(inflateInit(&s), Z_OK);
    s.next_in = (Bytef *)data;
    s.avail_in = (uInt)len;
    int rc;
    /* More room while the output fills it; a stream that ends early stops
     * the loop with room left, and fails below. */
    do {
        if (s.total_out == cap) {
            out = realloc(out, cap *= 2);
            assert_non_null(out);
        }
        s.next_out = out + s.total_out;
        s.avail_out = (uInt)(cap - s.total_out);
        rc = inflate(&s, Z_FINISH);
    } while ((rc == Z_BUF_ERROR || rc == Z_OK) && s.avail_out == 0);
    assert_int_equal(rc, Z_STREAM_END); /* whole, its checksum right */
    assert_int_equal(s.avail_in, 0);
    *n = s.total_out;
    inflateEnd(&s);
    return out;
}

#endif
