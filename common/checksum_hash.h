/* A copy's checksum: XXH3-64 (xxh3.h) of the bytes, or, in the tolerant
 * modes, of the floats with their mantissas rounded first. */
#ifndef GT_CHECKSUM_HASH_H
#define GT_CHECKSUM_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "checksum_mode.h"

/* The checksum of data[0, len) in mode m (not GT_CHECKSUM_OFF). The
 * tolerant modes read the data as little-endian floats of their size,
 * each rounded to nearest (ties away from zero) at `bits` mantissa bits;
 * infinities and NaNs are left as they are, and bytes after the last
 * whole float are hashed as they are. With every mantissa bit kept the
 * value is the plain bytes' hash. */
uint64_t gt_checksum_hash(gt_checksum_mode m, const void *data, size_t len);

/* One value's bits rounded as gt_checksum_hash rounds them. */
uint32_t gt_checksum_round_f32(uint32_t value, unsigned bits);
uint64_t gt_checksum_round_f64(uint64_t value, unsigned bits);

#endif
