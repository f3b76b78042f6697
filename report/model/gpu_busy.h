/* GPU busy time: the length of the union of every GPU interval (all
 * devices and streams), and the idle gaps between them, in bounded memory.
 *
 * Records arrive roughly, not exactly, in time order (each thread's records
 * in order, threads interleaved by the drain). The latest
 * GT_GPU_BUSY_WINDOW disjoint merged intervals are kept sorted; when there
 * are more, the earliest is retired: its length is added to the total and
 * its end becomes the horizon. An interval arriving later than that with a
 * start before the horizon is clipped to it, so busy time is never counted
 * twice; what is lost is the part of such a late interval lying in an idle
 * gap that was already retired (the clipped time is kept in clipped_ns).
 * The result is exact whenever records are less than GT_GPU_BUSY_WINDOW
 * merged intervals out of order.
 *
 * Capture windows: work between them was not recorded, so a gap that
 * spans the opening of a window (a fence) is not an idle gap seen. The
 * fences after the horizon are kept, at most GT_GPU_BUSY_FENCES (past it
 * the oldest go, and a gap across one of them counts as idle).
 *
 * Each idle gap has a cause (enum gt_gap_cause): the GPU waited for code
 * when compiles or module loads (their host times, given as they come)
 * covered at least half of it; for the program's start when it ended by
 * the first kernel's start; else it is idle the program could fill. Code
 * intervals are kept merged, at most GT_GPU_BUSY_CODE_SPANS (later ones
 * are not known as such); a gap is judged when it leaves the window, by
 * which time the compile before its next kernel has come in. */
#ifndef GT_GPU_BUSY_H
#define GT_GPU_BUSY_H

#include <stdbool.h>
#include <stdint.h>

#define GT_GPU_BUSY_WINDOW 1024u
#define GT_GPU_IDLE_GAP_NS 1000000ull /* SPEC §8 gpu-idle: gaps over 1 ms */
#define GT_GPU_BUSY_FENCES 4096u
#define GT_GPU_BUSY_CODE_SPANS 4096u

enum gt_gap_cause {
    GT_GAP_IDLE,    /* between work, nothing else to account for it */
    GT_GAP_CODE,    /* while code was compiled or loaded */
    GT_GAP_STARTUP, /* before the first kernel */
    GT_GAP_CAUSES
};

typedef struct gt_interval {
    uint64_t start;
    uint64_t end;
} gt_interval;

/* Idle gaps longer than GT_GPU_IDLE_GAP_NS between GPU work. */
typedef struct gt_gpu_gaps {
    uint64_t count;
    uint64_t total_ns;
    uint64_t largest_ns;
    uint64_t largest_start; /* when the largest gap began (end of the work before it) */
} gt_gpu_gaps;

typedef struct gt_gpu_busy {
    gt_interval *ring; /* 2 * GT_GPU_BUSY_WINDOW slots, allocated on first use */
    uint32_t head;
    uint32_t n;
    bool retired_any;
    uint64_t horizon; /* end of the last retired interval */
    uint64_t retired_ns;
    uint64_t clipped_ns;
    uint64_t intervals; /* intervals added */
    gt_gpu_gaps retired_gaps[GT_GAP_CAUSES];
    uint64_t *fences; /* sorted; allocated on first use */
    uint32_t nfences;
    gt_interval *code; /* compiles and module loads, merged, sorted; allocated on first use */
    uint32_t ncode;
    uint64_t first_kernel; /* the earliest kernel's start; 0: none yet */
} gt_gpu_busy;

void gt_gpu_busy_add(gt_gpu_busy *b, uint64_t start, uint64_t end);
void gt_gpu_busy_free(gt_gpu_busy *b);

/* A capture window opened at `time`: no idle gap is counted across it. */
void gt_gpu_busy_fence(gt_gpu_busy *b, uint64_t time);
uint64_t gt_gpu_busy_ns(const gt_gpu_busy *b);
/* A compile or a module load took the host [start, end). */
void gt_gpu_busy_code(gt_gpu_busy *b, uint64_t start, uint64_t end);
/* A kernel started on the GPU at `start`. */
void gt_gpu_busy_kernel(gt_gpu_busy *b, uint64_t start);
/* The gaps over GT_GPU_IDLE_GAP_NS, by cause. */
void gt_gpu_busy_gaps(const gt_gpu_busy *b, gt_gpu_gaps out[GT_GAP_CAUSES]);

#endif
