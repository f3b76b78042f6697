/* GPUTRACE_CHECKSUM's values and the words for a copy's checksum status. */
#include "checksum_mode.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int word_is(const char *s, size_t len, const char *word)
{
    return len == strlen(word) && strncasecmp(s, word, len) == 0;
}

/* A whole number from 1 to max, digits only. */
static int parse_bits(const char *s, size_t len, unsigned max, uint8_t *out)
{
    if (len == 0 || len > 2) return -1;
    unsigned v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v < 1 || v > max) return -1;
    *out = (uint8_t)v;
    return 0;
}

int gt_checksum_mode_parse(const char *s, size_t len, gt_checksum_mode *out)
{
    if (word_is(s, len, "off")) {
        *out = (gt_checksum_mode){GT_CHECKSUM_OFF, 0};
        return 0;
    }
    if (word_is(s, len, "dtoh")) {
        *out = (gt_checksum_mode){GT_CHECKSUM_BYTES, 0};
        return 0;
    }
    /* dtoh:f32:BITS, dtoh:f64:BITS */
    if (len < 10 || strncasecmp(s, "dtoh:f", 6) != 0 || s[8] != ':') return -1;
    gt_checksum_mode m;
    unsigned max;
    if (s[6] == '3' && s[7] == '2') {
        m.kind = GT_CHECKSUM_F32;
        max = GT_CHECKSUM_F32_BITS;
    } else if (s[6] == '6' && s[7] == '4') {
        m.kind = GT_CHECKSUM_F64;
        max = GT_CHECKSUM_F64_BITS;
    } else {
        return -1;
    }
    if (parse_bits(s + 9, len - 9, max, &m.bits) != 0) return -1;
    *out = m;
    return 0;
}

void gt_checksum_mode_name(gt_checksum_mode m, char buf[GT_CHECKSUM_MODE_MAX])
{
    switch ((enum gt_checksum_kind)m.kind) {
    case GT_CHECKSUM_BYTES:
        snprintf(buf, GT_CHECKSUM_MODE_MAX, "dtoh");
        return;
    case GT_CHECKSUM_F32:
    case GT_CHECKSUM_F64:
        snprintf(buf, GT_CHECKSUM_MODE_MAX, "dtoh:f%d:%u", m.kind == GT_CHECKSUM_F32 ? 32 : 64,
                 (unsigned)m.bits);
        return;
    case GT_CHECKSUM_OFF:
    case GT_CHECKSUM_KIND_COUNT:
        break;
    }
    snprintf(buf, GT_CHECKSUM_MODE_MAX, "off");
}

static const char *const status_names[GT_CK_STATUS_COUNT] = {
    "hashed", "overwritten", "unsynchronized", "pending_full", "freed", "strided",
};

static const char *const status_reasons[GT_CK_STATUS_COUNT] = {
    "hashed",
    "overwritten before a synchronize",
    "never synchronized",
    "too many awaiting a synchronize",
    "buffer freed before a synchronize",
    "2D/3D copies",
};

const char *gt_checksum_status_name(enum gt_checksum_status s)
{
    return (unsigned)s < GT_CK_STATUS_COUNT ? status_names[s] : "unknown";
}

const char *gt_checksum_status_reason(enum gt_checksum_status s)
{
    return (unsigned)s < GT_CK_STATUS_COUNT ? status_reasons[s] : "unknown";
}

int gt_checksum_status_parse(const char *word)
{
    for (int s = 0; s < GT_CK_STATUS_COUNT; s++)
        if (strcmp(word, status_names[s]) == 0) return s;
    return -1;
}
