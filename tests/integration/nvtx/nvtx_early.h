/* libgt_nvtx_early.so: a library whose static initialiser uses NVTX, so
 * that the first NVTX call of the process comes before main and before the
 * constructor of a preloaded tool (a program's libraries are initialised
 * before the preloaded ones). */
#ifndef NVTX_EARLY_H
#define NVTX_EARLY_H

#include <stdint.h>

typedef struct nvtx_early_range {
    uint64_t t0, t1, t2, t3; /* CLOCK_MONOTONIC: before and after the push, the pop */
    int level;               /* what the push returned */
} nvtx_early_range;

/* The range "static init" the initialiser pushed and popped. */
nvtx_early_range nvtx_early_info(void);

#endif
