/* What a module image is, from its bytes (SPEC §4, `module`): PTX text,
 * a cubin (CUDA ELF), or an nvcc fat binary (raw, or behind the
 * __fatBinC_Wrapper_t that nvcc's host code registers), and its size.
 *
 * A fat binary whose only code the device can run is PTX is classified
 * `ptx`: the driver JIT-compiles it at load, which is what the kind tells
 * the reader. One with SASS for the device (same major architecture, minor
 * not above the device's) is `fatbin`. Without a device to compare with,
 * a fat binary holding any SASS is `fatbin`. */
#ifndef GT_SHIM_IMAGE_H
#define GT_SHIM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

/* 0xBA55ED50 and 0x466243B1 (fatbinary_section.h's FATBINC_MAGIC). */
#define GT_FATBIN_MAGIC 0xBA55ED50u
#define GT_FATBIN_WRAPPER_MAGIC 0x466243B1u

/* The kind of the image at `image` and its size in *bytes (0 when
 * unknown). `avail` bounds every read: a file's size, or SIZE_MAX for an
 * image in memory, whose headers are then trusted as the driver trusts
 * them. `device_sm`: the device's compute capability as major * 10 +
 * minor, 0 when unknown. */
enum gt_image_kind gt_image_classify(const void *image, size_t avail, unsigned device_sm,
                                     uint64_t *bytes);

#endif
