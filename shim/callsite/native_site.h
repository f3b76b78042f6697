/* The site of a native call stack (native_site.c): its first frame that is
 * the user's, named off the hot path. */
#ifndef GT_NATIVE_SITE_H
#define GT_NATIVE_SITE_H

#include "callsite_table.h"
#include "stack_table.h"

/* The site of stack s into out (string ids in the process's names).
 * Reads the objects' files the first time each is needed. */
void gt_native_site(const gt_stack *s, gt_site *out);

/* Whether a function's name (mangled or plain) is code the CUDA toolchain
 * put in the program: nvcc's launch stubs (__device_stub__...), the static
 * CUDA runtime (cudaXxx, __cudaXxx, cudart::, libcudart_static_...),
 * cuda_runtime.h's inline helpers (cudaMalloc<T>, __cudaLaunchKernel_helper). */
int gt_native_glue(const char *symbol);

#endif
