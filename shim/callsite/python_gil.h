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

/* 1 when the calling thread is inside a release of the GIL it made
 * through a routed call and has not taken the GIL back: *id is then the
 * stack id of the site it had at the release (0 when none could be had).
 * A few loads of its own and one call to the interpreter. */
int gt_python_released(uint32_t *id);

/* The calling thread released the GIL without a routed call: objects
 * loaded since the last look are looked at, for the next calls (at the
 * thread's first such call, then at one in 64). */
void gt_python_release_unseen(void);

/* In a forked child: a look at the objects another thread of the parent
 * was making is abandoned. */
void gt_python_gil_fork_child(void);

#endif
