/* Capture state shared by capture.c and capture_api.c. */
#ifndef GTEMU_EMU_CAPTURE_H
#define GTEMU_EMU_CAPTURE_H

#include "emu_stream.h"

#define GT_THREAD_CAPTURES 8

/* Guards capture state: the list of active captures, their status, the
 * streams' capture pointers and dependency sets. */
extern pthread_mutex_t gt_capture_lock;
extern struct gt_capture *gt_active_captures;
extern _Atomic int gt_global_captures;

/* Captures begun by the calling thread in a mode other than relaxed. */
void gt_capture_thread_add(struct gt_capture *cap);
void gt_capture_thread_remove(struct gt_capture *cap);
CUstreamCaptureMode gt_capture_exchange_mode(CUstreamCaptureMode mode);
/* The active capture with this id (capture lock held). */
struct gt_capture *gt_capture_find(unsigned long long id);
/* Sets (or, with append, extends without duplicates) a dependency set. */
bool gt_deps_set(struct gt_node ***deps, size_t *n, size_t *cap, struct gt_node *const *from,
                 size_t count, bool append);

#endif
