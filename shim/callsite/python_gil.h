/* Python sites of threads that released the GIL (python_gil.c): taken
 * when the thread released it, while it still held it. */
#ifndef GT_PYTHON_GIL_H
#define GT_PYTHON_GIL_H

#include <stdint.h>

/* In a process whose Python sites are asked for, at the first record and
 * each time the interpreter loads an extension module: the calls of
 * PyEval_SaveThread and PyEval_RestoreThread that objects loaded since the
 * last look make are routed through this library. */
void gt_python_gil_watch(void);

/* The stack id of the Python site the calling thread had when it last
 * released the GIL through a routed call, while it has not taken it back;
 * 0 when there is none (a release this library did not see: objects
 * loaded since are then looked at again, for the next calls). */
uint32_t gt_python_released_site(void);

/* In a forked child: a look at the objects another thread of the parent
 * was making is abandoned. */
void gt_python_gil_fork_child(void);

#endif
