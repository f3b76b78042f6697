/* The Python call site of the calling thread (python_walk.c): the user's
 * innermost frame, read from the thread's own frame stack in memory. */
#ifndef GT_PYTHON_WALK_H
#define GT_PYTHON_WALK_H

#include "stack_table.h"

/* Whether the process runs a CPython this reader knows (3.9 to 3.13, not
 * a free-threaded build): its symbols are looked up the first time. */
int gt_python_present(void);

/* Whether the calling thread is running Python code now: it has a thread
 * state with a current frame, and the interpreter is neither starting nor
 * ending. Cheap: a lookup of the thread's state and a few loads. */
int gt_python_running(void);

/* The site into s (lang GT_STACK_PYTHON: file, line, function, via).
 * Returns 0 when the thread runs no Python code now. */
int gt_python_site(gt_stack *s);

/* GPUTRACE_CALLSITES_SKIP: packages to pass over beyond the stack's own
 * (python_paths.h). Set at load; the string must stay. */
void gt_python_set_skip(const char *extra);

/* In a forked child: a cache update another thread of the parent was
 * making is abandoned. */
void gt_python_fork_child(void);

#endif
