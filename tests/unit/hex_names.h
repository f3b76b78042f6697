/* Names passed to the test emitters as hex-encoded bytes, so that any
 * byte (NUL aside) survives the command line. */
#ifndef TEST_HEX_NAMES_H
#define TEST_HEX_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

static inline int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return 0;
}

/* The string id of the bytes hex encodes (at most 512 of them). */
static inline uint32_t intern_hex(gt_strtab *names, const char *hex)
{
    char buf[512];
    size_t n = 0;
    for (; hex[0] && hex[1] && n < sizeof(buf); hex += 2)
        buf[n++] = (char)(hex_value(hex[0]) * 16 + hex_value(hex[1]));
    return gt_strtab_intern(names, buf, n);
}

#endif
