/* Describing a module load (the `module` category): the image's kind and
 * size (image.h) against the architecture of the device that will run it.
 * Called before the real call, so that the look at the image stays out of
 * the load's measured time; errno is kept. */
#ifndef GT_SHIM_HOOKS_MODULE_H
#define GT_SHIM_HOOKS_MODULE_H

#include <stdint.h>

#include "event.h"
#include "hook.h"

/* An image in memory (PTX text, cubin, fat binary or nvcc's wrapper). */
void gt_module_describe(gt_call *c, const void *image);

/* An image in a file (cuModuleLoad, cuLibraryLoadFromFile...). */
void gt_module_describe_file(gt_call *c, const char *path);

/* The kind and size of an image in a file, for links. */
enum gt_image_kind gt_module_file_kind(const char *path, uint64_t *bytes);

/* PTX text a compiler library handed the program (nvrtcGetPTX,
 * nvvmGetCompiledResult), remembered so that a later load of the same
 * text says where it came from (ptx_origin.c). */
void gt_ptx_produced(const char *ptx, enum gt_ptx_source source);

/* Where the PTX text of `bytes` bytes at ptx came from: a compiler of this
 * process, else GT_PTX_FROM_MEMORY. */
enum gt_ptx_source gt_ptx_source_of(const char *ptx, uint64_t bytes);

/* The compute capability (major * 10 + minor) of the current context's
 * device, else of device 0; 0 when the driver cannot say. */
unsigned gt_module_device_sm(void);

#endif
