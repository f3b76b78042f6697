/* The Python call site of the calling thread (python_walk.c): the user's
 * innermost frame, read from the thread's own frame stack in memory while
 * it holds the GIL. */
#ifndef GT_PYTHON_WALK_H
#define GT_PYTHON_WALK_H

#include <stdint.h>

/* Whether the process runs a CPython this reader knows (3.9 to 3.13, not
 * a free-threaded build): its symbols are looked up the first time. */
int gt_python_present(void);

/* Where the calling thread stands with the interpreter: no Python (no
 * thread state of its own, or the interpreter is starting or ending),
 * holding the GIL, or with a thread state that released it. Cheap: the
 * thread's own state and the attached one, looked up without a lock. */
enum gt_py_thread { GT_PY_NO_PYTHON, GT_PY_HOLDS_GIL, GT_PY_RELEASED_GIL };
enum gt_py_thread gt_python_thread(void);

/* The stack id (stack_table.h) of the thread's site: a stack of lang
 * GT_STACK_PYTHON (file, line, function, via). 0, reading no frame, unless
 * the thread holds the GIL and runs Python code. */
uint32_t gt_python_site_id(void);

/* The same, for a thread about to release the GIL: called only from its
 * PyEval_SaveThread (python_gil.c), which the interpreter allows only to
 * the thread that holds the GIL, so the state attached now is the
 * thread's own. */
uint32_t gt_python_site_id_releasing(void);

/* The thread state attached now (the GIL holder's before 3.12, the calling
 * thread's from 3.12); NULL without Python. One call, no lock. */
const void *gt_python_attached(void);

/* GPUTRACE_CALLSITES_SKIP: packages to pass over beyond the stack's own
 * (python_paths.h). Set at load; the string must stay. */
void gt_python_set_skip(const char *extra);

/* In a forked child: a cache update another thread of the parent was
 * making is abandoned. */
void gt_python_fork_child(void);

#endif
