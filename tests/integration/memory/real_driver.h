/* The driver's own entry points, found without dlsym: a call through them
 * reaches libcuda.so.1 directly, unseen by any library interposed on the
 * program (as memory allocated before a tracer was loaded is unseen). */
#ifndef GT_TEST_REAL_DRIVER_H
#define GT_TEST_REAL_DRIVER_H

/* libcuda.so.1's definition of `name` (the program must have loaded the
 * driver), or NULL. */
void *real_driver_symbol(const char *name);

#endif
