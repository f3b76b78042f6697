/* Readable units for people: three significant digits, ns/us/ms/s (ASCII,
 * as every message spells them) and B/KiB/MiB/GiB/TiB. The result is
 * written to buf and returned. */
#ifndef GT_FORMAT_H
#define GT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define GT_FORMAT_CAP 32u /* enough for any value */

char *gt_format_ns(uint64_t ns, char *buf, size_t cap);
char *gt_format_bytes(uint64_t bytes, char *buf, size_t cap);

/* A rate with an SI prefix: "2.10 TFLOP/s", "845 GB/s", "3.20 G/s" (unit
 * "FLOP", "B", ""). Units of 1000, as GB/s is 10^9 bytes a second. */
#define GT_FORMAT_RATE_CAP 64u
char *gt_format_rate(double per_s, const char *unit, char *buf, size_t cap);

#endif
