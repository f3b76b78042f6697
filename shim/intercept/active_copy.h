/* One active copy of libgputrace.so per process (active_copy.c). */
#ifndef GT_ACTIVE_COPY_H
#define GT_ACTIVE_COPY_H

/* Whether this copy is the process's active one (decided once). */
int gt_copy_active(void);

/* In an inactive copy, the active copy's definition of `name`; else NULL. */
void *gt_copy_active_symbol(const char *name);

/* In an inactive copy, one debug line saying that it passes calls through. */
void gt_copy_describe(void);

#endif
