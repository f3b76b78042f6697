/* What every layer of the shim reads about the process: when it started
 * and the one table of interned names that records' string ids refer to. */
#include "process.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "strtab.h"

/* Set by init.c at load and in a forked child. Programs that drive the
 * pipeline without init.c (tests, benchmarks) leave it 0: their trace's
 * times count from CLOCK_MONOTONIC's zero. */
uint64_t gt_process_start_ns;

static _Atomic(gt_strtab *) names; /* CAS acq_rel on creation */

gt_strtab *gt_names(void)
{
    gt_strtab *t = atomic_load_explicit(&names, memory_order_acquire);
    if (GT_LIKELY(t)) return t;
    gt_strtab *fresh = gt_strtab_create();
    if (!fresh) return NULL;
    if (atomic_compare_exchange_strong_explicit(&names, &t, fresh, memory_order_acq_rel,
                                                memory_order_acquire))
        return fresh;
    gt_strtab_destroy(fresh);
    return t;
}
