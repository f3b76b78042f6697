/* A mutex held across fork(): a fork while another thread holds it would
 * leave it held for ever in the child (whose one thread may then need it).
 * GT_FORK_LOCK(lock) registers, at load, handlers that take `lock` before
 * fork and give it back after, in parent and child. */
#ifndef GT_SHIM_FORK_LOCK_H
#define GT_SHIM_FORK_LOCK_H

#include <pthread.h>

#define GT_FORK_LOCK(lock)                                                                         \
    static void lock##_before_fork(void)                                                           \
    {                                                                                              \
        pthread_mutex_lock(&(lock));                                                               \
    }                                                                                              \
    static void lock##_after_fork(void)                                                            \
    {                                                                                              \
        pthread_mutex_unlock(&(lock));                                                             \
    }                                                                                              \
    __attribute__((constructor)) static void lock##_fork_handlers(void)                            \
    {                                                                                              \
        pthread_atfork(lock##_before_fork, lock##_after_fork, lock##_after_fork);                  \
    }

#endif
