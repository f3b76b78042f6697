/* The process as every layer of the shim sees it: when it started, the
 * names its records refer to, whether it has made a CUDA call, and the
 * few steps of the library's top (init.c) that a lower layer must be able
 * to take.
 *
 * Those steps are upcalls: declared here, defined by init.c (or by a
 * test's stand-in), never reached through an include of init.c's own
 * header. They are the places where a layer below must act for the whole
 * process: a hook that runs before the library's constructor, the GPU
 * timing's exit handler that must run before the CUDA runtime's, and its
 * fork handler. */
#ifndef GT_PROCESS_H
#define GT_PROCESS_H

#include <stdatomic.h>
#include <stdint.h>

#include "strtab.h"

/* CLOCK_MONOTONIC ns when this process (or forked child) started
 * (process_state.c; set by init.c). */
extern uint64_t gt_process_start_ns;

/* Interned names shared by hooks and report (one table per process,
 * created on first use; NULL without memory). */
gt_strtab *gt_names(void);

/* Hooks note every intercepted CUDA call (hooks/hook.h): a process that
 * made one reports at exit even with nothing recorded, and gets a drain
 * thread so that SIGINT/SIGTERM can make that report. gt_cuda_used is
 * GT_CUDA_USED once noted: then one relaxed load and one branch per call.
 * Any other value takes the slow path (init.c), which notes the call in
 * the active copy, or sets GT_CUDA_PASS_THROUGH in an inactive one
 * (active_copy.c), whose wrappers then call the real function and nothing
 * else. */
enum { GT_CUDA_UNSEEN, GT_CUDA_USED, GT_CUDA_PASS_THROUGH };
extern _Atomic int gt_cuda_used;
/* Returns 0 when the call must only pass through. Upcall (init.c). */
int gt_note_cuda_call_slow(void);

/* Runs the constructor's work if it has not run yet (a hook called before
 * the shim's constructor). Upcall (init.c). */
void gt_init_once(void);

/* The cut: the report's GPU part is finished. Safe from any thread, any
 * number of times; waits at most GT_FINISH_WAIT_MS and keeps errno. The
 * GPU timing calls it from an atexit handler registered after the CUDA
 * runtime initialised, so that it runs before the runtime tears contexts
 * down (DESIGN §5). Upcall (init.c). */
void gt_exit_cut(void);

/* Functions run in a forked child after the shim's own reset, in the order
 * added (at load; up to GT_ATFORK_MAX). Returns -1 when full. Upcall
 * (init.c). */
#define GT_ATFORK_MAX 16
int gt_atfork_child_add(void (*fn)(void));

#endif
