/* Call sites of GPU work and allocations (SPEC §12 GPUTRACE_CALLSITES):
 * where in the program each kernel launch, copy, memset and allocation was
 * made, in Python or native code.
 *
 * On the hot path (callsite.c) a record gets the id of the call stack
 * taken for it (stack_table.h): Python frames read from memory
 * (python_walk.h), or native return addresses (unwind.h). Every call of a
 * kernel, copy or memset is attributed while its name is new (its first
 * GT_CALLSITE_EXACT_CALLS calls in the process), then one call in
 * GT_CALLSITE_SAMPLE_MEAN on average, at random (the calls between are
 * marked skipped, so that the report can scale the sample up); every
 * allocation is attributed. Off the hot path the drain resolves each id
 * once into a site and its label (callsite_resolve.c). */
#ifndef GT_CALLSITE_H
#define GT_CALLSITE_H

#include <stdint.h>

#include "callsite_table.h"
#include "compiler.h"
#include "config.h"
#include "event.h"

#define GT_CALLSITE_EXACT_CALLS 256u
#define GT_CALLSITE_SAMPLE_MEAN 8u

/* Which sites are taken: GT_CALLSITE_PYTHON | GT_CALLSITE_NATIVE, or 0
 * when off. Written at load, before any thread of the shim exists. */
#define GT_CALLSITE_PYTHON 1u
#define GT_CALLSITE_NATIVE 2u
extern unsigned gt_callsite_modes;

/* At load: the mode and the packages to pass over (cfg must outlive the
 * process: it is the process's configuration). */
void gt_callsite_init(const gt_config *cfg);

/* A record about to be committed (kind, name, flags, result set): its
 * `site`. The one test hooks make when call sites are off is the inline
 * one here. */
void gt_callsite_take(gt_event *ev);
static inline void gt_callsite_note(gt_event *ev)
{
    if (GT_UNLIKELY(gt_callsite_modes)) gt_callsite_take(ev);
}

/* The stack id of where the calling thread is now, whatever the sampling
 * decided for its record: for what must name its site each time (a
 * copy's checksum, checksum.h). 0 when call sites are off or no stack was
 * had. */
uint32_t gt_callsite_stack_now(void);

/* On the draining thread: the string id of the label of the site a
 * record's stack id names (GT_SITE_ID of its `site`), resolving it the
 * first time, and the site into *site; 0 when it names none. */
uint32_t gt_callsite_resolve(uint32_t stack_id, const gt_site **site);

/* In a forked child: locks another thread of the parent held are let go. */
void gt_callsite_fork_child(void);

#endif
