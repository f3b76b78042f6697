#include "utf8.h"

#include <string.h>

static bool in(unsigned char c, unsigned char lo, unsigned char hi)
{
    return c >= lo && c <= hi;
}

size_t gt_utf8_sequence(const unsigned char *s, size_t n, bool *valid)
{
    unsigned char b = s[0];
    *valid = true;
    if (b < 0x80) return 1;

    size_t need;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (in(b, 0xC2, 0xDF)) {
        need = 2;
    } else if (in(b, 0xE0, 0xEF)) {
        need = 3;
        if (b == 0xE0) lo = 0xA0; /* overlong */
        if (b == 0xED) hi = 0x9F; /* surrogates */
    } else if (in(b, 0xF0, 0xF4)) {
        need = 4;
        if (b == 0xF0) lo = 0x90; /* overlong */
        if (b == 0xF4) hi = 0x8F; /* above U+10FFFF */
    } else {
        *valid = false; /* a continuation byte, C0, C1, F5..FF */
        return 1;
    }
    for (size_t i = 1; i < need; i++) {
        bool ok = i < n && (i == 1 ? in(s[i], lo, hi) : in(s[i], 0x80, 0xBF));
        if (!ok) {
            *valid = false;
            return i;
        }
    }
    return need;
}

size_t gt_utf8_copy(char *dst, const char *src, size_t n)
{
    const unsigned char *s = (const unsigned char *)src;
    char *d = dst;
    for (size_t i = 0; i < n;) {
        bool valid = true;
        size_t len = s[i] < 0x80 ? 1 : gt_utf8_sequence(s + i, n - i, &valid);
        if (valid) {
            memcpy(d, s + i, len);
            d += len;
        } else {
            memcpy(d, GT_UTF8_REPLACEMENT, 3);
            d += 3;
        }
        i += len;
    }
    return (size_t)(d - dst);
}

bool gt_text_is_control(const unsigned char *s, size_t n)
{
    if (n == 1) return s[0] < 0x20 || s[0] == 0x7f;
    return n == 2 && s[0] == 0xC2 && s[1] < 0xA0; /* C1: U+0080..U+009F */
}

size_t gt_text_safe_copy(char *dst, size_t cap, const char *src, size_t n)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    if (cap == 0) return 0;
    for (size_t i = 0; i < n;) {
        bool valid;
        size_t len = gt_utf8_sequence(s + i, n - i, &valid);
        const char *piece = (const char *)s + i;
        size_t pn = len;
        if (!valid)
            piece = GT_UTF8_REPLACEMENT, pn = 3;
        else if (gt_text_is_control(s + i, len))
            piece = "?", pn = 1;
        if (o + pn >= cap) break;
        memcpy(dst + o, piece, pn);
        o += pn;
        i += len;
    }
    dst[o] = '\0';
    return o;
}

size_t gt_text_width(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        w += (*p & 0xC0) != 0x80;
    return w;
}
