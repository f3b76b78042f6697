/* What init.c, the library's top, gives the other files of the top
 * (exec.c, signals.c): the end steps and whose process this is. */
#ifndef GT_INIT_H
#define GT_INIT_H

/* The final report: the cut if not made, then the summary and the files.
 * Safe from any thread, any number of times; waits at most
 * GT_FINISH_WAIT_MS and keeps errno. */
void gt_exit_final(void);

/* Before an exec: a report of everything so far; recording goes on. */
void gt_exec_report(void);

/* Whether the calling process is the one the shim records for: not a
 * vfork child, nor one made by clone without the fork handlers. Touches
 * nothing (safe in a vfork child). */
int gt_own_process(void);

#endif
