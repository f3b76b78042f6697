/* GPUTRACE_CHECKSUM (SPEC §12): which device-to-host copies are hashed
 * and how, and what became of each copy's checksum. Shared by the
 * configuration, the shim's checksum code, the report and the command. */
#ifndef GT_CHECKSUM_MODE_H
#define GT_CHECKSUM_MODE_H

#include <stddef.h>
#include <stdint.h>

enum gt_checksum_kind {
    GT_CHECKSUM_OFF,
    GT_CHECKSUM_BYTES, /* dtoh: the bytes as they are */
    GT_CHECKSUM_F32,   /* dtoh:f32:BITS: 4-byte floats, mantissas rounded to BITS bits */
    GT_CHECKSUM_F64,   /* dtoh:f64:BITS: 8-byte floats, mantissas rounded to BITS bits */
    GT_CHECKSUM_KIND_COUNT
};

typedef struct gt_checksum_mode {
    uint8_t kind; /* enum gt_checksum_kind */
    uint8_t bits; /* mantissa bits kept: 1-23 (f32), 1-52 (f64); 0 otherwise */
} gt_checksum_mode;

#define GT_CHECKSUM_F32_BITS 23u
#define GT_CHECKSUM_F64_BITS 52u

/* "off", "dtoh", "dtoh:f32:BITS", "dtoh:f64:BITS" (case-insensitive, no
 * blanks inside) into *out; 0, or -1 when s[0, len) is none of them. */
int gt_checksum_mode_parse(const char *s, size_t len, gt_checksum_mode *out);

/* The mode as it is written: "dtoh:f32:20". */
#define GT_CHECKSUM_MODE_MAX 16u
void gt_checksum_mode_name(gt_checksum_mode m, char buf[GT_CHECKSUM_MODE_MAX]);

static inline int gt_checksum_mode_equal(gt_checksum_mode a, gt_checksum_mode b)
{
    return a.kind == b.kind && a.bits == b.bits;
}

/* What became of one copy's checksum. */
enum gt_checksum_status {
    GT_CK_HASHED,
    GT_CK_OVERWRITTEN,  /* another copy wrote into its buffer before any synchronize */
    GT_CK_UNSYNCED,     /* the process ended before it synchronized with the copy */
    GT_CK_PENDING_FULL, /* too many copies awaited their synchronize: the oldest gave way */
    GT_CK_FREED,        /* its buffer was freed (or unpinned) before the synchronize */
    GT_CK_STRIDED,      /* a 2D or 3D copy: its bytes are not one range */
    GT_CK_STATUS_COUNT
};

/* The JSON word ("hashed", "overwritten", "unsynchronized", ...), and
 * the reason in words for the summary ("overwritten before a
 * synchronize"). */
const char *gt_checksum_status_name(enum gt_checksum_status s);
const char *gt_checksum_status_reason(enum gt_checksum_status s);
/* The status a JSON word names; -1 for none. */
int gt_checksum_status_parse(const char *word);

#endif
