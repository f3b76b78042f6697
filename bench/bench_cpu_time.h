/* The calling thread's CPU time, for figures per core: unlike the wall
 * clock, it does not count the time other work on a shared machine holds
 * the core. */
#ifndef GT_BENCH_CPU_TIME_H
#define GT_BENCH_CPU_TIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t bench_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
