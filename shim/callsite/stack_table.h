/* The call stacks taken on the hot path, each named by a small id that a
 * record carries in its `site` field until the drain resolves it
 * (stack_table.c). A native stack is the return addresses past the CUDA
 * libraries and this library; which of them is the user's is decided off
 * the hot path (native_site.c). A Python stack is already the site: the
 * user's frame, read as strings once per code object (python_walk.c). */
#ifndef GT_STACK_TABLE_H
#define GT_STACK_TABLE_H

#include <stdint.h>

#define GT_STACK_FRAMES 8u /* return addresses kept past the CUDA libraries */
/* Stacks the table holds; ids run from 1 to this. Past it a call gets the
 * site GT_STACK_OVERFLOW, which the report shows as one site. */
#define GT_STACK_TABLE_SLOTS (1u << 16)
#define GT_STACK_OVERFLOW (GT_STACK_TABLE_SLOTS + 1u)

enum gt_stack_lang { GT_STACK_NONE, GT_STACK_NATIVE, GT_STACK_PYTHON };

typedef struct gt_stack {
    uint8_t lang;  /* enum gt_stack_lang */
    uint8_t depth; /* native: return addresses in pc[] (0: none could be read) */
    /* Python: string ids of the file, the function's qualified name, and
     * what it called (the library function the line reached CUDA through,
     * "package.name"; 0 when it called CUDA directly), and the line. */
    uint32_t file, function, via;
    int32_t line;
    uintptr_t pc[GT_STACK_FRAMES];
} gt_stack;

/* The id of a stack (made from a zeroed gt_stack: it is compared whole,
 * padding included), adding it
 * when new: lock-free, from any thread. GT_STACK_OVERFLOW when the table is
 * full, 0 when it could not be made (no memory). */
uint32_t gt_stack_id(const gt_stack *s);

/* The stack of an id, NULL for an unknown one (or GT_STACK_OVERFLOW). */
const gt_stack *gt_stack_get(uint32_t id);

#endif
