/* The native call stack on the hot path (unwind.c): the return addresses
 * past this library and the CUDA libraries, read with the objects' call
 * frame information (cfi.h), which -O2 code without frame pointers has
 * too. Each return address's rule is worked out once and cached, so a
 * walk costs a cache lookup and a load or two per frame. */
#ifndef GT_UNWIND_H
#define GT_UNWIND_H

#include <stdint.h>

#include "stack_table.h"

/* Frames a walk goes through at most, this library's and the CUDA
 * libraries' included. */
#define GT_UNWIND_MAX_FRAMES 48u

/* The calling thread's stack into s (lang GT_STACK_NATIVE, depth, pc[]):
 * the return addresses from the first frame outside this library and the
 * CUDA libraries, up to GT_STACK_FRAMES, or up to a frame marked as the
 * user's own (gt_unwind_mark_user). x86-64 only: elsewhere depth stays 0. */
void gt_unwind_native(gt_stack *s);

/* Off the hot path: the frame at return address pc is the user's own
 * (its caller is not needed to name the site), so later walks stop
 * there and their stacks are shorter. */
void gt_unwind_mark_user(uintptr_t pc);

/* The index of the module (modules.h) holding return address pc, as the
 * walk registered it; GT_MODULE_NONE when unknown. */
uint32_t gt_unwind_module_of(uintptr_t pc);

#endif
