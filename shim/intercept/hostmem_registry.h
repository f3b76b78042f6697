/* The address ranges of page-locked and managed host memory the program
 * holds, fed by the allocation hooks, read by every copy (hostmem.c) to
 * classify its host side without asking the driver.
 *
 * Ranges never overlap: a new range replaces every range it overlaps (the
 * driver could hand those addresses out again only once they were freed,
 * through a path the shim did not see). A range is removed by its start
 * address, as the APIs free it.
 *
 * Lookups are lock-free (a sequence lock over a sorted array: a reader
 * retries while a writer changes it) and make no system call; writers
 * take a mutex. An array that grows is replaced and the old one kept
 * until gt_hostmem_reset (a reader may still be in it): with doubling,
 * those add up to less than the current array. At most
 * GT_HOSTMEM_MAX_RANGES ranges are held. */
#ifndef GT_SHIM_HOSTMEM_REGISTRY_H
#define GT_SHIM_HOSTMEM_REGISTRY_H

#include <stdint.h>

#include "event.h"

#define GT_HOSTMEM_MAX_RANGES (1u << 20)

/* Adds [start, start + bytes) of `kind` (GT_HOST_PINNED or GT_HOST_MANAGED).
 * Returns 0, or -1 when the range cannot be held (no memory, the cap, an
 * empty range): lookups in it then miss. */
int gt_hostmem_add(uintptr_t start, uint64_t bytes, enum gt_host_mem kind);

/* Removes the range that starts at `start`; returns its kind, or
 * GT_HOST_NONE when there is none. */
enum gt_host_mem gt_hostmem_remove(uintptr_t start);

/* The kind of the range holding `addr`, GT_HOST_NONE when none does.
 * *version receives the registry's version the answer belongs to (it
 * changes with every add and remove), or GT_HOSTMEM_BUSY when writers kept
 * the lookup from finishing: the answer is then GT_HOST_NONE and unsure. */
#define GT_HOSTMEM_BUSY UINT32_MAX
enum gt_host_mem gt_hostmem_lookup(uintptr_t addr, uint32_t *version);

/* Forgets every range (lookups may be running: the arrays stay). */
void gt_hostmem_clear(void);

/* Ranges held now. */
uint32_t gt_hostmem_count(void);

/* Forgets every range and frees every array (no reader may be running). */
void gt_hostmem_reset(void);

#endif
