/* What the allocation wrappers (drv_memory.c, rt_memory.c, drv_vmm.c) put
 * into a call: the kind of memory, and the address and size the call
 * named or returned. */
#ifndef GT_ALLOC_HOOK_H
#define GT_ALLOC_HOOK_H

#include <stdint.h>

#include "event.h"
#include "hook.h"

/* The kind, and the address when the call names it (a free). */
static inline void gt_call_mem(gt_call *c, enum gt_mem_kind kind, uint64_t addr)
{
    c->u.mem.mem_kind = (uint8_t)kind;
    c->u.mem.addr = addr;
}

/* What a successful allocation returned. */
static inline void gt_call_allocated(gt_call *c, uint64_t addr, uint64_t bytes)
{
    c->u.mem.addr = addr;
    c->bytes = bytes;
}

/* A pitched allocation: rows of `pitch` bytes. */
static inline uint64_t gt_pitched_bytes(uint64_t pitch, uint64_t height)
{
    return pitch * height;
}

#define GT_PTR_ID(p) ((uint64_t)(uintptr_t)(p))

#endif
