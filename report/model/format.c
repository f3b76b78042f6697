#include "format.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* Scales v by `step` until it prints as less than one step, then prints
 * it with two, one or no decimals. */
static char *format_scaled(uint64_t v, double step, const char *const *units, unsigned nunits,
                           char *buf, size_t cap)
{
    if (v < 1000) {
        snprintf(buf, cap, "%" PRIu64 " %s", v, units[0]);
        return buf;
    }
    double x = (double)v;
    unsigned u = 0;
    while (u + 1 < nunits && x >= step - 0.5) {
        x /= step;
        u++;
    }
    int decimals = x < 9.995 ? 2 : x < 99.95 ? 1 : 0;
    snprintf(buf, cap, "%.*f %s", decimals, x, units[u]);
    return buf;
}

char *gt_format_ns(uint64_t ns, char *buf, size_t cap)
{
    static const char *const units[] = {"ns", "us", "ms", "s"};
    return format_scaled(ns, 1000.0, units, 4, buf, cap);
}

char *gt_format_bytes(uint64_t bytes, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    return format_scaled(bytes, 1024.0, units, 5, buf, cap);
}

char *gt_format_rate(double per_s, const char *unit, char *buf, size_t cap)
{
    static const char *const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
    if (!isfinite(per_s)) {
        snprintf(buf, cap, "- %s/s", unit);
        return buf;
    }
    double x = fabs(per_s);
    unsigned p = 0;
    while (p + 1 < sizeof prefixes / sizeof prefixes[0] && x >= 999.5) {
        x /= 1000.0;
        p++;
    }
    int decimals = x < 9.995 ? 2 : x < 99.95 ? 1 : 0;
    snprintf(buf, cap, "%s%.*f %s%s/s", per_s < 0 ? "-" : "", decimals, x, prefixes[p], unit);
    return buf;
}
